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


def test_a_taste_said_outright_within_the_margin_of_its_bar_is_the_taste_and_further_below_the_fact() -> None:
    said = "I'm obsessed with Sichuan food"
    near = BAR.bar("preference") - BAR.margin + 0.01
    far = BAR.bar("preference") - BAR.margin - 0.01

    assert _evidenced_label(nearest_a_fact(near), said, BAR) == "preference"
    assert _evidenced_label(nearest_a_fact(far), said, BAR) == "fact"


@pytest.mark.parametrize(
    "sentence",
    [
        "fair warning, I find most supermarket curries far too sweet",  # a judgment of their own, behind a lead-in
        "I never sit with my back to the door, it drives me mad",  # what they do, and how the other way feels
    ],
)
def test_a_taste_said_in_other_words_is_the_taste(sentence: str) -> None:
    assert _evidenced_label(nearest_a_fact(0.40), sentence, BAR) == "preference"
