"""Quarantine of what reads as instructions to the assistant: the detector, and how a quarantined memory is marked.

What people say is data for the reply, never instructions to the model. Text that addresses the assistant with
orders, poses as part of its prompt, or asks for data to leave is kept (in the history and as an episode: nothing a
person said is lost) but quarantined: never recalled into a prompt, never turned into a lesson, listed among the
filter decisions and restorable by the tenant. The rules are data (`instruction_rules`); this module applies them.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rapport.domain.instruction_rules import REASONS, RULES, Family
from rapport.domain.models import Message, MessageRole

# Who judged a quarantine: the rules below, whatever language model the pipeline uses besides.
DETECTOR = "rules:instructions"
# The metadata key of a quarantined memory: the rule that matched, its family and the reason given.
QUARANTINE_KEY = "quarantine"
MAX_EXCERPT_CHARS = 80

# Zero-width and direction characters hide a word from a pattern without changing what a model reads.
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"))
# Look-alikes of the brackets and quotes a prompt is built with (the reply context's own defanging among them).
_LOOKALIKES = str.maketrans(
    {
        "‹": "<",
        "›": ">",
        "«": "<",
        "»": ">",
        "＜": "<",
        "＞": ">",
        "〈": "<",
        "〉": ">",
        "’": "'",
        "‘": "'",
        "ʼ": "'",
        "“": '"',
        "”": '"',
    }
)
_BLANKS = re.compile(r"[^\S\n]+")


@dataclass(frozen=True)
class Finding:
    """Why a text reads as instructions: the rule that matched, its family, a reason a person can follow, and the
    words that matched (cut short)."""

    rule: str
    family: Family
    excerpt: str

    def describe(self) -> str:
        """The reason shown with a filter decision."""
        return (
            f"Quarantined: reads as instructions to the assistant — it {REASONS[self.family]} "
            f'(rule {self.rule}: "{self.excerpt}"). Kept, never recalled into a prompt until restored.'
        )

    def marker(self) -> dict[str, Any]:
        """What a quarantined memory carries under `metadata.quarantine`."""
        return quarantine_marker(DETECTOR, self.describe(), rule=self.rule, family=self.family.value)


@functools.cache
def _compiled() -> tuple[tuple[str, Family, re.Pattern[str]], ...]:
    return tuple((name, family, re.compile(pattern, re.MULTILINE)) for name, family, pattern in RULES)


def normalised(text: str) -> str:
    """The text as the rules read it: compatibility forms folded (full-width letters, ligatures), invisible
    characters dropped, look-alike brackets and quotes made plain, lower case, one space between words, line breaks
    kept (a role label counts at the start of a line)."""
    folded = unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_LOOKALIKES).lower()
    return "\n".join(line.strip() for line in _BLANKS.sub(" ", folded.replace("\r", "\n")).split("\n"))


def instructions_in(text: str) -> Finding | None:
    """The first rule the text matches, or None when it reads as something said about or to a person. Read as
    written, then, when nothing matched, with its words unmasked (`unmasked`)."""
    if not text.strip():
        return None
    plain = normalised(text)
    masked = _SPLIT_WORD.search(plain) or _MIXED_WORD.search(plain)
    readings = (plain, unmasked(plain)) if masked else (plain,)
    for reading in readings:
        for name, family, pattern in _compiled():
            match = pattern.search(reading)
            if match is not None:
                excerpt = " ".join(match.group(0).split())
                if len(excerpt) > MAX_EXCERPT_CHARS:
                    excerpt = excerpt[: MAX_EXCERPT_CHARS - 1] + "…"
                return Finding(rule=name, family=family, excerpt=excerpt)
    return None


# A word masked so no pattern reads it while a model still does: split by hyphens, dots or underscores between
# letters ("ig-nore", "s.y.s.t.e.m"), or with digits and symbols for letters ("1gn0r3", "pr0mpt", "$ecrets").
_SPLIT_WORD = re.compile(r"(?<=[a-z])[-._](?=[a-z])")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
_MIXED_WORD = re.compile(r"[\w@$]*(?:[a-z][0-9@$]|[0-9@$][a-z])[\w@$]*")


def unmasked(plain: str) -> str:
    """`plain` with split words joined and the digits and symbols of words that mix them with letters read as the
    letters they stand for. Only a second reading: "covid-19" or a product code may read oddly, but only what a rule
    then matches counts."""
    joined = _SPLIT_WORD.sub("", plain)
    return _MIXED_WORD.sub(lambda word: word.group(0).translate(_LEET), joined)


def quarantine_marker(detector: str, reason: str, **details: str) -> dict[str, Any]:
    """`metadata.quarantine` of a quarantined memory: who judged it (the rules, or the filter's model), why, and the
    rule that matched when the rules did. Kept after a restore, with `restored_at`, as the memory's history."""
    return {"detector": detector, "reason": reason, **details}


def withheld_messages(messages: Sequence[Message]) -> frozenset[int]:
    """The positions of the messages an extractor must not read: what reads as instructions never becomes a lesson
    or a fact, whoever asks the model. System messages are the tenant's own and are not read as people's words."""
    return frozenset(
        position
        for position, message in enumerate(messages)
        if message.role is not MessageRole.SYSTEM and instructions_in(message.content) is not None
    )
