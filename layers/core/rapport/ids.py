"""Identifiers: ULIDs, sortable by creation time, so keys like MEM#{ulid} list newest first without an index."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from datetime import UTC, datetime

from ulid import ULID

_RANDOM_BITS = 80
_REMEMBERED_INSTANTS = 1024
_monotonic = threading.Lock()
# The random part of the last id made at each of the latest instants, so ids of one instant keep counting up even when
# ids of other instants (a fixed clock's and the real one's) are made in between.
_last_random: OrderedDict[int, int] = OrderedDict()


def new_id(at: datetime | None = None) -> str:
    """A ULID at `at` (now when None). Ids made in one process within one millisecond count up from a random start
    (the spec's monotonic mode), so items written in one instant (under a fixed clock, or a fast loop) list in the
    order they were made."""
    moment = at if at is not None else datetime.now(UTC)
    milliseconds = int(moment.timestamp() * 1000)
    with _monotonic:
        last = _last_random.get(milliseconds)
        if last is not None and last + 1 < 1 << _RANDOM_BITS:
            random_part = last + 1
            _last_random.move_to_end(milliseconds)
        else:
            random_part = int.from_bytes(os.urandom(_RANDOM_BITS // 8), "big")
        _last_random[milliseconds] = random_part
        if len(_last_random) > _REMEMBERED_INSTANTS:
            _last_random.popitem(last=False)
    return str(ULID.from_bytes(milliseconds.to_bytes(6, "big") + random_part.to_bytes(_RANDOM_BITS // 8, "big")))


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
