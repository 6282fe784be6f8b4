"""Identifiers: ULIDs, sortable by creation time, so keys like MEM#{ulid} list newest first without an index."""

from __future__ import annotations

from datetime import datetime

from ulid import ULID


def new_id(at: datetime | None = None) -> str:
    if at is None:
        return str(ULID())
    return str(ULID.from_datetime(at))


def is_valid_id(value: str) -> bool:
    try:
        ULID.from_str(value)
    except ValueError:
        return False
    return True
