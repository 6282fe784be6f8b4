"""Time expressions of a text ("yesterday", "last week", "in May", "two years ago") resolved to absolute date ranges.

A message says when things happened relative to when it was said; a later question asks about them by absolute
dates, or asks "when". Resolving the phrases against the message's own time turns them into data recall can match.
A compact regular expression finds the candidate phrases, so a message without one costs one scan; only a matched
phrase is handed to `dateparser`, and the ranges it cannot give (weekends, seasons, "a few days ago") are computed
here. A phrase is read as the past unless its sentence speaks of the future ("next", "will", "going to", ...).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from rapport.domain.models import DateSpan, Granularity

_MONTHS = "January|February|March|April|June|July|August|September|October|November|December"
_MONTH_SHORT = "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_WEEKDAY_SHORT = "mon|tues|tue|wed|thurs|thur|thu|fri|sat|sun"
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
}  # fmt: skip
_COUNT = r"(?:\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty)"
_APPROXIMATE = r"(?:a\s+few|a\s+couple(?:\s+of)?|couple(?:\s+of)?|several)"
_UNIT = r"(?:day|weekend|week|month|year|decade)s?\b"
_SEASON = r"(?:summer|winter|spring|autumn|fall)"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d{2}"
_MONTH = rf"(?:{_MONTHS}|May)"  # capitalised only: "may" and "march" are verbs too
_BARE_MONTHS = _MONTHS.replace("March|", "")  # alone, without "in" or a day: "March" may start a sentence as a verb

# One alternation, longest forms first; months are matched case-sensitively (a capital tells the month from the
# verb), everything else case-insensitively through inline flags.
_PHRASE = re.compile(
    rf"""
    (?P<ago>(?i:\b(?:{_COUNT}|{_APPROXIMATE})\s+{_UNIT}\s+ago\b))
  | (?P<relative>(?i:\b(?:last|next|this|past|coming)\s+(?:{_UNIT}|{_SEASON}|{_WEEKDAYS}|{_WEEKDAY_SHORT}\b\.?)))
  | (?P<relative_month>(?i:\b(?:last|next|this)\s+)(?:{_MONTH})\b)
  | (?P<date>\b(?:{_DAY}\s+(?:of\s+)?(?:{_MONTH}|(?:{_MONTH_SHORT})\b\.?)|(?:{_MONTH}|(?:{_MONTH_SHORT})\.?)\s+{_DAY}\b)
      (?:,?\s+{_YEAR})?\b)
  | (?P<month_year>\b{_MONTH}\.?,?\s+{_YEAR}\b|\b(?:{_MONTH_SHORT})\.?\s+{_YEAR}\b)
  | (?P<month>(?:(?i:\b(?:in|since|by|during|early|late|mid|until|before|after|of)\s+)(?:{_MONTH})|\b(?:{_BARE_MONTHS}))
      \b(?:,?\s+{_YEAR}\b)?)
  | (?P<year>(?i:\b(?:in|since|by|during|of|from|until|before|after)\s+){_YEAR}\b|\b{_YEAR}\b)
  | (?P<day>(?i:\b(?:yesterday|today|tonight|tomorrow|(?:last|tomorrow)\s+(?:night|morning|afternoon|evening)
      |this\s+(?:morning|afternoon|evening)|the\s+other\s+day)\b))
  | (?P<weekday>(?i:\b(?:on\s+)?(?:{_WEEKDAYS})\b))
    """,
    re.VERBOSE,
)
# Words without one of which no phrase above can match: a set lookup per word is the cheap test every message takes
# (most name no time), before the alternation runs.
_TIME_WORDS = frozenset(
    """
    yesterday today tonight tomorrow ago last next this past coming other monday tuesday wednesday thursday friday
    saturday sunday mon tue tues wed thu thur thurs fri sat sun january february march april may june july august
    september october november december jan feb mar apr jun jul aug sep sept oct nov dec
    """.split()
)
_WORD = re.compile(r"[a-z]+|(?:19|20)\d\d")
_FUTURE = re.compile(
    r"(?i)\b(?:will|shall|going\s+to|gonna|plan(?:ning|s)?|next|upcoming|coming|tomorrow|soon|can't\s+wait|hope\s+to|"
    r"want\s+to|looking\s+forward|excited|intend)\b|['’]ll\b"
)
_RECURRING = re.compile(r"(?i)\b(?:every|each)\s+$")
_SENTENCE_END = re.compile(r"[.!?\n]")
_LEAD_WORDS = re.compile(r"(?i)^(?:in|since|by|during|of|from|until|before|after|on|the)\s+")
# How many a vague count may mean, at least and at most.
_VAGUE_COUNTS = {"couple": (2, 3), "few": (2, 4), "several": (3, 7)}
_SEASON_MONTHS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}
_PERIODS = {"day": Granularity.DAY, "week": Granularity.WEEK, "month": Granularity.MONTH, "year": Granularity.YEAR}


def time_spans(text: str, reference: datetime) -> list[DateSpan]:
    """The time phrases of `text` resolved against `reference` (when the text was said), in text order. A phrase
    that names no resolvable time ("Friday night lights" aside, which reads as a Friday) is left out."""
    spans: list[DateSpan] = []
    if not has_time_phrase(text):
        return spans
    for match in _placing(text):
        phrase = " ".join(match.group(0).split())
        future = _speaks_of_future(text, match.start(), match.end())
        span = _resolved(match.lastgroup or "", phrase, reference, future)
        if span is not None and span not in spans:
            spans.append(span)
    return spans


def has_time_phrase(text: str) -> bool:
    """Whether the text may hold a time phrase: the cheap test before any resolving."""
    found = _WORD.findall(text.lower())
    return not _TIME_WORDS.isdisjoint(found) or any(word[0].isdigit() for word in found)


def says_when(text: str) -> bool:
    """Whether the text places something in time ("last week", "on Monday", "in June"), not as a habit ("every
    Sunday"); without resolving the phrase."""
    return has_time_phrase(text) and next(_placing(text), None) is not None


def tells_of_past(text: str) -> bool:
    """Whether the text places something before it was said ("yesterday", "last Friday", "two years ago"): a time
    phrase that places it, in a sentence that does not look ahead (`_speaks_of_future`); without resolving it."""
    return has_time_phrase(text) and any(not _speaks_of_future(text, m.start(), m.end()) for m in _placing(text))


def _placing(text: str) -> Iterator[re.Match[str]]:
    """The time phrases of the text that place something, in text order: "every Sunday" is a habit, not a date."""
    for match in _PHRASE.finditer(text):
        if not _RECURRING.search(text, max(0, match.start() - 8), match.start()):
            yield match


def _speaks_of_future(text: str, start: int, end: int) -> bool:
    """Whether the phrase's sentence looks ahead: "next", a future auxiliary or a plan, else the past."""
    before = [m.end() for m in _SENTENCE_END.finditer(text, 0, start)]
    after = _SENTENCE_END.search(text, end)
    sentence = text[before[-1] if before else 0 : after.start() if after else len(text)]
    return _FUTURE.search(sentence) is not None


def _resolved(kind: str, phrase: str, reference: datetime, future: bool) -> DateSpan | None:
    today = reference.date()
    lowered = phrase.lower()
    if kind == "relative":
        direct = _relative_range(lowered, today)
        if direct is not None:
            return _span(phrase, *direct)
    if kind == "ago":
        direct = _ago_range(lowered, today)
        if direct is not None:
            return _span(phrase, *direct)
    if kind == "relative_month":
        return _relative_month(phrase, today)
    if kind == "day" and lowered == "the other day":
        return _span(phrase, today - timedelta(days=7), today - timedelta(days=1), Granularity.DAY)
    if kind == "year":
        year = int(re.sub(r"\D", "", phrase)[-4:])
        return _span(phrase, date(year, 1, 1), date(year, 12, 31), Granularity.YEAR)
    if kind == "weekday" and lowered.split()[-1] in {"sun", "sat"}:
        return None
    wording = _LEAD_WORDS.sub("", phrase)
    wording = re.sub(r"(?i)^past\b", "last", re.sub(r"(?i)^coming\b", "next", wording))
    parsed = _parsed(wording, reference.replace(tzinfo=None), "future" if future else "past")
    if parsed is None:
        return None
    point, period = parsed
    granularity = _PERIODS.get(period, Granularity.DAY)
    start, end = _range_of(point, granularity)
    return _span(phrase, start, end, granularity)


def _span(phrase: str, start: date, end: date, granularity: Granularity) -> DateSpan:
    return DateSpan(phrase=phrase, start=start, end=end, granularity=granularity)


def _range_of(point: date, granularity: Granularity) -> tuple[date, date]:
    """The whole period a point stands for: "last week" is that week (Monday to Sunday), "in May" all of May."""
    if granularity is Granularity.WEEK:
        monday = point - timedelta(days=point.weekday())
        return monday, monday + timedelta(days=6)
    if granularity is Granularity.MONTH:
        return point.replace(day=1), point.replace(day=calendar.monthrange(point.year, point.month)[1])
    if granularity is Granularity.YEAR:
        return date(point.year, 1, 1), date(point.year, 12, 31)
    return point, point


def _relative_range(phrase: str, today: date) -> tuple[date, date, Granularity] | None:
    """ "last/next/this/past/coming" + weekend or season, computed here (dateparser gives no range for them);
    None for what dateparser resolves (weeks, months, years, weekdays)."""
    which, _, unit = phrase.partition(" ")
    step = {"last": -1, "past": -1, "next": 1, "coming": 1}.get(which, 0)
    if unit.rstrip("s") == "weekend":
        saturday = today + timedelta(days=(5 - today.weekday()) % 7)  # this weekend's Saturday (today if it is one)
        if today.weekday() == 6:
            saturday = today - timedelta(days=1)
        saturday += timedelta(weeks=step)
        return saturday, saturday + timedelta(days=1), Granularity.WEEKEND
    if unit in _SEASON_MONTHS:
        return _season(unit, today, step)
    return None


def _relative_month(phrase: str, today: date) -> DateSpan:
    """ "last May" is the latest May before this month, "next May" the first after it, "this May" this year's."""
    which, _, name = phrase.partition(" ")
    month = list(calendar.month_name).index(name.strip().capitalize())
    year = today.year
    if which.lower() == "last" and month >= today.month:
        year -= 1
    elif which.lower() == "next" and month <= today.month:
        year += 1
    start, end = _range_of(date(year, month, 1), Granularity.MONTH)
    return _span(phrase, start, end, Granularity.MONTH)


def _season(name: str, today: date, step: int) -> tuple[date, date, Granularity]:
    """A season of the northern hemisphere (meteorological: summer is June to August); "last summer" is the latest
    one that has ended, "next summer" the first to begin after today, "this summer" the one of this year."""
    first, last = _SEASON_MONTHS[name]

    def bounds(year: int) -> tuple[date, date]:
        end_year = year + 1 if last < first else year
        return date(year, first, 1), date(end_year, last, calendar.monthrange(end_year, last)[1])

    year = today.year if not (last < first and today.month <= last) else today.year - 1
    start, end = bounds(year)
    if step < 0 and end >= today:
        start, end = bounds(year - 1)
    elif step > 0 and start <= today:
        start, end = bounds(year + 1)
    return start, end, Granularity.SEASON


def _count(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    return _NUMBER_WORDS.get(word)


def _ago_range(phrase: str, today: date) -> tuple[date, date, Granularity] | None:
    """ "N units ago": that day, week, weekend, month or year; an approximate count ("a few days ago") a range."""
    tokens = phrase.split()
    unit = tokens[-2].rstrip("s")
    vague = next((_VAGUE_COUNTS[t] for t in tokens[:2] if t in _VAGUE_COUNTS), None)
    low, high = vague if vague is not None else (_count(tokens[0]) or 1,) * 2
    if unit == "day":
        return today - timedelta(days=high), today - timedelta(days=low), Granularity.DAY
    if unit == "week":
        start = _range_of(today - timedelta(weeks=high), Granularity.WEEK)[0]
        end = _range_of(today - timedelta(weeks=low), Granularity.WEEK)[1]
        return start, end, Granularity.WEEK
    if unit == "weekend":
        saturday = today - timedelta(days=(today.weekday() - 5) % 7 or 7)  # the latest Saturday before today
        saturday -= timedelta(weeks=high - 1)
        end = saturday + timedelta(weeks=high - low, days=1)
        return saturday, end, Granularity.WEEKEND
    if unit == "month":
        start = _months_before(today, high).replace(day=1)
        end = _range_of(_months_before(today, low), Granularity.MONTH)[1]
        return start, end, Granularity.MONTH
    years = {"year": 1, "decade": 10}[unit]
    return date(today.year - high * years, 1, 1), date(today.year - low * years, 12, 31), Granularity.YEAR


def _months_before(today: date, months: int) -> date:
    index = today.year * 12 + today.month - 1 - months
    return date(index // 12, index % 12 + 1, 1)


@lru_cache(maxsize=4_096)
def _parsed(phrase: str, reference: datetime, prefer: str) -> tuple[date, str] | None:
    """dateparser's reading of one phrase (a point and its period), cached: chats repeat "yesterday" and "last week"
    at the same session time."""
    data = _parser(reference, prefer).get_date_data(phrase)
    if data.date_obj is None:
        return None
    return data.date_obj.date(), str(data.period or "day")


@lru_cache(maxsize=256)
def _parser(reference: datetime, prefer: str) -> Any:
    # Imported here: the recall path of a Lambda function never resolves a message, and the import costs a cold start.
    from dateparser.date import DateDataParser

    settings = {"RELATIVE_BASE": reference, "PREFER_DATES_FROM": prefer, "RETURN_AS_TIMEZONE_AWARE": False}
    return DateDataParser(languages=["en"], settings=settings)


def render_span(span: DateSpan) -> str:
    """A span as the words a question would use: "7 May 2023", "May 2023", "2022", "1 May 2023 to 7 May 2023"."""
    if span.granularity is Granularity.YEAR and span.start.year == span.end.year:
        return str(span.start.year)
    if span.granularity is Granularity.MONTH and (span.start.year, span.start.month) == (span.end.year, span.end.month):
        return span.start.strftime("%B %Y")
    if span.start == span.end:
        return f"{span.start.day} {span.start.strftime('%B %Y')}"
    if span.granularity in (Granularity.MONTH, Granularity.SEASON, Granularity.YEAR):
        return f"{span.start.strftime('%B %Y')} to {span.end.strftime('%B %Y')}"
    return f"{span.start.day} {span.start.strftime('%B %Y')} to {span.end.day} {span.end.strftime('%B %Y')}"
