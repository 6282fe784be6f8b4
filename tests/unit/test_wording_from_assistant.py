"""The assistant's words about the user, as a note of mine restates them: the user is "they"."""

from __future__ import annotations

import pytest

from rapport.domain.rules import patterns
from rapport.domain.rules.wording import from_assistant

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
