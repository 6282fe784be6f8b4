"""Read-modify-write of versioned items with optimistic concurrency: concurrent interactions never lose an update.

One item at a time (`modify_item`), or several planned from one batched read and written all or nothing
(`ItemsRead`, `apply_plan`): what the followers of a recorded interaction do, in the interaction's own write.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from rapport.domain.models import Interaction
from rapport.errors import ConflictError, RapportError
from rapport.ports.items import ItemDelete, ItemPut, ItemRef, ItemScope, ItemStore, ItemWrite, StoredItem

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
            back_off(attempt, sleep)
            continue
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


class ItemsRead:
    """Items of one scope read together (one batched read) so that changes can be planned from them. A planner that
    asks for an item not read with the others gets it read on its own. The writes it builds (`put`, `delete`) expect
    the version that was read, so a write made since turns the whole commit into a ConflictError."""

    def __init__(self, items: ItemStore, scope: ItemScope, refs: Iterable[ItemRef] = ()) -> None:
        self._items = items
        self.scope = scope
        wanted = list(dict.fromkeys(refs))
        found = items.get_items(scope, wanted) if wanted else {}
        self._read: dict[ItemRef, StoredItem | None] = {ref: found.get(ref) for ref in wanted}

    def found_any(self) -> bool:
        """Whether any item read so far exists."""
        return any(item is not None for item in self._read.values())

    def get(self, kind: str, key: str) -> StoredItem | None:
        ref = (kind, key)
        if ref not in self._read:
            self._read[ref] = self._items.get_item(self.scope, kind, key)
        return self._read[ref]

    def note(self, item: StoredItem) -> None:
        """An item the planner read itself (a listing), so writes of it expect its version too."""
        self._read[(item.kind, item.key)] = item

    def put(self, kind: str, key: str, body: dict[str, Any], *, expires_at: datetime | None = None) -> ItemPut:
        """The item replaced by `body`, only while it is still as read (0: still absent)."""
        current = self.get(kind, key)
        return ItemPut(
            kind=kind, key=key, body=body, expected_version=current.version if current else 0, expires_at=expires_at
        )

    def delete(self, kind: str, key: str) -> ItemDelete:
        current = self.get(kind, key)
        return ItemDelete(kind=kind, key=key, expected_version=current.version if current else None)

    def take_back(self, writes: Sequence[ItemWrite], *, now: datetime) -> None:
        """Undo `writes`, committed from what was read (a later step of the request failed): each item's previous
        body goes back, newest first, unless someone wrote it since (their write stands: it saw ours). Best effort,
        as the failure being answered is the one to report."""
        for write in reversed(writes):
            previous = self._read.get((write.kind, write.key))
            try:
                if isinstance(write, ItemPut) and previous is None:
                    # Created by us: removed while it is still our version 1.
                    undo = ItemDelete(kind=write.kind, key=write.key, expected_version=1)
                    self._items.write_items(self.scope, [undo], now=now)
                elif isinstance(write, ItemPut) and previous is not None:
                    self._items.put_item(
                        self.scope,
                        write.kind,
                        write.key,
                        previous.body,
                        now=previous.updated_at,
                        expected_version=previous.version + 1,
                        expires_at=previous.expires_at,
                    )
                elif isinstance(write, ItemDelete) and previous is not None:
                    self._items.put_item(
                        self.scope,
                        write.kind,
                        write.key,
                        previous.body,
                        now=previous.updated_at,
                        expected_version=0,
                        expires_at=previous.expires_at,
                    )
            except RapportError:
                logger.warning("could not take back %s %r after a failed request", write.kind, write.key)


@dataclass(frozen=True)
class Plan:
    """What a participant of a recorded interaction's commit contributes: its item writes, and what it does once
    they are stored (`then`, for derived work only: trimming the history past its cap)."""

    writes: list[ItemWrite] = field(default_factory=list)
    then: Callable[[], None] | None = None


def apply_plan(
    items: ItemStore,
    scope: ItemScope,
    refs: Iterable[ItemRef],
    plan: Callable[[ItemsRead], Sequence[ItemWrite]],
    *,
    now: datetime,
    attempts: int,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Read `refs` together, plan the writes from them and write them all or none; a concurrent change makes it read
    again and re-plan (`plan` must be a pure function of what it reads). ConflictError after `attempts` tries."""
    wanted = list(refs)
    for attempt in range(attempts):
        writes = plan(ItemsRead(items, scope, wanted))
        if not writes:
            return
        try:
            items.write_items(scope, writes, now=now)
            return
        except ConflictError:
            back_off(attempt, sleep)
    raise ConflictError(f"items of {scope.user_id or scope.tenant_id!r} kept changing while being updated; retry")


class PlansFromReads(Protocol):
    """What follows an interaction by reading some items and planning writes of them (state, profile, people)."""

    def reads(self, interaction: Interaction) -> Sequence[ItemRef]: ...

    def plan(self, interaction: Interaction, read: ItemsRead) -> Sequence[ItemWrite]: ...


def apply_alone(
    items: ItemStore, follower: PlansFromReads, interaction: Interaction, *, now: datetime, attempts: int
) -> None:
    """A follower's plan read and written on its own (a recorded interaction writes it with the history instead)."""
    apply_plan(
        items,
        ItemScope.of_user(interaction.scope),
        follower.reads(interaction),
        lambda read: follower.plan(interaction, read),
        now=now,
        attempts=attempts,
    )


def back_off(attempt: int, sleep: Callable[[float], None] = time.sleep) -> None:
    """Jittered, growing pause so writers that collided do not collide again in lock step."""
    sleep(random.uniform(0, 0.002 * 2 ** min(attempt, 6)))
