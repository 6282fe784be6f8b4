"""Identifiers: ULIDs, sortable by creation time, so keys like MEM#{ulid} list newest first without an index."""

from __future__ import annotations

import hashlib
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


def derived_id(parent_id: str, label: str) -> str:
    """A ULID with the parent's timestamp and 80 bits of hash of (parent, label): what is derived from an item (the
    pipeline's memories and decisions, a restored memory) gets the same id each time, so a retried step writes the
    same items.

    Keeping the parent's time part means derived items sort with the interaction they came from (newest-first listings
    stay right); hashing the label means the same step with the same input always names its output the same way.
    """
    digest = hashlib.sha256(f"{parent_id}\x1f{label}".encode()).digest()
    try:
        time_part = ULID.from_str(parent_id).bytes[:6]
    except ValueError:
        # Not a ULID (an id from outside): still deterministic, just not time-ordered.
        time_part = digest[10:16]
    return str(ULID.from_bytes(time_part + digest[:10]))


def keyed_id(at: datetime, *parts: str) -> str:
    """A ULID with `at`'s time part and 80 bits of hash of `parts`: the id of what a keyed request writes (an
    interaction, a memory), so every retry of the request names it the same way.

    `at` is the moment the request was first made (its idempotency record keeps it), so keyed items sort by time
    like any other; the hash of (tenant, user, route, key) makes two keys never name the same item.
    """
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return str(ULID.from_bytes(ULID.from_datetime(at).bytes[:6] + digest[:10]))
