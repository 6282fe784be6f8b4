"""The keep rule of recall: boosts reorder and lift, but a strong semantic match for the query is never cut."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rapport.domain.recall import Placed, keeping_best_by_meaning, placed_order, strong_by_meaning


def _placed(rows: list[tuple[str, float, float]]) -> list[Placed]:
    return placed_order(Placed(i, score, similarity) for i, score, similarity in rows)


def _by_meaning(placed: list[Placed]) -> list[str]:
    return [p.memory_id for p in sorted(placed, key=lambda p: (-p.similarity, p.memory_id))]


def test_the_query_s_best_match_is_strong_below_the_absolute_cut() -> None:
    # MiniLM puts a paraphrase at 0.3..0.4 from its question: the best there is counts, a near-best too
    assert strong_by_meaning(0.35, best=0.35, min_similarity=0.4, margin=0.1)
    assert strong_by_meaning(0.32, best=0.38, min_similarity=0.4, margin=0.1)
    # ...but not one well short of the best, nor one below the floor however close to the best
    assert not strong_by_meaning(0.32, best=0.55, min_similarity=0.4, margin=0.1)
    assert not strong_by_meaning(0.25, best=0.25, min_similarity=0.4, margin=0.1)
    # at or above the cut it is strong whatever the best
    assert strong_by_meaning(0.41, best=0.9, min_similarity=0.4, margin=0.1)


def test_a_best_match_below_the_cut_is_kept_among_boosted_decoys() -> None:
    # Given: the fact (cosine 0.36, the best) scores below ten decoys that share the query's words
    decoys = [(f"d{n}", 0.8 - n / 100, 0.2) for n in range(10)]
    placed = _placed([("fact", 0.45, 0.36), *decoys])

    # When: the five best are chosen
    chosen = keeping_best_by_meaning(placed, 5, _by_meaning(placed), share=0.5, min_similarity=0.4, margin=0.1)

    # Then: it takes the place of the lowest decoy, shown at its own score (last)
    assert [p.memory_id for p in chosen] == ["d0", "d1", "d2", "d3", "fact"]
    # and without the margin it would have been buried, which is what the rule is for
    without = keeping_best_by_meaning(placed, 5, _by_meaning(placed), share=0.5, min_similarity=0.4, margin=0.0)
    assert "fact" not in [p.memory_id for p in without]


def test_when_nothing_matches_by_meaning_the_boosts_decide() -> None:
    placed = _placed([(f"d{n}", 0.8 - n / 100, 0.15 + n / 1000) for n in range(10)])
    chosen = keeping_best_by_meaning(placed, 5, _by_meaning(placed), share=0.5, min_similarity=0.4, margin=0.1)
    assert chosen == placed[:5]


rows = st.lists(
    st.tuples(st.floats(0, 2), st.floats(-1, 1)),
    min_size=1,
    max_size=40,
)


@given(rows, st.integers(1, 12), st.floats(0, 1), st.floats(0, 1), st.floats(0, 0.3))
def test_every_strong_reserved_match_is_returned_and_order_is_by_score(
    values: list[tuple[float, float]], limit: int, share: float, min_similarity: float, margin: float
) -> None:
    placed = _placed([(f"m{n:02d}", round(score, 6), round(sim, 6)) for n, (score, sim) in enumerate(values)])
    by_meaning = _by_meaning(placed)
    chosen = keeping_best_by_meaning(placed, limit, by_meaning, share, min_similarity, margin)
    best = placed[[p.memory_id for p in placed].index(by_meaning[0])].similarity
    similar = {p.memory_id: p.similarity for p in placed}
    reserved = [
        i for i in by_meaning[: int(limit * share)] if strong_by_meaning(similar[i], best, min_similarity, margin)
    ]
    ids = [p.memory_id for p in chosen]
    assert len(chosen) == min(limit, len(placed))
    assert set(reserved) <= set(ids)
    assert chosen == placed_order(chosen)
    # nothing is returned over a better-scored candidate unless it is a reserved one
    cut = {p.memory_id for p in placed[:limit]}
    assert all(i in cut or i in reserved for i in ids)
