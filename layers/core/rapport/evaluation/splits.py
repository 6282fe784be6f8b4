"""The evaluation's conversations in two sets: a tuning set that rules and weights may be chosen on, and a check set
that only confirms them.

A conversation is in the tuning set when its sample id is named in the tuning list, and in the check set otherwise:
the five development conversations split three to two, and a file of conversations held back (other ids) is all
check set, with no list to edit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rapport.evaluation.metrics import QuestionScore, summarise_by_category

# Fixed by sample id (the first three of the development file, in its order), not by position or by score.
TUNING_IDS: tuple[str, ...] = ("conv-26", "conv-30", "conv-41")
TUNING, CHECK, ALL = "tuning", "check", "all"
SET_LABELS = {TUNING: "tuning set", CHECK: "check set", ALL: "all conversations"}


def parse_ids(text: str) -> tuple[str, ...]:
    """`--tuning-ids conv-26,conv-30`: comma- or space-separated sample ids; an empty text names none."""
    return tuple(dict.fromkeys(piece for piece in text.replace(",", " ").split() if piece))


def set_of(sample_id: str, tuning_ids: Sequence[str] = TUNING_IDS) -> str:
    return TUNING if sample_id in tuning_ids else CHECK


def members(sample_ids: Sequence[str], tuning_ids: Sequence[str] = TUNING_IDS) -> dict[str, list[str]]:
    """The sample ids of each set that has any, in run order: a set with no conversation is left out, not zero."""
    grouped: dict[str, list[str]] = {TUNING: [], CHECK: []}
    for sample_id in sample_ids:
        grouped[set_of(sample_id, tuning_ids)].append(sample_id)
    return {name: ids for name, ids in grouped.items() if ids}


def summarise_sets(
    scores: Mapping[str, Sequence[QuestionScore]], tuning_ids: Sequence[str] = TUNING_IDS
) -> dict[str, dict[str, Any]]:
    """Per set (tuning, check), from each conversation's scores: its conversations, overall and by category."""
    summaries: dict[str, dict[str, Any]] = {}
    for name, ids in members(list(scores), tuning_ids).items():
        overall, by_category = summarise_by_category([s for sample_id in ids for s in scores[sample_id]])
        summaries[name] = {"conversations": ids, "overall": overall, "by_category": by_category}
    return summaries
