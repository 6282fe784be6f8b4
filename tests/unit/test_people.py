"""Extraction of the people a user mentions, and how a person's record follows the mentions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rapport.domain.people import (
    Mention,
    Person,
    SentimentLabel,
    absorb,
    find_mentions,
    person_slug,
    record_mention,
    slugify,
)

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def _found(text: str, known: list[Person] | None = None) -> list[tuple[str, str | None, str | None]]:
    return [(m.slug, m.name, m.role) for m in find_mentions(text, known or [])]


def _person(slug: str, name: str | None, role: str | None, at: datetime = T0) -> Person:
    return Person(slug=slug, name=name, role=role, first_mentioned=at, last_mentioned=at, mention_count=1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My boss Sarah keeps moving deadlines", [("sarah", "Sarah", "boss")]),
        ("my mom called", [("mother", None, "mother")]),
        ("My mum said the same", [("mother", None, "mother")]),
        ("I met my friend, Tom Baker, downtown", [("tom-baker", "Tom Baker", "friend")]),
        ("Sarah, my manager, approved it", [("sarah", "Sarah", "manager")]),
        ("I had dinner with Priya (my sister)", [("priya", "Priya", "sister")]),
        ("MY BOSS SARAH IS AWFUL", [("sarah", "Sarah", "boss")]),
        (
            "my best friend Jo and my coworker Ben went hiking",
            [("jo", "Jo", "best friend"), ("ben", "Ben", "colleague")],
        ),
        ("Our team lead wants a demo", [("team-lead", None, "team lead")]),
        ("It's my dad's birthday on Monday", [("father", None, "father")]),
        ("my boss Monday morning was grumpy", [("boss", None, "boss")]),  # a weekday is not a name
        ("Thanks, my friend!", [("friend", None, "friend")]),
        ("Anyway, my sister called", [("sister", None, "sister")]),
        ("I passed my exam and my son is proud", [("son", None, "son")]),
        ("Paris was lovely and Sarah agreed", []),  # capitalised words alone make nobody a person
        ("", []),
    ],
)
def test_find_mentions(text: str, expected: list[tuple[str, str | None, str | None]]) -> None:
    assert _found(text) == expected


def test_one_mention_per_person_per_sentence_with_the_sentence_kept() -> None:
    mentions = find_mentions("My boss Sarah is late. My boss Sarah is always late, my boss is tiring.")
    assert [m.sentence for m in mentions] == [
        "My boss Sarah is late.",
        "My boss Sarah is always late, my boss is tiring.",
    ]


def test_known_people_are_found_by_name_and_unnamed_roles_join_their_holder() -> None:
    known = [_person("sarah", "Sarah", "boss"), _person("linda", "Linda", "mother")]
    assert _found("Sarah moved the deadline again.", known) == [("sarah", "Sarah", "boss")]
    assert _found("Sarah's plan is bad", known) == [("sarah", "Sarah", "boss")]
    assert _found("My mom called", known) == [("linda", "Linda", "mother")]
    # A friend is not a unique role: "my friend" is not a known friend.
    assert _found("My friend called", [*known, _person("tom", "Tom", "friend")]) == [("friend", None, "friend")]
    assert _found("Sarahville is a town", known) == []


def test_two_people_with_one_name_get_two_slugs() -> None:
    known = [_person("sarah", "Sarah", "boss")]
    assert _found("My sister Sarah is visiting", known) == [("sarah-sister", "Sarah", "sister")]
    assert _found("my sister Sarah and my boss Sarah") == [
        ("sarah", "Sarah", "sister"),
        ("sarah-boss", "Sarah", "boss"),
    ]
    assert person_slug("Sarah", "boss", [("sarah", "boss")]) == "sarah"
    assert slugify("Zoë O'Neil") == "zo-o-neil" and slugify("!!!") == "person"


def _mention(sentence: str) -> Mention:
    return Mention(slug="sarah", name="Sarah", role="boss", sentence=sentence)


def test_sentiment_follows_opinionated_sentences_and_ignores_neutral_ones() -> None:
    person = record_mention(None, _mention("Sarah keeps moving deadlines."), -0.4, T0, weight=0.5, max_facts=3)
    assert (person.sentiment, person.sentiment_label, person.mention_count) == (-0.4, SentimentLabel.NEGATIVE, 1)
    later = T0 + timedelta(days=1)
    person = record_mention(person, _mention("Sarah was wonderful today."), 0.8, later, weight=0.5, max_facts=3)
    assert person.sentiment == pytest.approx(0.2) and person.sentiment_label is SentimentLabel.POSITIVE
    person = record_mention(person, _mention("I had lunch with Sarah."), 0.0, later, weight=0.5, max_facts=3)
    assert person.sentiment == pytest.approx(0.2) and person.mention_count == 3
    assert (person.first_mentioned, person.last_mentioned) == (T0, later)


def test_facts_are_deduplicated_and_capped_to_the_latest() -> None:
    person = None
    for index, sentence in enumerate(["A.", "B.", "a.", "C.", "D."]):
        person = record_mention(person, _mention(sentence), 0.0, T0 + timedelta(hours=index), weight=0.5, max_facts=3)
    assert person is not None
    assert [f.text for f in person.facts] == ["a.", "C.", "D."]


def test_absorb_joins_an_unnamed_record_into_the_named_one() -> None:
    unnamed = _person("mother", None, "mother", T0).model_copy(update={"sentiment": 0.6, "mention_count": 3})
    named = _person("linda", "Linda", "mother", T0 + timedelta(days=2))
    joined = absorb(named, unnamed, max_facts=10)
    assert joined.slug == "linda" and joined.mention_count == 4
    assert joined.sentiment == pytest.approx(0.45) and joined.first_mentioned == T0
