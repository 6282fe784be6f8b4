"""A taste said outright is the taste, however near a fact meaning puts its topic; what is theirs stays the fact."""

from __future__ import annotations

import pytest

from rapport.domain.semantics.matcher import CALIBRATIONS, MINILM, Match
from rapport.domain.semantics.user import _evidenced_label

BAR = CALIBRATIONS[MINILM]["user"]


def nearest_a_fact(taste: float) -> Match:
    """What meaning made of such a sentence: a fact, a taste the runner-up at `taste`."""
    by_label = {"fact": 0.49, "preference": taste, "goal": 0.27, "none_question": 0.2}
    return Match("fact", "fact", 0.49, "preference", 0.49 - taste, by_label)


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("I'm obsessed with Sichuan food", "preference"),
        ("honestly I can't stand open-plan offices", "preference"),
        ("I love my job at the bakery", "fact"),  # what is theirs
        ("I work nights at a bakery", "fact"),  # no word of taste
    ],
)
def test_a_taste_said_outright_is_the_taste(sentence: str, kind: str) -> None:
    assert _evidenced_label(nearest_a_fact(0.40), sentence, BAR) == kind


def test_a_taste_below_its_bar_stays_the_fact() -> None:
    assert (
        _evidenced_label(nearest_a_fact(BAR.bar("preference") - 0.01), "I'm obsessed with Sichuan food", BAR) == "fact"
    )
