"""The retention cap on conversation history: a running message count per end user, and trimming the oldest."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from datetime import datetime

from pydantic import BaseModel, Field

from rapport.domain.lifecycle.retention import messages_over_cap, oldest_to_trim
from rapport.domain.models import Interaction
from rapport.errors import ConflictError, NotFoundError
from rapport.jobs.plans import PlanDirectory
from rapport.ports.items import ItemScope, ItemStore
from rapport.ports.store import MemoryStore
from rapport.services.memories import MemoryService
from rapport.services.versioned_items import modify_item

logger = logging.getLogger(__name__)

COUNTER_KIND = "MESSAGE_COUNT"
_PAGE = 100


class Trim(BaseModel):
    """What enforcing the cap did for one end user."""

    messages_before: int = 0
    cap: int | None = None
    interactions: list[str] = Field(default_factory=list)  # removed from the history
    messages: int = 0
    episodes: list[str] = Field(default_factory=list)  # the removed messages' memories


class HistoryRetention:
    """Counts messages as they are recorded, so the check after each interaction is one read and one write; the
    nightly sweep recounts from the history itself and repairs whatever a failed or concurrent update left."""

    def __init__(
        self, store: MemoryStore, items: ItemStore, memories: MemoryService, plans: PlanDirectory, *, attempts: int
    ) -> None:
        self._store = store
        self._items = items
        self._memories = memories  # deleting through the service takes the index entry and the edges too
        self._plans = plans
        self._attempts = attempts

    def after_interaction(self, interaction: Interaction, now: datetime) -> Trim:
        tenant_id, user_id = interaction.tenant_id, interaction.user_id
        scope = ItemScope(tenant_id=tenant_id, user_id=user_id)
        if self._items.get_item(scope, COUNTER_KIND, "") is None:
            # First count for this user (or after an erasure): the history, this interaction included.
            total = sum(len(i.messages) for i in self._history(tenant_id, user_id))
            # A concurrent first count may win the race; it counted this interaction too.
            with contextlib.suppress(ConflictError):
                self._items.put_item(scope, COUNTER_KIND, "", {"messages": total}, now=now, expected_version=0)
        else:
            added = len(interaction.messages)
            modify_item(
                self._items,
                scope,
                COUNTER_KIND,
                "",
                lambda body: {"messages": int((body or {}).get("messages", 0)) + added},
                now=now,
                attempts=self._attempts,
            )
        counter = self._items.get_item(scope, COUNTER_KIND, "")
        total = int(counter.body.get("messages", 0)) if counter else 0
        cap = self._plans.max_messages(tenant_id, user_id)
        excess = messages_over_cap(total, cap)
        trim = Trim(messages_before=total, cap=cap)
        if excess:
            self._trim(tenant_id, user_id, self._history(tenant_id, user_id), excess, trim)
            self._count_down(scope, trim.messages, now)
        return trim

    def sweep(self, tenant_id: str, user_id: str, now: datetime) -> Trim:
        """Recount from the history, trim to the cap, and write the exact count."""
        scope = ItemScope(tenant_id=tenant_id, user_id=user_id)
        before = self._items.get_item(scope, COUNTER_KIND, "")
        history = list(self._history(tenant_id, user_id))
        total = sum(len(i.messages) for i in history)
        cap = self._plans.max_messages(tenant_id, user_id)
        trim = Trim(messages_before=total, cap=cap)
        excess = messages_over_cap(total, cap)
        if excess:
            self._trim(tenant_id, user_id, iter(history), excess, trim)
        exact = {"messages": total - trim.messages}
        if before is not None and before.body == exact:
            return trim  # already right: a second run writes nothing
        try:
            self._items.put_item(
                scope, COUNTER_KIND, "", exact, now=now, expected_version=before.version if before else 0
            )
        except ConflictError:
            # An interaction arrived during the sweep and counted itself; tonight's count is already stale, and the
            # running count stays close enough until the next sweep.
            logger.info("message count of %s/%s changed during the sweep; left as it is", tenant_id, user_id)
        return trim

    def _history(self, tenant_id: str, user_id: str) -> Iterator[Interaction]:
        cursor: str | None = None
        while True:
            page = self._store.list_interactions(tenant_id, user_id, limit=_PAGE, cursor=cursor, oldest_first=True)
            yield from page.items
            cursor = page.next_cursor
            if cursor is None:
                return

    def _trim(self, tenant_id: str, user_id: str, oldest_first: Iterator[Interaction], excess: int, trim: Trim) -> None:
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
                    self._memories.delete(tenant_id, user_id, memory_id)
                    trim.episodes.append(memory_id)
                except NotFoundError:
                    continue
            try:
                self._store.delete_interaction(tenant_id, user_id, interaction_id)
            except NotFoundError:
                continue  # a concurrent trim took it; it counts there
            trim.interactions.append(interaction_id)
            trim.messages += len(interaction.messages)

    def _count_down(self, scope: ItemScope, removed: int, now: datetime) -> None:
        if not removed:
            return
        modify_item(
            self._items,
            scope,
            COUNTER_KIND,
            "",
            lambda body: {"messages": max(int((body or {}).get("messages", 0)) - removed, 0)},
            now=now,
            attempts=self._attempts,
        )
