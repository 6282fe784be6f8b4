"""The retention cap on conversation history: a running message count per end user, and trimming the oldest."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from rapport.domain.lifecycle.retention import messages_over_cap, oldest_to_trim
from rapport.domain.models import Interaction
from rapport.domain.scope import Scope
from rapport.errors import ConflictError, NotFoundError
from rapport.jobs.plans import PlanDirectory
from rapport.ports.items import ItemRef, ItemScope, ItemStore, ItemWrite
from rapport.ports.store import MemoryStore
from rapport.services.memories import MemoryService
from rapport.services.versioned_items import ItemsRead, modify_item

logger = logging.getLogger(__name__)

COUNTER_KIND = "MESSAGE_COUNT"
COUNTER_KEY = ""  # one count per end user
_PAGE = 100


class MessageCount(BaseModel):
    """The running count of an end user's messages, which the cap is checked against after each interaction."""

    messages: int = 0


@dataclass(frozen=True)
class StoredCount:
    count: MessageCount
    version: int


class MessageCountRepository:
    def __init__(self, items: ItemStore, *, attempts: int) -> None:
        self._items = items
        self._attempts = attempts

    def get(self, scope: ItemScope) -> StoredCount | None:
        """The count and its version, or None before the first count."""
        item = self._items.get_item(scope, COUNTER_KIND, COUNTER_KEY)
        return StoredCount(MessageCount.model_validate(item.body), item.version) if item else None

    def put(self, scope: ItemScope, count: MessageCount, *, now: datetime, expected_version: int) -> None:
        """ConflictError when the count changed since it was read at `expected_version` (0: not there yet)."""
        body = count.model_dump(mode="json")
        self._items.put_item(scope, COUNTER_KIND, COUNTER_KEY, body, now=now, expected_version=expected_version)

    def add(self, scope: ItemScope, messages: int, *, now: datetime) -> None:
        """Add (or, negative, take away) messages; the count never goes below 0."""

        def added(body: dict[str, Any] | None) -> dict[str, Any]:
            current = MessageCount.model_validate(body or {})
            return MessageCount(messages=max(current.messages + messages, 0)).model_dump(mode="json")

        modify_item(self._items, scope, COUNTER_KIND, COUNTER_KEY, added, now=now, attempts=self._attempts)


class Trim(BaseModel):
    """What enforcing the cap did for one end user."""

    messages_before: int = 0
    cap: int | None = None
    interactions: list[str] = Field(default_factory=list)  # removed from the history
    messages: int = 0
    episodes: list[str] = Field(default_factory=list)  # the removed messages' memories


class HistoryRetention:
    """Counts messages as they are recorded (the count is written with each interaction, from the batched read
    before it), so the check costs no request of its own; the nightly sweep recounts from the history itself and
    repairs whatever a skipped update left."""

    def __init__(
        self, store: MemoryStore, items: ItemStore, memories: MemoryService, plans: PlanDirectory, *, attempts: int
    ) -> None:
        self._store = store
        self._counts = MessageCountRepository(items, attempts=attempts)
        self._memories = memories  # deleting through the service takes the index entry and the edges too
        self._plans = plans

    def reads(self, interaction: Interaction) -> list[ItemRef]:
        """What `plan` builds on: the running count."""
        return [(COUNTER_KIND, COUNTER_KEY)]

    def plan(self, interaction: Interaction, read: ItemsRead) -> tuple[ItemWrite, int]:
        """The count with this interaction's messages in it, as a write made with the interaction (so the count
        moves exactly when the history does), and that count."""
        item = read.get(COUNTER_KIND, COUNTER_KEY)
        if item is None:
            # First count for this user (or after an erasure): the history so far, which this interaction joins.
            before = sum(len(i.messages) for i in self._history(interaction.scope))
        else:
            before = MessageCount.model_validate(item.body).messages
        total = max(before + len(interaction.messages), 0)
        return read.put(COUNTER_KIND, COUNTER_KEY, MessageCount(messages=total).model_dump(mode="json")), total

    def over_smallest_cap(self, total: int) -> bool:
        """Whether any plan could trim a history of `total` messages (below the smallest cap, none reads a plan)."""
        smallest = self._plans.smallest_cap()
        return smallest is not None and total > smallest

    def enforce(self, scope: Scope, total: int, now: datetime) -> Trim:
        """Trim the oldest interactions past the user's cap, once the count says `total` (this interaction's
        included, as stored with it)."""
        cap = self._plans.max_messages(scope)
        excess = messages_over_cap(total, cap)
        trim = Trim(messages_before=total, cap=cap)
        if excess:
            self._trim(scope, self._history(scope), excess, trim)
            self._count_down(ItemScope.of_user(scope), trim.messages, now)
        return trim

    def sweep(self, scope: Scope, now: datetime) -> Trim:
        """Recount from the history, trim to the cap, and write the exact count."""
        item_scope = ItemScope.of_user(scope)
        before = self._counts.get(item_scope)
        history = list(self._history(scope))
        total = sum(len(i.messages) for i in history)
        cap = self._plans.max_messages(scope)
        trim = Trim(messages_before=total, cap=cap)
        excess = messages_over_cap(total, cap)
        if excess:
            self._trim(scope, iter(history), excess, trim)
        exact = MessageCount(messages=total - trim.messages)
        if before is not None and before.count == exact:
            return trim  # already right: a second run writes nothing
        try:
            self._counts.put(item_scope, exact, now=now, expected_version=before.version if before else 0)
        except ConflictError:
            # An interaction arrived during the sweep and counted itself; tonight's count is already stale, and the
            # running count stays close enough until the next sweep.
            logger.info(
                "message count of %s/%s changed during the sweep; left as it is", scope.tenant_id, scope.user_id
            )
        return trim

    def _history(self, scope: Scope) -> Iterator[Interaction]:
        cursor: str | None = None
        while True:
            page = self._store.list_interactions(scope, limit=_PAGE, cursor=cursor, oldest_first=True)
            yield from page.items
            cursor = page.next_cursor
            if cursor is None:
                return

    def _trim(self, scope: Scope, oldest_first: Iterator[Interaction], excess: int, trim: Trim) -> None:
        by_id: dict[str, Interaction] = {}

        def sizes() -> Iterator[tuple[str, int]]:
            for interaction in oldest_first:
                by_id[interaction.id] = interaction
                yield interaction.id, len(interaction.messages)

        for interaction_id in oldest_to_trim(sizes(), excess):
            interaction = by_id[interaction_id]
            # Episodes first, the history item last: a run stopped in between leaves the interaction listed, so
            # the next run finds and finishes it instead of leaving its episodes behind.
            for memory_id in interaction.memory_ids:
                try:
                    self._memories.delete(scope, memory_id)
                    trim.episodes.append(memory_id)
                except NotFoundError:
                    continue
            try:
                self._store.delete_interaction(scope, interaction_id)
            except NotFoundError:
                continue  # a concurrent trim took it; it counts there
            trim.interactions.append(interaction_id)
            trim.messages += len(interaction.messages)

    def _count_down(self, scope: ItemScope, removed: int, now: datetime) -> None:
        if removed:
            self._counts.add(scope, -removed, now=now)
