"""Temporal questions: which questions ask about time, and what a candidate's dates add to its match for them."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from rapport.domain.models import DateSpan
from rapport.domain.time_expressions import time_spans
from rapport.settings import RecallTimeWeights

# What makes a question ask for a time: "when did…", "how long ago…", "what year…", "how many weeks since…".
_ASKS_WHEN = re.compile(
    r"(?i)\b(?:when\b|since\s+when\b|how\s+long\b|how\s+many\s+(?:days|weeks|months|years)\b"
    r"|(?:what|which)\s+(?:year|month|day|date|week|weekend|season|time\s+of\s+year)\b|what\s+time\b)"
)
_EARLIEST, _LATEST = date.min, date.max


@dataclass(frozen=True)
class TemporalQuestion:
    """What a question says about time: whether it asks for one, and the ranges of dates it names ("in May 2023",
    "last year", "before June": inclusive, an open side as date.min or date.max)."""

    asks_when: bool
    ranges: tuple[tuple[date, date], ...] = ()

    @property
    def names_dates(self) -> bool:
        return bool(self.ranges)


def temporal_question(text: str, now: datetime) -> TemporalQuestion | None:
    """The question's time, or None for a question that neither asks for a time nor names one. Relative words of the
    question ("last year") are resolved against `now`, when it is asked."""
    ranges = tuple(_range_of(span) for span in time_spans(text, now))
    asks_when = _ASKS_WHEN.search(text) is not None
    if not asks_when and not ranges:
        return None
    return TemporalQuestion(asks_when=asks_when, ranges=ranges)


def _range_of(span: DateSpan) -> tuple[date, date]:
    """A span's range, opened by its lead word: "before June" is everything up to the end of May, "after 2021"
    everything from 2022 on, "since May" May onwards."""
    lead = span.phrase.split()[0].lower()
    if lead in {"before", "until"}:
        return _EARLIEST, span.start - timedelta(days=1)
    if lead in {"after", "since"}:
        return span.end + timedelta(days=1) if lead == "after" else span.start, _LATEST
    return span.start, span.end


def in_ranges(mentioned: Sequence[DateSpan], ranges: tuple[tuple[date, date], ...]) -> bool:
    """Whether a date the candidate names lies in one of the ranges. The day a message was said does not count:
    its searchable text already starts with that date, which keyword search matches against the question's."""
    return any(span.start <= high and low <= span.end for span in mentioned for low, high in ranges)


def time_boosts(
    question: TemporalQuestion | None,
    matches: Mapping[str, float],
    mentioned: Mapping[str, Sequence[DateSpan]],
    weights: RecallTimeWeights,
) -> dict[str, float]:
    """What time adds to each candidate's score, as a share of its own query match (so time lifts what already
    matches the event words, and never a memory that matches nothing):

    - in range: `in_range` × match when the question names dates and a date the candidate names falls among them;
    - dated: `dated` × match when the question asks for a time and the candidate's words place an event in time
      ("yesterday", "last week"): the answer to "when did she…" is in the message that says when.
    """
    if question is None:
        return {}
    boosts: dict[str, float] = {}
    for memory_id, spans in mentioned.items():
        if not spans:
            continue
        share = 0.0
        if question.names_dates and in_ranges(spans, question.ranges):
            share += weights.in_range
        if question.asks_when:
            share += weights.dated
        if share > 0:
            boosts[memory_id] = share * matches.get(memory_id, 0.0)
    return boosts
