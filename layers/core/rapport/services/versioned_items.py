"""Read-modify-write of one item with optimistic concurrency: concurrent interactions never lose an update."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from rapport.errors import ConflictError
from rapport.ports.items import ItemScope, ItemStore, StoredItem

# body of the current item (None when there is none) -> the new body, or None to leave the item as it is
Change = Callable[[dict[str, Any] | None], dict[str, Any] | None]


def modify_item(
    items: ItemStore,
    scope: ItemScope,
    kind: str,
    key: str,
    change: Change,
    *,
    now: datetime,
    attempts: int,
    sleep: Callable[[float], None] = time.sleep,
) -> StoredItem | None:
    """Apply `change` to the current body and write it back only if nobody wrote in between; otherwise read
    again and re-apply (the change must be a pure function of the body). Raises ConflictError when the item
    keeps changing for `attempts` tries. Returns the stored item (the current one when nothing changed)."""
    for attempt in range(attempts):
        current = items.get_item(scope, kind, key)
        body = change(current.body if current else None)
        if body is None:
            return current
        try:
            return items.put_item(scope, kind, key, body, now=now, expected_version=current.version if current else 0)
        except ConflictError:
            # Jittered, growing pause so writers that collided do not collide again in lock step.
            sleep(random.uniform(0, 0.002 * 2 ** min(attempt, 6)))
    raise ConflictError(f"{kind} {key!r} changed {attempts} times while being updated; retry the request")
