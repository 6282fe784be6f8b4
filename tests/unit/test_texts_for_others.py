"""Quotes that are not the person's own words to me: a text for someone else, left out before relational extraction with
the sentence that holds it, and words they ask about, left out before user extraction."""

from __future__ import annotations

import pytest

from rapport.domain.rules.wording import (
    sentences,
    without_others_words,
    without_quotes_asked_about,
    without_texts_for_others,
)


@pytest.mark.parametrize(
    ("said", "left"),
    [
        (
            "Translate for my host please: 'I always want the bill split, thanks.' Also, keep your answer short.",
            "Also, keep your answer short.",
        ),
        (
            'Draft an email to my boss: "Send me the numbers every Friday." Then tell me if it sounds rude.',
            "Then tell me if it sounds rude.",
        ),
        ("In my novel the pilot says to the crew ‘never wake me before landing’. Too dramatic?", "Too dramatic?"),
    ],
)
def test_a_quote_for_someone_else_goes_with_the_sentence_that_holds_it(said: str, left: str) -> None:
    assert without_texts_for_others(said) == left


@pytest.mark.parametrize(
    "said",
    [
        "you said 'think of it as a phonebook' and it finally clicked",  # a quote of mine, said to me
        "it's the kids' 'quiet hour' we set up, it's working great for us",  # apostrophes, no text for others
        "Don't translate everything, it's fine if the boss's words stay in English",  # no quote at all
    ],
)
def test_what_is_not_a_text_for_someone_else_stays(said: str) -> None:
    assert without_texts_for_others(said) == said


@pytest.mark.parametrize(
    "said",
    [
        'summarise this review please: "I have lived in Lisbon for years."',
        '"I hate Mondays" — is that originally a Garfield line?',
    ],
)
def test_a_quote_they_ask_about_is_left_out_of_their_own_words(said: str) -> None:
    assert '""' in without_quotes_asked_about(said)


def test_a_text_they_write_keeps_its_quote() -> None:
    said = 'Draft a note to my landlord: "I have lived here for six years and always paid on time."'
    assert without_quotes_asked_about(said) == said


@pytest.mark.parametrize(
    "said",
    [
        'My sister texted: "You always overthink everything." Anyway, what should I cook tonight?',
        'A colleague forwarded me this: "Please answer every email within the hour." Fair or not?',
    ],
)
def test_words_said_to_be_someone_elses_are_left_out_and_still_end_their_sentence(said: str) -> None:
    left = without_others_words(said)
    assert '""' in left and "overthink" not in left and "within the hour" not in left
    assert len(sentences(left)) == 2


def test_a_quote_of_mine_said_back_to_me_stays_among_their_words() -> None:
    said = "you said 'start with the smallest bill first' and it worked, I paid two off"
    assert without_others_words(said) == said
