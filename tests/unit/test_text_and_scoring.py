"""Tokenizing and the hybrid score: the pure rules recall is built on."""

from __future__ import annotations

import math
from dataclasses import fields, replace

from hypothesis import given
from hypothesis import strategies as st

from rapport.domain.scoring import (
    ContextBoost,
    MatchStrength,
    RecallSignals,
    hybrid_score,
    match_reasons,
    match_strength,
    matched_terms,
    recency,
    relevance,
)
from rapport.domain.text import tokenize
from rapport.settings import RecallWeights

unit_floats = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def signals(**overrides: object) -> RecallSignals:
    base: dict[str, object] = {
        "similarity": 0.5,
        "keyword": 0.5,
        "matched_terms": ("dog",),
        "query_terms": 2,
        "age_days": 1.0,
        "importance": 0.5,
        "strength": 0.5,
    }
    base.update(overrides)
    return RecallSignals(**base)  # type: ignore[arg-type]


def test_tokenize_drops_stopwords_and_folds_inflections() -> None:
    # Porter stems: plurals and possessives fold, and so do verb forms.
    assert tokenize("My dogs and the cat's toys") == tokenize("dog cat toy") == ["dog", "cat", "toi"]
    assert tokenize("The class is in") == ["class"]
    assert tokenize("camped camping camps") == ["camp"] * 3
    assert tokenize("I’m painting, let's go") == ["paint", "go"]  # curly apostrophes and contractions are stopwords


def test_matched_terms_keeps_query_order_without_repeats() -> None:
    assert matched_terms("Max dog max", "I have a dog named Max") == ("max", "dog")


def test_matched_terms_are_the_query_words_as_written_not_stems() -> None:
    assert matched_terms("Where has Melanie camped?", "Melanie: we went camping") == ("melanie", "camped")


def test_recency_halves_after_one_half_life() -> None:
    assert recency(0, 30) == 1.0
    assert math.isclose(recency(30, 30), 0.5)
    assert math.isclose(recency(60, 30), 0.25)


@given(a=unit_floats, b=unit_floats)
def test_score_grows_with_similarity(a: float, b: float) -> None:
    weights = RecallWeights()
    low, high = sorted((a, b))
    assert hybrid_score(signals(similarity=low), weights, 30) <= hybrid_score(signals(similarity=high), weights, 30)


@given(age=st.floats(min_value=0, max_value=3650), importance=unit_floats, strength=unit_floats)
def test_score_is_bounded_by_the_weights(age: float, importance: float, strength: float) -> None:
    weights = RecallWeights()
    score = hybrid_score(
        signals(similarity=1.0, keyword=1.0, age_days=age, importance=importance, strength=strength), weights, 30
    )
    total = weights.vector + weights.keyword + weights.recency + weights.importance + weights.strength
    assert 0.0 <= score <= total + 1e-9


@given(answer=unit_floats, conversation=unit_floats, relation=unit_floats)
def test_context_and_relation_add_to_the_score_as_they_are_weighted(
    answer: float, conversation: float, relation: float
) -> None:
    weights = RecallWeights()
    plain = hybrid_score(signals(), weights, 30)
    read = hybrid_score(
        signals(context=ContextBoost(answer=answer, conversation=conversation), relation=relation), weights, 30
    )
    assert math.isclose(read - plain, answer + conversation + weights.relation * relation, abs_tol=1e-9)


def test_reasons_end_with_the_conversation_and_the_links() -> None:
    boosted = signals(context=ContextBoost(answer=0.1, speaker=0.12), relation=0.4, linked_by=("LEADS_TO", "PART_OF"))
    assert match_reasons(boosted, 30)[-3:] == [
        "answers a matching question",
        "said by the person asked about",
        "linked: LEADS_TO, PART_OF",
    ]
    assert not any(r.startswith("linked") for r in match_reasons(signals(linked_by=("LEADS_TO",)), 30))


def test_negative_similarity_adds_nothing() -> None:
    weights = RecallWeights()
    assert hybrid_score(signals(similarity=-0.4), weights, 30) == hybrid_score(signals(similarity=0.0), weights, 30)


def test_match_strength_uses_query_relevance_not_age() -> None:
    weights = RecallWeights()
    strong = relevance(signals(similarity=0.9, matched_terms=("dog", "max")), weights)
    weak = relevance(signals(similarity=0.1, matched_terms=()), weights)
    assert match_strength(strong, 0.6, 0.35) is MatchStrength.STRONG
    assert match_strength(weak, 0.6, 0.35) is MatchStrength.WEAK
    assert match_strength(0.4, 0.6, 0.35) is MatchStrength.MODERATE


def test_reasons_name_the_terms_and_signals() -> None:
    reasons = match_reasons(signals(similarity=0.72, matched_terms=("dog", "max"), importance=0.9, age_days=0), 30)
    assert reasons[0] == "similar in meaning (0.72)"
    assert "shares terms: dog, max" in reasons
    assert "recent" in reasons
    assert "important (0.90)" in reasons


def test_over_long_tokens_are_kept_whole_not_a_crash() -> None:
    # A pasted run of one letter must not break indexing (it once hit the recursion limit in the stemmer).
    assert tokenize("y" * 5000) == ["y" * 5000]


def test_linked_signals_are_what_replace_makes_of_every_field() -> None:
    # Every field set away from its default, so a field `linked` dropped or misplaced would show.
    full = signals(
        context=ContextBoost(answer=0.1, conversation=0.2, speaker=0.3, adjacent=0.4, time=0.5, preference=0.6),
        speaker_weight=0.7,
        relation=0.2,
        linked_by=("supports",),
    )
    assert full.linked(0.9, ("causes", "supports")) == replace(full, relation=0.9, linked_by=("causes", "supports"))
    assert len(fields(RecallSignals)) == 11
