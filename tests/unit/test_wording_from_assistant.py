"""The assistant's words about the user, as a note of mine restates them: the user is "they", or "them" as an object;
the user's own words about themselves likewise."""

from __future__ import annotations

import pytest

from rapport.domain.rules import patterns
from rapport.domain.rules.wording import from_assistant, third_person

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("said", "noted"),
    [
        ("your handler is undefined", "their handler is undefined"),
        ("You're driving; your odometer counts", "they're driving; their odometer counts"),
        ("if you've got a pool of 5, you'll queue", "if they've got a pool of 5, they'll queue"),
        ("you’d see it in the US logs", "they’d see it in the US logs"),
    ],
)
def test_the_assistants_you_is_they_contractions_included(said: str, noted: str) -> None:
    assert from_assistant(said, patterns.LEXICON) == noted


@pytest.mark.parametrize(
    ("said", "noted"),
    [
        ("Let me quiz you instead.", "Let me quiz them instead."),
        ("2am there may not be 2am for you. Check it", "2am there may not be 2am for them. Check it"),
        ("if you want, I can send you the file", "if they want, I can send them the file"),
        # a subject still
        ("you and your partner should split it", "they and their partner should split it"),
        ("are you in the office?", "are they in the office?"),
    ],
)
def test_the_assistants_you_as_an_object_is_them(said: str, noted: str) -> None:
    assert from_assistant(said, patterns.LEXICON) == noted


@pytest.mark.parametrize(
    ("said", "noted"),
    [
        ("Museums bore me, I'd rather wander the markets", "Museums bore them, they'd rather wander the markets"),
        ("I’d rather walk", "they’d rather walk"),
        ("diabetic since i was a kid", "diabetic since they were a kid"),
        ("I wasn't ready", "they weren't ready"),
    ],
)
def test_the_users_i_is_they_in_lower_case_and_every_contraction(said: str, noted: str) -> None:
    assert third_person(said, patterns.LEXICON) == noted
