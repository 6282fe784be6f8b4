"""The LoCoMo dataset as typed records, with its known evidence-id defects normalised and counted."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# Category numbers of the LoCoMo release; 5 (adversarial, no answer in the conversation) is reported on its own.
CATEGORY_NAMES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SCORED_CATEGORIES: tuple[int, ...] = (1, 2, 3, 4)

_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    position: int  # 0-based place in its session
    speaker: str
    text: str
    caption: str | None  # the machine caption of a shared image (BLIP), when the turn carries one


@dataclass(frozen=True)
class Session:
    number: int
    occurred_at: datetime
    date_text: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]  # normalised dia_ids that exist in the conversation
    answer: str


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def turns(self) -> list[Turn]:
        return [turn for session in self.sessions for turn in session.turns]


@dataclass
class EvidenceDefects:
    """How many evidence strings needed repair, and what was dropped; reported beside the figures."""

    split: int = 0  # "D8:6; D9:17": several ids in one string
    reformatted: int = 0  # "D:11:26", "D30:05": repaired to the canonical "D11:26", "D30:5"
    unknown: int = 0  # well-formed or not, no such turn in the conversation: dropped
    without_evidence: Counter[int] = field(default_factory=Counter)  # questions left with none, by category

    def as_dict(self) -> dict[str, Any]:
        return {
            "split": self.split,
            "reformatted": self.reformatted,
            "unknown_dropped": self.unknown,
            "questions_without_evidence": dict(sorted(self.without_evidence.items())),
        }


def parse_session_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' → an aware datetime (UTC: the dataset gives no zone)."""
    return datetime.strptime(text.strip(), _DATE_FORMAT).replace(tzinfo=UTC)


def normalise_evidence(raw: list[Any], known: set[str], defects: EvidenceDefects) -> frozenset[str]:
    """Canonical dia_ids ("D<session>:<turn>", no leading zeros) that exist; the rest counted and dropped."""
    found: set[str] = set()
    for entry in raw:
        pieces = [p for p in re.split(r"[;,\s]+", str(entry)) if p]
        if len(pieces) > 1:
            defects.split += 1
        for piece in pieces:
            match = _DIA_ID.fullmatch(piece)
            if match is None:
                defects.unknown += 1
                continue
            canonical = f"D{int(match.group(1))}:{int(match.group(2))}"
            if canonical != piece:
                defects.reformatted += 1
            if canonical in known:
                found.add(canonical)
            else:
                defects.unknown += 1
    return frozenset(found)


def _sessions(conversation: dict[str, Any]) -> tuple[Session, ...]:
    sessions: list[Session] = []
    # Iterate the session keys themselves, not the `_date_time` keys: a few dates exist for sessions without turns.
    for key, value in conversation.items():
        match = _SESSION_KEY.fullmatch(key)
        if match is None or not isinstance(value, list) or not value:
            continue
        number = int(match.group(1))
        date_text = str(conversation[f"{key}_date_time"])
        turns = tuple(
            Turn(
                dia_id=str(raw["dia_id"]),
                session=number,
                position=position,
                speaker=str(raw["speaker"]),
                text=str(raw.get("text") or ""),
                caption=str(raw["blip_caption"]) if raw.get("blip_caption") else None,
            )
            for position, raw in enumerate(value)
        )
        sessions.append(Session(number, parse_session_date(date_text), date_text, turns))
    return tuple(sorted(sessions, key=lambda s: s.number))


class LocomoFormatError(ValueError):
    """The file is not LoCoMo as released: what is wrong and where, for a person to fix (not a traceback)."""


def load_locomo(path: Path) -> tuple[list[Conversation], EvidenceDefects]:
    """Every conversation of the file, and the evidence repairs made while reading it."""
    try:
        samples = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LocomoFormatError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(samples, list):
        raise LocomoFormatError(f"{path} holds a {type(samples).__name__}; LoCoMo is a list of samples")
    defects = EvidenceDefects()
    conversations: list[Conversation] = []
    for position, sample in enumerate(samples):
        try:
            conversations.append(_conversation(sample, defects))
        except (KeyError, TypeError, ValueError) as exc:
            name = sample.get("sample_id", f"#{position}") if isinstance(sample, dict) else f"#{position}"
            raise LocomoFormatError(f"sample {name} of {path}: {type(exc).__name__} {exc}") from exc
    return conversations, defects


def _conversation(sample: dict[str, Any], defects: EvidenceDefects) -> Conversation:
    """One sample: its sessions and its questions, evidence repaired (the repairs are counted in `defects`)."""
    raw = sample["conversation"]
    sessions = _sessions(raw)
    known = {turn.dia_id for session in sessions for turn in session.turns}
    questions = []
    for qa in sample["qa"]:
        category = int(qa["category"])
        evidence = normalise_evidence(list(qa.get("evidence") or []), known, defects)
        if not evidence:
            defects.without_evidence[category] += 1
        answer = qa.get("answer", qa.get("adversarial_answer", ""))
        questions.append(Question(str(qa["question"]), category, evidence, str(answer)))
    return Conversation(
        sample_id=str(sample["sample_id"]),
        speakers=(str(raw["speaker_a"]), str(raw["speaker_b"])),
        sessions=sessions,
        questions=tuple(questions),
    )
