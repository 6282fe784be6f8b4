"""The `rapport-export` format: one JSON object per line, each with a `kind`, after a header line.

What each kind holds is the entity as the service keeps it, less what the line's place already says (the tenant and
end user are the importer's, never the file's) and less what is recomputed (a memory's embedding). docs/data-model.md
("Export format") gives the decisions.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

FORMAT = "rapport-export"
VERSION = 1
HEADER = "header"


class LineKind(StrEnum):
    """The record kinds, in the order an export writes them: what a later kind refers to comes first."""

    PROFILE = "profile"
    STATE = "state"
    MEMORY = "memory"
    EDGE = "edge"
    PERSON = "person"
    INTERACTION = "interaction"
    FILTER_DECISION = "filter_decision"


# Fields a line never carries: whose data it is comes from the request, and vectors are recomputed on import.
OWNER_FIELDS = frozenset({"tenant_id", "user_id"})
OMITTED_MEMORY_FIELDS = OWNER_FIELDS | {"embedding"}


def header(user_id: str, exported_at: datetime, *, next_cursor: str | None = None) -> dict[str, Any]:
    """The first line of an export (and of each page of one: `next_cursor` says whether another page follows)."""
    return {
        "kind": HEADER,
        "format": FORMAT,
        "version": VERSION,
        "user_id": user_id,
        "exported_at": exported_at.isoformat(),
        "kinds": [k.value for k in LineKind],
        "next_cursor": next_cursor,
    }


def record(kind: LineKind, body: dict[str, Any], omit: frozenset[str] = OWNER_FIELDS) -> dict[str, Any]:
    """One line: the kind first, then the entity's fields (JSON-ready) but the omitted ones."""
    return {"kind": kind.value, **{k: v for k, v in body.items() if k not in omit}}
