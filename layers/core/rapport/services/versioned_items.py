"""Read-modify-write of one item with optimistic concurrency: concurrent interactions never lose an update."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel

from rapport.errors import ConflictError, RapportError
from rapport.ports.items import ItemScope, ItemStore, StoredItem

logger = logging.getLogger(__name__)

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
            written = items.put_item(
                scope, kind, key, body, now=now, expected_version=current.version if current else 0
            )
        except ConflictError:
            # Jittered, growing pause so writers that collided do not collide again in lock step.
            sleep(random.uniform(0, 0.002 * 2 ** min(attempt, 6)))
            continue
        undo = _undo_log.get()
        if undo is not None:
            undo.append(_Written(items, scope, kind, key, current, written))
        return written
    raise ConflictError(f"{kind} {key!r} changed {attempts} times while being updated; retry the request")


ModelT = TypeVar("ModelT", bound=BaseModel)


def modify_model(
    items: ItemStore,
    scope: ItemScope,
    kind: str,
    key: str,
    model: type[ModelT],
    change: Callable[[ModelT | None], ModelT],
    *,
    now: datetime,
    attempts: int,
) -> ModelT:
    """`modify_item` for an item kept as one pydantic model: `change` gets the stored model (None when there is
    none) and returns the new one, which is always written."""

    def body_change(body: dict[str, Any] | None) -> dict[str, Any]:
        current = model.model_validate(body) if body is not None else None
        return dict(change(current).model_dump(mode="json"))

    item = modify_item(items, scope, kind, key, body_change, now=now, attempts=attempts)
    assert item is not None  # body_change always writes
    return model.model_validate(item.body)


@dataclass(frozen=True)
class _Written:
    items: ItemStore
    scope: ItemScope
    kind: str
    key: str
    previous: StoredItem | None
    written: StoredItem

    def undo(self) -> None:
        """Put the previous body back, unless someone wrote after us (their write stands: it saw ours)."""
        if self.previous is None:
            current = self.items.get_item(self.scope, self.kind, self.key)
            if current is not None and current.version == self.written.version:
                self.items.delete_item(self.scope, self.kind, self.key)
            return
        self.items.put_item(
            self.scope,
            self.kind,
            self.key,
            self.previous.body,
            now=self.previous.updated_at,
            expected_version=self.written.version,
            expires_at=self.previous.expires_at,
        )


# The changes `modify_item` made while an `undoable()` block is open, in this thread or task.
_undo_log: ContextVar[list[_Written] | None] = ContextVar("rapport_undo_log", default=None)


@contextmanager
def undoable() -> Iterator[None]:
    """Every `modify_item` inside the block is taken back, newest first, if the block raises: a use case whose later
    step fails leaves no earlier step's change behind. Taking back a change somebody has since built on is skipped
    (and logged): their write already counted ours."""
    log: list[_Written] = []
    token = _undo_log.set(log)
    try:
        yield
    except BaseException:
        for written in reversed(log):
            try:
                written.undo()
            except RapportError:
                logger.warning("could not take back %s %r after a failed request", written.kind, written.key)
        raise
    finally:
        _undo_log.reset(token)
