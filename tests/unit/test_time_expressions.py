"""Time phrases resolved against when they were said, and temporal questions told from others."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rapport.domain.models import DateSpan, Granularity, Memory
from rapport.domain.rendering import search_text
from rapport.domain.temporal_recall import in_ranges, temporal_question, time_boosts
from rapport.domain.time_expressions import has_time_phrase, render_span, says_when, tells_of_past, time_spans
from rapport.settings import RecallTimeWeights

# A Wednesday.
SAID = datetime(2024, 10, 16, 18, 30, tzinfo=UTC)


def only(text: str, said: datetime = SAID) -> DateSpan:
    spans = time_spans(text, said)
    assert len(spans) == 1, spans
    return spans[0]


@pytest.mark.parametrize(
    ("text", "start", "end", "granularity"),
    [
        ("We adopted a kitten yesterday.", date(2024, 10, 15), date(2024, 10, 15), Granularity.DAY),
        ("I start the new job tomorrow", date(2024, 10, 17), date(2024, 10, 17), Granularity.DAY),
        ("Had a rough day today", date(2024, 10, 16), date(2024, 10, 16), Granularity.DAY),
        ("My sister visited last week", date(2024, 10, 7), date(2024, 10, 13), Granularity.WEEK),
        ("the past week was hard", date(2024, 10, 7), date(2024, 10, 13), Granularity.WEEK),
        ("We're flying out next week", date(2024, 10, 21), date(2024, 10, 27), Granularity.WEEK),
        ("I got promoted last month!", date(2024, 9, 1), date(2024, 9, 30), Granularity.MONTH),
        ("we might move next month", date(2024, 11, 1), date(2024, 11, 30), Granularity.MONTH),
        ("I ran my first marathon last year", date(2023, 1, 1), date(2023, 12, 31), Granularity.YEAR),
        ("I quit smoking two years ago", date(2022, 1, 1), date(2022, 12, 31), Granularity.YEAR),
        ("I broke my arm 3 days ago", date(2024, 10, 13), date(2024, 10, 13), Granularity.DAY),
        ("a few days ago the boiler died", date(2024, 10, 12), date(2024, 10, 14), Granularity.DAY),
        ("We met a couple of weeks ago", date(2024, 9, 23), date(2024, 10, 6), Granularity.WEEK),
        ("The tree fell six months ago", date(2024, 4, 1), date(2024, 4, 30), Granularity.MONTH),
        ("Last weekend we hiked", date(2024, 10, 12), date(2024, 10, 13), Granularity.WEEKEND),
        ("We went hiking two weekends ago", date(2024, 10, 5), date(2024, 10, 6), Granularity.WEEKEND),
        ("I saw the dentist on Monday.", date(2024, 10, 14), date(2024, 10, 14), Granularity.DAY),
        ("We'll have dinner on Friday", date(2024, 10, 18), date(2024, 10, 18), Granularity.DAY),
        ("last Tues I signed up for pottery", date(2024, 10, 15), date(2024, 10, 15), Granularity.DAY),
        ("We married in June.", date(2024, 6, 1), date(2024, 6, 30), Granularity.MONTH),
        ("Our trip is in December, can't wait", date(2024, 12, 1), date(2024, 12, 31), Granularity.MONTH),
        ("We married in June 2019.", date(2019, 6, 1), date(2019, 6, 30), Granularity.MONTH),
        ("She was born on 3 March 2001", date(2001, 3, 3), date(2001, 3, 3), Granularity.DAY),
        ("the party will be on November 2nd", date(2024, 11, 2), date(2024, 11, 2), Granularity.DAY),
        ("we met on November 2nd", date(2023, 11, 2), date(2023, 11, 2), Granularity.DAY),  # the past by default
        # A month written short, with its day and without a year, as people write dates in a hurry
        ("our flight on Oct 3 got cancelled", date(2024, 10, 3), date(2024, 10, 3), Granularity.DAY),
        ("we close on 25 Nov, can't wait", date(2024, 11, 25), date(2024, 11, 25), Granularity.DAY),
        ("booked for Sept. 3rd", date(2024, 9, 3), date(2024, 9, 3), Granularity.DAY),
        ("I moved here in 2015", date(2015, 1, 1), date(2015, 12, 31), Granularity.YEAR),
        ("last summer we rented a boat", date(2024, 6, 1), date(2024, 8, 31), Granularity.SEASON),
        ("next spring we will plant roses", date(2025, 3, 1), date(2025, 5, 31), Granularity.SEASON),
        ("last October was wet", date(2023, 10, 1), date(2023, 10, 31), Granularity.MONTH),
    ],
)
def test_a_phrase_becomes_the_dates_it_means_when_said(
    text: str, start: date, end: date, granularity: Granularity
) -> None:
    span = only(text)
    assert (span.start, span.end, span.granularity) == (start, end, granularity)
    assert span.phrase.lower() in text.lower()


@pytest.mark.parametrize(
    "text",
    [
        "I may have to think about it",  # the verb, not the month
        "We march for climate action",
        "I go to yoga every Sunday",  # a habit, not a date
        "Thanks, that was lovely!",
        "I'm 29 and I like cats",
        "dec 15 people came",  # a short month is a capital's, as a month's name is
        "She sat down",
    ],
)
def test_words_that_name_no_date_are_left_alone(text: str) -> None:
    assert time_spans(text, SAID) == []


@pytest.mark.parametrize(
    ("text", "placed"),
    [
        ("We adopted a dog on Saturday", True),
        ("She moves to Leeds next month", True),
        ("I volunteer there every Sunday", False),  # a habit, not a time
        ("I ran my first 5k", False),  # a number is no time
        ("I'm a nurse", False),
    ],
)
def test_says_when_tells_a_time_from_a_habit_or_a_number(text: str, placed: bool) -> None:
    assert says_when(text) is placed


@pytest.mark.parametrize(
    ("text", "past"),
    [
        ("put my back out lifting boxes yesterday", True),
        ("quit my job at the bank last Friday", True),
        ("cut it two years ago", True),
        ("will set it up next week", False),  # looks ahead
        ("put the kettle on every Sunday", False),  # a habit
        ("put the kettle on first thing", False),  # no time at all
    ],
)
def test_tells_of_past_is_a_time_placed_before_it_was_said(text: str, past: bool) -> None:
    assert tells_of_past(text) is past


def test_several_phrases_come_back_in_text_order() -> None:
    spans = time_spans("Yesterday I booked the flight; we leave next month and come back in 2025.", SAID)
    assert [s.phrase for s in spans] == ["Yesterday", "next month", "in 2025"]


def test_the_same_phrase_means_another_date_when_said_another_day() -> None:
    assert only("yesterday", datetime(2023, 1, 1, tzinfo=UTC)).start == date(2022, 12, 31)


def test_a_span_reads_as_the_words_a_question_would_use() -> None:
    assert render_span(only("yesterday")) == "15 October 2024"
    assert render_span(only("last month")) == "September 2024"
    assert render_span(only("last year")) == "2023"
    assert render_span(only("last week")) == "7 October 2024 to 13 October 2024"


@given(st.text(max_size=200), st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1)))
def test_any_text_resolves_to_ordered_spans_of_its_own_words(text: str, said: datetime) -> None:
    spans = time_spans(text, said)
    assert all(s.start <= s.end for s in spans)
    assert all(" ".join(s.phrase.split()).lower() in " ".join(text.split()).lower() for s in spans)
    assert bool(spans) <= has_time_phrase(text)


# Temporal questions

ASKED = datetime(2024, 10, 20, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "question",
    [
        "When did Ana adopt the kitten?",
        "How long ago did Sam quit smoking?",
        "What year did they move to Lisbon?",
        "In which month was the wedding?",
        "How many years has she played the cello?",
        "Since when has he worked at the bakery?",
    ],
)
def test_questions_asking_for_a_time_are_temporal(question: str) -> None:
    found = temporal_question(question, ASKED)
    assert found is not None and found.asks_when


@pytest.mark.parametrize(
    "question",
    ["What is Ana's kitten called?", "Who did Sam go hiking with?", "Where does she work?", "Does he like jazz?"],
)
def test_other_questions_are_not(question: str) -> None:
    assert temporal_question(question, ASKED) is None


def test_a_question_naming_dates_carries_their_range() -> None:
    found = temporal_question("What did Ana buy in May 2023?", ASKED)
    assert found is not None and not found.asks_when
    assert found.ranges == ((date(2023, 5, 1), date(2023, 5, 31)),)
    last_year = temporal_question("Where did we travel last year?", ASKED)
    assert last_year is not None and last_year.ranges == ((date(2023, 1, 1), date(2023, 12, 31)),)


def test_before_and_after_open_the_range() -> None:
    before = temporal_question("What did she read before June 2024?", ASKED)
    after = temporal_question("What did she read after 2021?", ASKED)
    assert before is not None and before.ranges == ((date.min, date(2024, 5, 31)),)
    assert after is not None and after.ranges == ((date(2022, 1, 1), date.max),)


def test_a_candidate_is_in_range_by_the_dates_it_names() -> None:
    may = ((date(2023, 5, 1), date(2023, 5, 31)),)
    yesterday = DateSpan(phrase="yesterday", start=date(2023, 5, 31), end=date(2023, 5, 31), granularity="day")
    next_month = DateSpan(phrase="next month", start=date(2023, 6, 1), end=date(2023, 6, 30), granularity="month")
    assert in_ranges([yesterday], may)
    assert not in_ranges([next_month], may)
    assert in_ranges([next_month, yesterday], may)
    assert not in_ranges([], may)


def test_time_lifts_a_match_in_proportion_and_never_a_memory_that_matches_nothing() -> None:
    weights = RecallTimeWeights(in_range=0.3, dated=0.1)
    question = temporal_question("When did we go camping in May 2023?", ASKED)
    in_may = DateSpan(phrase="last week", start=date(2023, 5, 1), end=date(2023, 5, 7), granularity="week")
    in_june = DateSpan(phrase="next month", start=date(2023, 6, 1), end=date(2023, 6, 30), granularity="month")
    mentioned = {"names-may": [in_may], "names-june": [in_june], "names-none": [], "no-match": [in_may]}
    matches = {"names-may": 0.5, "names-june": 0.5, "names-none": 0.5, "no-match": 0.0}
    boosts = time_boosts(question, matches, mentioned, weights)
    assert boosts["names-may"] == pytest.approx(0.5 * 0.4)  # in range, and says when
    assert boosts["names-june"] == pytest.approx(0.5 * 0.1)  # says when only
    assert "names-none" not in boosts
    assert boosts.get("no-match", 0.0) == 0.0
    assert time_boosts(None, matches, mentioned, weights) == {}
    plain = temporal_question("What did we cook in May 2023?", ASKED)
    assert "names-june" not in time_boosts(plain, matches, mentioned, weights)  # names a date, asks no time


def test_the_searchable_text_of_a_message_names_the_day_its_phrase_means() -> None:
    memory = Memory.model_validate(
        {
            "id": "m",
            "tenant_id": "t",
            "user_id": "u",
            "domain": "user",
            "type": "episode",
            "content": "We adopted a kitten yesterday and painted the shed last week.",
            "source": {"kind": "interaction", "interaction_id": "i", "speaker": "Ana"},
            "occurred_at": SAID,
            "mentioned_dates": time_spans("We adopted a kitten yesterday and painted the shed last week.", SAID),
            "created_at": SAID,
            "updated_at": SAID,
            "last_reinforced_at": SAID,
        }
    )
    assert search_text(memory) == (
        "[16 October 2024] Ana: We adopted a kitten yesterday and painted the shed last week. (15 October 2024)"
    )
    assert search_text(memory.model_copy(update={"mentioned_dates": []})).endswith("last week.")
