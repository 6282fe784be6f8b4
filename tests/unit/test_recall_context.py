"""The conversation rules of recall (docs/recall.md): stemming, third-person rendering, answers, sittings, speakers,
neighbours, and replies embedded after the message they follow."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rapport.domain.models import Domain, Memory, PrecedingMessage, Provenance, SourceKind
from rapport.domain.rendering import embedding_text, in_third_person, reply_embedding_text, search_text
from rapport.domain.scoring import ContextBoost, TurnPlace, context_boosts, context_reasons, named_speakers
from rapport.domain.stemming import porter_stem
from rapport.domain.vectors import blend, cosine
from rapport.settings import RecallContextWeights

WEIGHTS = RecallContextWeights(answer=0.2, conversation=0.4, speaker=0.12)
NOW = datetime(2024, 5, 8, 13, 56, tzinfo=UTC)


def memory(content: str, source: Provenance) -> Memory:
    return Memory(
        id="m1",
        tenant_id="t",
        user_id="u",
        domain=Domain.USER,
        type="episode",
        content=content,
        source=source,
        created_at=NOW,
        updated_at=NOW,
        occurred_at=NOW,
        last_reinforced_at=NOW,
    )


def test_porter_stems_the_classic_examples() -> None:
    pairs = {
        "caresses": "caress",
        "ponies": "poni",
        "agreed": "agre",
        "hopping": "hop",
        "relational": "relat",
        "generalizations": "gener",
        "adoption": "adopt",
    }
    assert {word: porter_stem(word) for word in pairs} == pairs
    assert porter_stem("2023") == "2023" and porter_stem("is") == "is"


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=15))
def test_stemming_never_grows_a_word_and_is_stable(word: str) -> None:
    stem = porter_stem(word)
    assert len(stem) <= len(word) + 1  # step 1b may add back an "e" (hoping → hope)
    assert stem


def test_a_message_is_embedded_in_the_third_person_and_searched_with_its_date() -> None:
    said = memory(
        "I'm thrilled: my sister and I adopted a dog!",
        Provenance(kind=SourceKind.INTERACTION, interaction_id="i", message_index=0, speaker="Caroline"),
    )
    assert (
        embedding_text(said) == 'Caroline said, "Caroline is thrilled: Caroline\'s sister and Caroline adopted a dog!"'
    )
    assert search_text(said) == "[08 May 2024] Caroline: I'm thrilled: my sister and I adopted a dog!"
    fact = memory("Has a dog named Max", Provenance())
    assert embedding_text(fact) == search_text(fact) == "Has a dog named Max"
    assert in_third_person("Imagine my idea", "Ana") == "Imagine Ana's idea"  # whole words only


def test_the_speaker_is_named_by_first_name_whatever_the_case() -> None:
    assert named_speakers("What did caroline's sister adopt?", {"Caroline", "Melanie"}) == {"Caroline"}
    assert named_speakers("What did Dana say?", {"Dana Smith", "assistant"}) == {"Dana Smith"}
    assert named_speakers("what happened?", {"Caroline"}) == frozenset()


def place(index: int, speaker: str, asks: bool = False, conversation: str = "s1") -> TurnPlace:
    return TurnPlace(conversation=conversation, interaction_id="i1", message_index=index, speaker=speaker, asks=asks)


def test_an_answer_inherits_from_the_question_before_it() -> None:
    places = {"q": place(0, "Melanie", asks=True), "a": place(1, "Caroline"), "later": place(3, "Caroline")}
    boosts = context_boosts({"q": 0.5, "a": 0.1, "later": 0.1}, places, frozenset(), WEIGHTS)
    assert boosts["a"].answer == 0.2 * 0.5
    assert boosts["later"].answer == 0.0  # not right after the question
    assert boosts["q"].answer == 0.0
    assert "answers a matching question" in context_reasons(boosts["a"])


def test_a_statement_passes_nothing_on() -> None:
    places = {"q": place(0, "Melanie", asks=False), "a": place(1, "Caroline")}
    assert context_boosts({"q": 0.5, "a": 0.1}, places, frozenset(), WEIGHTS)["a"].answer == 0.0


def test_the_best_match_of_a_sitting_lifts_the_sitting_and_a_lone_memory_lifts_itself() -> None:
    places = {
        "best": place(0, "A"),
        "same": place(5, "B"),
        "other": place(0, "A", conversation="s2"),
        "fact": TurnPlace(conversation=None),
    }
    boosts = context_boosts({"best": 0.8, "same": 0.2, "other": 0.3, "fact": 0.3}, places, frozenset(), WEIGHTS)
    assert boosts["same"].conversation == boosts["best"].conversation == 0.4 * 0.8
    assert boosts["other"].conversation == boosts["fact"].conversation == 0.4 * 0.3


def test_the_speaker_boost_needs_someone_else_to_be_present() -> None:
    places = {"c": place(0, "Caroline"), "m": place(1, "Melanie")}
    named = frozenset({"Caroline"})
    boosts = context_boosts({"c": 0.3, "m": 0.3}, places, named, WEIGHTS)
    assert boosts["c"].speaker == 0.12 and boosts["m"].speaker == 0.0
    alone = context_boosts({"c": 0.3}, {"c": places["c"]}, named, WEIGHTS)
    assert alone["c"].speaker == 0.0  # naming the only speaker there is tells nothing


@given(
    matches=st.lists(st.floats(min_value=0, max_value=1, allow_nan=False), min_size=1, max_size=8),
)
def test_boosts_are_never_negative_and_zero_weights_turn_them_off(matches: list[float]) -> None:
    ids = [f"m{i}" for i in range(len(matches))]
    places = {m: place(i, "A" if i % 2 else "B", asks=i % 3 == 0) for i, m in enumerate(ids)}
    scores = dict(zip(ids, matches, strict=True))
    for boost in context_boosts(scores, places, frozenset({"A"}), WEIGHTS).values():
        assert boost.total >= 0
    off = RecallContextWeights(answer=0, conversation=0, speaker=0, adjacent=0)
    assert all(b == ContextBoost() for b in context_boosts(scores, places, frozenset({"A"}), off).values())


def test_a_message_passes_a_little_of_its_match_to_the_messages_beside_it() -> None:
    places = {"before": place(0, "A"), "topic": place(1, "B"), "after": place(2, "A"), "far": place(4, "B")}
    boosts = context_boosts({"before": 0.1, "topic": 0.8, "after": 0.2, "far": 0.1}, places, frozenset(), WEIGHTS)
    assert boosts["before"].adjacent == boosts["after"].adjacent == 0.05 * 0.8  # the better neighbour counts
    assert boosts["topic"].adjacent == 0.05 * 0.2
    assert boosts["far"].adjacent == 0.0  # message 3 is not a candidate: nothing beside it matched


def test_a_reply_is_embedded_after_the_message_it_follows() -> None:
    reply = memory(
        "It was Matt Patterson, I loved his voice",
        Provenance(kind=SourceKind.INTERACTION, interaction_id="i", message_index=1, speaker="Caroline"),
    ).model_copy(update={"in_reply_to": PrecedingMessage(speaker="Melanie", content="Who sang at my concert?")})
    assert reply_embedding_text(reply) == (
        'Melanie said, "Who sang at Melanie\'s concert?" '
        'Caroline said, "It was Matt Patterson, Caroline loved his voice"'
    )
    assert reply_embedding_text(reply.model_copy(update={"in_reply_to": None})) is None


def test_a_blend_is_a_unit_vector_between_its_two_parts() -> None:
    own, reply = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]
    mixed = blend(own, reply, 0.7)
    assert math.isclose(math.hypot(*mixed), 1.0)
    assert mixed[1] > mixed[0] > 0  # more of the reply than of the message alone
    assert blend(own, reply, 0.0) == own
    assert cosine(mixed, own) == pytest.approx(0.3 / math.hypot(0.3, 0.7))
    assert cosine(own, None) == cosine(own, [1.0]) == 0.0
    with pytest.raises(ValueError):
        blend(own, [1.0], 0.5)
