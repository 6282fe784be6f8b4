"""Questions gathered across the history and the second recall pass: which questions call for it, the feedback
query, the fusion and the spread over sittings (rapport.domain.feedback)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rapport.domain.feedback import (
    asks_across,
    asks_inference,
    bridging_terms,
    feedback_vector,
    fused_order,
    spread_by_sitting,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "question",
    [
        "What activities does Melanie partake in?",
        "Which cities has Jon visited?",
        "How many times has she gone to the beach this year?",
        "What do Jon and Gina both have in common?",
        "What has Melanie painted?",
        "Where has Maria made friends?",
        "What are some changes she has faced?",
        "Has he ever been to Japan?",
    ],
)
def test_a_question_gathering_facts_asks_across_the_history(question: str) -> None:
    assert asks_across(question)


@pytest.mark.parametrize(
    "question",
    [
        "What did Caroline research?",
        "When did Melanie paint a sunrise?",
        "Where did she move from four years ago?",
        "What is Caroline's relationship status?",
        "What did Melanie paint recently?",
        "Who performed at the concert?",
    ],
)
def test_a_question_about_one_fact_does_not(question: str) -> None:
    assert not asks_across(question)


@pytest.mark.parametrize(
    ("question", "inference"),
    [
        ("Would Melanie likely enjoy the song by Vivaldi?", True),
        ("What might John's degree be in?", True),
        ("Would Caroline be considered religious?", True),
        ("Is she interested in moving abroad?", True),
        ("What did Caroline research?", False),
        ("When did John take the test?", False),
        ("What books has Melanie read?", False),
    ],
)
def test_an_inference_question_is_told_from_one_asking_what_was_said(question: str, inference: bool) -> None:
    assert asks_inference(question) is inference


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def test_feedback_moves_the_query_towards_its_seeds_at_unit_length() -> None:
    query = _unit([1.0, 0.0, 0.0])
    seeds = [_unit([0.0, 1.0, 0.0]), _unit([0.0, 1.0, 1.0])]
    moved = feedback_vector(query, seeds, 0.4)
    assert math.isclose(sum(x * x for x in moved), 1.0)
    assert moved[0] > moved[1] > moved[2] > 0  # towards the seeds, still nearer the query
    assert feedback_vector(query, [], 0.4) == query
    assert feedback_vector(query, seeds, 0.0) == query
    assert feedback_vector(query, [[1.0, 0.0]], 0.4) == query  # a vector of another width is not a seed


def test_bridging_terms_are_the_names_the_first_hits_add() -> None:
    seeds = [
        'You should read "Becoming Nicole", it is about Amy Ellis Nutt reporting on a family.',
        "Caroline told me Becoming Nicole changed how she sees her story.",
        "We went to Lake Tahoe last summer with Melanie.",
    ]
    terms = bridging_terms("What book did Caroline suggest to Melanie?", seeds, {"Caroline", "Melanie"}, 3)
    # most frequent first; the question's own names and the speakers are not bridges; a sentence's first word is not
    assert terms == ("becoming nicole", "amy ellis nutt", "lake tahoe")
    assert "you" not in terms and "we" not in terms
    assert bridging_terms("anything", seeds, (), 0) == ()


def test_fusion_keeps_the_head_and_gives_a_second_pass_find_its_place() -> None:
    first = ["a", "b", "c", "d", "e"]
    second = ["x", "c", "y", "a"]
    # x, first in the second ranking, comes right after the kept head; y, third there, counts as the first's fifth
    # at weight 0.5 and ties with e, which the first ranking holds
    assert fused_order(first, second, keep=2, second_weight=0.5) == ["a", "b", "x", "c", "d", "e", "y"]
    # weight 0: the second ranking only appends what it alone found
    assert fused_order(first, second, keep=2, second_weight=0.0) == ["a", "b", "c", "d", "e"]


@given(
    first=st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10),
    second=st.lists(st.sampled_from("efghijklmn"), unique=True, max_size=10),
    keep=st.integers(0, 12),
    weight=st.floats(0.0, 4.0),
)
def test_fusion_is_a_ranking_of_both_that_keeps_the_first_head(
    first: list[str], second: list[str], keep: int, weight: float
) -> None:
    fused = fused_order(first, second, keep=keep, second_weight=weight)
    assert sorted(fused) == sorted({*first, *(second if weight > 0 else ())})
    assert fused[: min(keep, len(first))] == first[:keep]
    assert fused == fused_order(first, second, keep=keep, second_weight=weight)


def test_the_spread_takes_from_each_sitting_in_turn() -> None:
    sittings = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "c1": "C"}
    ranked = [("a1", 1.0), ("a2", 0.98), ("a3", 0.97), ("b1", 0.95), ("c1", 0.8)]
    spread = [i for i, _ in spread_by_sitting(ranked, sittings.__getitem__, 0.05, depth=5)]
    assert spread == ["a1", "b1", "a2", "a3", "c1"]
    # no penalty: the order as it was
    assert spread_by_sitting(ranked, sittings.__getitem__, 0.0, depth=5) == ranked
    # each in a sitting of its own: no penalty is ever taken
    assert spread_by_sitting(ranked, {i: i for i, _ in ranked}.__getitem__, 0.05, depth=3) == ranked


@given(
    rows=st.lists(st.tuples(st.integers(0, 3), st.floats(0.0, 2.0)), max_size=30),
    penalty=st.floats(0.0, 0.5),
    depth=st.integers(0, 30),
)
def test_the_spread_is_best_first_by_the_scores_it_took_them_at(
    rows: list[tuple[int, float]], penalty: float, depth: int
) -> None:
    ranked = sorted(((f"m{n}", score) for n, (_, score) in enumerate(rows)), key=lambda r: -r[1])
    sitting = {f"m{n}": str(s) for n, (s, _) in enumerate(rows)}
    spread = spread_by_sitting(ranked, sitting.__getitem__, penalty, depth)
    assert sorted(i for i, _ in spread) == sorted(i for i, _ in ranked)
    taken_at = [score for _, score in spread]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(taken_at))
    own = dict(ranked)
    assert all(score <= own[i] + 1e-12 for i, score in spread)


def greedy_spread(
    ranked: list[tuple[str, float]], sitting_of: dict[str, str], penalty: float, depth: int
) -> list[tuple[str, float]]:
    """The spread by its definition: at each step every item left scored again, the best taken (the earliest when
    equal)."""
    pending = list(ranked)
    chosen: list[tuple[str, float]] = []
    taken: dict[str, int] = {}
    while pending and len(chosen) < depth:
        scores = [score - penalty * taken.get(sitting_of[i], 0) for i, score in pending]
        best = max(range(len(pending)), key=lambda n: (scores[n], -n))
        item, _ = pending.pop(best)
        chosen.append((item, scores[best]))
        taken[sitting_of[item]] = taken.get(sitting_of[item], 0) + 1
    rest = sorted(((i, score - penalty * taken.get(sitting_of[i], 0)) for i, score in pending), key=lambda p: -p[1])
    return chosen + rest


@given(
    rows=st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.0, 0.25, 0.5, 0.7, 1.0, 1.3])), max_size=40),
    penalty=st.sampled_from([0.0, 0.05, 0.25, 0.3]),
    depth=st.integers(0, 40),
)
def test_the_spread_is_the_greedy_one_equal_scores_included(
    rows: list[tuple[int, float]], penalty: float, depth: int
) -> None:
    # Scores from a few values, so that ties (between sittings, and after a penalty) are common
    ranked = sorted(((f"m{n}", score) for n, (_, score) in enumerate(rows)), key=lambda r: -r[1])
    sitting = {f"m{n}": str(s) for n, (s, _) in enumerate(rows)}
    assert spread_by_sitting(ranked, sitting.__getitem__, penalty, depth) == greedy_spread(
        ranked, sitting, penalty, depth
    )
