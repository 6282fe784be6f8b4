"""The keep rule of recall: boosts reorder and lift, but a strong semantic match for the query is never cut."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import example, given
from hypothesis import strategies as st

from rapport.domain.recall import (
    KEYWORD_TIE,
    Crowds,
    Placed,
    RecallScoring,
    crowds_of,
    keeping_best_by_meaning,
    lifted_over,
    placed_order,
    query_evidence,
    strong_by_meaning,
)
from rapport.domain.scoring import ContextBoost, RecallSignals
from rapport.settings import Settings


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


def test_a_strong_match_as_close_as_the_best_is_kept_as_the_best_is() -> None:
    # Given: ten decoys that share the question's words above two facts a hundredth apart by cosine, the reserve
    # (a fifth of five) keeping only the closest
    decoys = [(f"d{n}", 0.8 - n / 100, 0.20) for n in range(10)]
    placed = _placed([("best", 0.45, 0.385), ("tied", 0.44, 0.378), *decoys])
    by_meaning = _by_meaning(placed)
    # When the tie is within a hundredth, both are kept; without it only the closest
    ids = {p.memory_id for p in keeping_best_by_meaning(placed, 5, by_meaning, 0.2, 0.4, 0.1, tie=0.01)}
    assert {"best", "tied"} <= ids
    ids = {p.memory_id for p in keeping_best_by_meaning(placed, 5, by_meaning, 0.2, 0.4, 0.1)}
    assert "best" in ids and "tied" not in ids


def test_when_nothing_matches_by_meaning_the_boosts_decide() -> None:
    placed = _placed([(f"d{n}", 0.8 - n / 100, 0.15 + n / 1000) for n in range(10)])
    chosen = keeping_best_by_meaning(placed, 5, _by_meaning(placed), share=0.5, min_similarity=0.4, margin=0.1)
    assert chosen == placed[:5]


rows = st.lists(
    st.tuples(st.floats(0, 2), st.floats(-1, 1)),
    min_size=1,
    max_size=40,
)


@given(rows, st.integers(1, 12), st.floats(0, 1), st.floats(0, 1), st.floats(0, 0.3), st.sampled_from([0.0, 0.01, 0.1]))
def test_every_strong_reserved_match_is_returned_and_order_is_by_score(
    values: list[tuple[float, float]], limit: int, share: float, min_similarity: float, margin: float, tie: float
) -> None:
    placed = _placed([(f"m{n:02d}", round(score, 6), round(sim, 6)) for n, (score, sim) in enumerate(values)])
    by_meaning = _by_meaning(placed)
    chosen = keeping_best_by_meaning(placed, limit, by_meaning, share, min_similarity, margin, tie)
    best = placed[[p.memory_id for p in placed].index(by_meaning[0])].similarity
    similar = {p.memory_id: p.similarity for p in placed}
    strong = [i for i in by_meaning if strong_by_meaning(similar[i], best, min_similarity, margin)]
    # the strong ones among the first share x limit by cosine, and (up to the limit) those within `tie` of the best
    reserved = [i for i in strong if i in by_meaning[: int(limit * share)]]
    reserved += [i for i in strong[:limit] if similar[i] >= best - tie and i not in reserved] if tie > 0 else []
    ids = [p.memory_id for p in chosen]
    assert len(chosen) == min(limit, len(placed))
    assert set(reserved) <= set(ids)
    assert chosen == placed_order(chosen)
    # nothing is returned over a better-scored candidate unless it is a reserved one
    cut = {p.memory_id for p in placed[:limit]}
    assert all(i in cut or i in reserved for i in ids)


def _evidenced(rows: list[tuple[str, float, float, float, float]]) -> list[Placed]:
    """(id, score, cosine, query evidence, keyword share)."""
    return placed_order(Placed(i, score, sim, evidence=e, keyword=k) for i, score, sim, e, k in rows)


def test_a_strong_match_takes_the_place_of_a_hit_above_it_only_on_recency_and_importance() -> None:
    # Given: the fact is third by cosine (the reserve keeps the first two), below five memories that are less close
    # and share no word, lifted by recency and importance alone (what the query gives them is less)
    placed = _evidenced(
        [
            ("near1", 0.60, 0.33, 0.36, 0.0),
            ("near2", 0.59, 0.32, 0.35, 0.0),
            *[(f"recent{n}", 0.50 - n / 100, 0.28, 0.30, 0.0) for n in range(5)],
            ("fact", 0.40, 0.31, 0.34, 0.0),
        ]
    )

    chosen = keeping_best_by_meaning(placed, 5, _by_meaning(placed), share=0.4, min_similarity=0.4, margin=0.1)

    # Then: it is in, at its own score, in the place of the lowest of those
    assert [p.memory_id for p in chosen] == ["near1", "near2", "recent0", "recent1", "fact"]


def test_a_hit_the_query_gives_more_keeps_its_place() -> None:
    # Given: the same, but the hits above the fact owe their place to the query (keywords, their conversation)
    placed = _evidenced(
        [
            ("near1", 0.60, 0.33, 0.36, 0.0),
            ("near2", 0.59, 0.32, 0.35, 0.0),
            *[(f"worded{n}", 0.50 - n / 100, 0.28, 0.45, 0.5) for n in range(5)],
            ("fact", 0.40, 0.31, 0.34, 0.0),
        ]
    )

    chosen = keeping_best_by_meaning(placed, 5, _by_meaning(placed), share=0.4, min_similarity=0.4, margin=0.1)

    # Then: the boosts decide, as ranked
    assert chosen == placed[:5]


def test_keyword_evidence_a_crowd_shares_does_not_bury_a_closer_match() -> None:
    # Given: twelve near-identical memories share the question's one common word (relative BM25 gives each nearly
    # full weight), all less close than the fact, which shares no word
    crowd = [(f"same{n}", 0.70 - n / 100, 0.25, 0.55, 1.0 - n / 200) for n in range(12)]
    placed = _evidenced([("best", 0.75, 0.37, 0.28, 0.0), *crowd, ("fact", 0.40, 0.35, 0.27, 0.0)])

    chosen = keeping_best_by_meaning(placed, 10, _by_meaning(placed), share=0.1, min_similarity=0.4, margin=0.1)

    # Then: more near-ties than places is no evidence for any of them, so the fact takes the lowest one's place
    assert "fact" in [p.memory_id for p in chosen]
    assert "same8" not in [p.memory_id for p in chosen]
    # while as many as the answer has places (ten) pick them out: the keywords decide
    fewer = [p for p in placed if p.memory_id not in {"same10", "same11"}]
    kept = keeping_best_by_meaning(fewer, 10, _by_meaning(fewer), share=0.1, min_similarity=0.4, margin=0.1)
    assert "fact" not in [p.memory_id for p in kept]


def test_words_a_crowd_holds_do_not_keep_a_less_matching_hit_above_a_strong_match() -> None:
    # Given: twelve memories hold the question's one word "trip" (their shares differ with their lengths, so they are
    # no near-tie), each above the fact on that word: without it the query gives each less than the fact
    word = frozenset({"trip"})
    crowd = [
        Placed(f"trip{n}", 0.70 - n / 100, 0.25, evidence=0.30, keyword=1.0 - n / 20, terms=word, keyword_evidence=0.12)
        for n in range(12)
    ]
    fact = Placed("fact", 0.40, 0.36, evidence=0.26, keyword=0.0)
    placed = placed_order([*crowd, fact])

    chosen = keeping_best_by_meaning(placed, 10, _by_meaning(placed), share=0.0, min_similarity=0.4, margin=0.1)

    # Then: the fact takes the lowest one's place
    assert crowds_of(placed, 10) == Crowds(same_words=frozenset(p.memory_id for p in crowd))
    assert "fact" in [p.memory_id for p in chosen] and "trip9" not in [p.memory_id for p in chosen]
    # while as many as the answer has places pick them out: the word decides
    fewer = [p for p in placed if p.memory_id not in {"trip10", "trip11"}]
    kept = keeping_best_by_meaning(fewer, 10, _by_meaning(fewer), share=0.0, min_similarity=0.4, margin=0.1)
    assert "fact" not in [p.memory_id for p in kept]
    # and so does a meaning or a conversation that gives the crowd's members more than the fact beside the word
    closer = [p._replace(keyword_evidence=0.02) for p in crowd]
    again = placed_order([*closer, fact])
    kept = keeping_best_by_meaning(again, 10, _by_meaning(again), share=0.0, min_similarity=0.4, margin=0.1)
    assert "fact" not in [p.memory_id for p in kept]


def test_a_strong_match_ranked_in_is_not_taken_out_for_a_closer_one() -> None:
    # Given: two strong matches, the farther one ranked in on what the query does not give (recency, importance),
    # the closer one below the cut
    placed = _evidenced(
        [
            ("top", 0.9, 0.2, 0.6, 0.0),
            ("farther", 0.8, 0.41, 0.2, 0.0),
            ("closer", 0.3, 0.45, 0.25, 0.0),
        ]
    )

    chosen = keeping_best_by_meaning(placed, 2, _by_meaning(placed), share=0.0, min_similarity=0.4, margin=0.0)

    # Then: cosine alone does not say which of the two is the answer; the weaker hit gives its place if any does
    assert [p.memory_id for p in chosen] == ["top", "farther"]


def test_a_crowd_is_more_near_ties_at_the_best_keyword_share_than_places() -> None:
    placed = _evidenced(
        [(f"k{n}", 0.5, 0.2, 0.3, 1.0 - n * KEYWORD_TIE / 6) for n in range(6)] + [("low", 0.4, 0.2, 0.2, 0.5)]
    )
    assert crowds_of(placed, 5).tied == frozenset(f"k{n}" for n in range(6))
    assert crowds_of(placed, 6).tied == frozenset()
    # and no keyword match at all is no crowd
    assert not crowds_of(_evidenced([(f"z{n}", 0.5, 0.2, 0.3, 0.0) for n in range(9)]), 5)


def test_without_evidence_nothing_is_found_lifted() -> None:
    # An order by rank (no scores of its own) gives no evidence: the rule stays the reserve alone
    hit, match = Placed("a", -1.0, 0.2), Placed("b", -5.0, 0.6)
    assert not lifted_over(hit, match, Crowds())
    assert lifted_over(hit, match, Crowds(tied=frozenset({"a"})))  # a crowd's keyword share, and less close
    # holding the same words as a crowd needs evidence to weigh: without it, nothing
    assert not lifted_over(hit, match, Crowds(same_words=frozenset({"a"})))


def test_query_evidence_is_the_score_less_what_matching_nothing_scores() -> None:
    scoring = RecallScoring.of(Settings())
    w = scoring.weights
    signals = RecallSignals(
        similarity=0.5,
        keyword=0.4,
        matched_terms=("dog",),
        query_terms=3,
        age_days=0.0,
        importance=0.9,
        strength=1.0,
        relation=0.5,
        context=ContextBoost(conversation=0.1, answer=0.05),
    )
    expected = w.vector * 0.5 + w.keyword * 0.4 + 0.15
    assert abs(query_evidence(scoring, signals) - expected) < 2e-6
    # the whole of the score but what the memory scores matching nothing
    unmatched = replace(signals, similarity=0.0, keyword=0.0, matched_terms=(), context=ContextBoost())
    assert abs(query_evidence(scoring, signals) - (scoring.score(signals) - scoring.score(unmatched))) < 2e-6
    # an assistant's reply: what the query gives it is weighed as its score is
    weighed = replace(signals, speaker_weight=0.75)
    assert abs(query_evidence(scoring, weighed) - 0.75 * expected) < 2e-6
    # recency, importance, strength and the graph give none of it
    older = replace(signals, age_days=400.0, importance=0.1, strength=0.1, relation=0.0)
    assert abs(query_evidence(scoring, older) - expected) < 2e-6


evidenced_rows = st.lists(
    st.tuples(
        st.floats(0, 2),
        st.floats(-1, 1),
        st.floats(0, 2),
        st.sampled_from([0.0, 0.3, 0.95, 1.0]),
        st.sampled_from([frozenset(), frozenset({"a"}), frozenset({"a", "b"})]),
    ),
    min_size=1,
    max_size=40,
)


@given(evidenced_rows, st.integers(1, 12), st.floats(0, 1), st.floats(0, 1), st.floats(0, 0.3))
# A strong match ranked in is kept, whatever closer ones are left out.
@example(
    [(0.0, 0.0, 1.0, 0.3, frozenset()), (0.0, 1.0, 0.0, 0.3, frozenset()), (1.0, 0.0, 0.0, 0.0, frozenset())],
    1,
    0.0,
    0.0,
    0.0,
)
def test_no_strong_match_is_left_out_for_a_hit_lifted_over_it(
    values: list[tuple[float, float, float, float, frozenset[str]]],
    limit: int,
    share: float,
    min_similarity: float,
    margin: float,
) -> None:
    placed = placed_order(
        Placed(
            f"m{n:02d}",
            round(sc, 6),
            round(sim, 6),
            evidence=round(e, 6),
            keyword=k if words else 0.0,
            terms=words,
            keyword_evidence=round(min(e, 0.25 * k), 6) if words else 0.0,
        )
        for n, (sc, sim, e, k, words) in enumerate(values)
    )
    by_meaning = _by_meaning(placed)
    chosen = keeping_best_by_meaning(placed, limit, by_meaning, share, min_similarity, margin)
    similar = {p.memory_id: p.similarity for p in placed}
    best = similar[by_meaning[0]]
    strong = [i for i in by_meaning if strong_by_meaning(similar[i], best, min_similarity, margin)]
    reserved = set(strong) & set(by_meaning[: int(limit * share)])
    ids = [p.memory_id for p in chosen]
    crowds = crowds_of(placed, limit)
    assert len(chosen) == min(limit, len(placed))
    assert len(set(ids)) == len(ids)
    assert reserved <= set(ids)
    assert chosen == placed_order(chosen)
    # a strong match left out has no hit above it only on what the query does not give, but one kept (reserved, or
    # a strong match itself)
    by_id = {p.memory_id: p for p in placed}
    for left_out in (i for i in strong if i not in ids):
        for hit in chosen:
            if lifted_over(hit, by_id[left_out], crowds):
                assert hit.memory_id in reserved or hit.memory_id in strong
    # and with every reserved one ranked in, a strong match ranked in is never taken out for another
    ranked_in = {p.memory_id for p in placed[:limit]}
    if reserved <= ranked_in:
        assert {i for i in strong if i in ranked_in} <= set(ids)
    # and only a strong match is returned over a better-scored candidate
    cut = {p.memory_id for p in placed[:limit]}
    assert all(i in cut or i in strong for i in ids)
