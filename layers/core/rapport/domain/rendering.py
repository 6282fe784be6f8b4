"""How a memory is rendered for keyword search and for embedding: content, and for a message who said it and when."""

from __future__ import annotations

import re

from rapport.domain.models import Memory, SourceKind
from rapport.domain.time_expressions import render_span

# First-person words of a message, and what they become once the speaker's name stands in for them. Contractions come
# first so "I'm" becomes "Caroline is", not "Caroline'm".
_FIRST_PERSON = re.compile(r"\b(?:I['’](?:m|ve|ll|d)|I|[Mm]y|[Mm]ine|myself|me)\b")
_REPLACEMENTS = {"m": "{} is", "ve": "{} has", "ll": "{} will", "d": "{} would"}


def search_text(memory: Memory) -> str:
    """The keyword-searchable text. Speaker and date belong in an episode's: questions name people and times."""
    parts: list[str] = []
    if memory.occurred_at is not None and memory.source.interaction_id is not None:
        parts.append(f"[{memory.occurred_at.strftime('%d %B %Y')}]")
    if memory.source.speaker:
        parts.append(f"{memory.source.speaker}:")
    parts.append(memory.content)
    days = [render_span(span) for span in memory.mentioned_dates if span.start == span.end]
    if days:
        # The day a time phrase stands for ("yesterday" → "7 May 2023"), so a question naming the day finds it. Only
        # days: a week's or a year's words add little to the date above and blur keyword scores (docs/recall.md).
        parts.append(f"({'; '.join(days)})")
    return " ".join(parts)


def in_third_person(text: str, speaker: str) -> str:
    """The message as a note about its speaker: "I got my dog" said by Caroline → "Caroline got Caroline's dog"."""

    def replace(match: re.Match[str]) -> str:
        word = match.group(0)
        if word.lower() in {"my", "mine"}:
            return f"{speaker}'s"
        if len(word) > 1 and word[0] == "I" and word[1] in "'’":
            return _REPLACEMENTS[word[2:]].format(speaker)
        return speaker

    return _FIRST_PERSON.sub(replace, text)


def said(speaker: str, text: str) -> str:
    """A message as a note about its speaker: `Caroline said, "Caroline got Caroline's dog"`."""
    return f'{speaker} said, "{in_third_person(text, speaker)}"'


def embedding_text(memory: Memory) -> str:
    """The text a memory is embedded from. A message becomes `Speaker said, "…"` in the third person: a later
    question asks about a person by name ("what did Caroline buy?"), not about "I". No date: a date in the text pulls
    the vector towards every message of that day, which costs more than it brings (docs/BENCHMARKS.md)."""
    speaker = memory.source.speaker
    if memory.source.kind is SourceKind.INTERACTION and speaker:
        return said(speaker, memory.content)
    return search_text(memory)


def reply_embedding_text(memory: Memory) -> str | None:
    """An episode read after the message it follows (None without one): `Melanie said, "…concert…" Caroline said,
    "It was Matt Patterson"`. Blended into the episode's vector, it lets a question about the concert find the reply
    that names the singer, which shares no word with it (docs/recall.md)."""
    before = memory.in_reply_to
    if before is None:
        return None
    return f"{said(before.speaker, before.content)} {embedding_text(memory)}"
