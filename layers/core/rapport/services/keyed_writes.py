"""The write use cases under an Idempotency-Key: record an interaction, remember a memory or a batch, once per key.

What a keyed write keeps as its answer is ids and statuses, never content; a replay reads the items back, so it
answers what is stored now (a memory changed since shows its change) and holds no end user's words of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from rapport.domain.scope import Scope
from rapport.errors import NotFoundError
from rapport.ids import derived_id
from rapport.ports.items import ItemScope
from rapport.ports.pipeline import PipelineRun
from rapport.ports.store import MemoryStore
from rapport.services.idempotency import IdempotentRequests, KeyedRequest, RemainingTime
from rapport.services.interactions import InteractionService, NewInteraction, RecordedInteraction
from rapport.services.memories import BatchItem, MemoryService, NewMemory


@dataclass(frozen=True)
class Keyed:
    """A write's answer: `replayed` True when an earlier attempt of the keyed request had written it, False for a
    keyed request's first answer, None for a request without a key (run as it always was)."""

    value: Any
    replayed: bool | None


class KeyedWrites:
    def __init__(
        self,
        *,
        once: IdempotentRequests,
        interactions: InteractionService,
        memories: MemoryService,
        store: MemoryStore,
    ) -> None:
        self._once = once
        self._interactions = interactions
        self._memories = memories
        self._store = store

    def record(
        self,
        scope: Scope,
        new: NewInteraction,
        keyed: KeyedRequest | None,
        *,
        wait: bool,
        deadline: RemainingTime | None = None,
        expires_after: timedelta | None = None,
    ) -> Keyed:
        """`InteractionService.record` under the key: the interaction's id (and its episodes') derive from it."""
        if keyed is None:
            return Keyed(self._interactions.record(scope, new, wait=wait), None)
        fresh: list[RecordedInteraction] = []

        def write(interaction_id: str) -> dict[str, Any]:
            recorded = self._interactions.record(scope, new, wait=wait, interaction_id=interaction_id)
            fresh.append(recorded)
            run = recorded.pipeline
            return {
                "interaction_id": recorded.interaction.id,
                "pipeline": run.model_dump(mode="json", exclude={"memories"}) if run is not None else None,
            }

        once = self._once.run(ItemScope.of_user(scope), keyed, write, deadline=deadline, expires_after=expires_after)
        if fresh:
            return Keyed(fresh[0], fresh[0].replayed)
        run = once.value.get("pipeline")
        pipeline = PipelineRun.model_validate(run) if run is not None else None
        return Keyed(self._interactions.recorded(scope, str(once.value["interaction_id"]), pipeline), True)

    def remember(
        self, scope: Scope, new: NewMemory, keyed: KeyedRequest | None, *, deadline: RemainingTime | None = None
    ) -> Keyed:
        """`MemoryService.remember` under the key: the memory's id derives from it."""
        if keyed is None:
            return Keyed(self._memories.remember(scope, new), None)
        stored_before: list[bool] = []

        def write(memory_id: str) -> dict[str, Any]:
            if self._exists(scope, memory_id):
                stored_before.append(True)  # an earlier attempt wrote it, then stopped before answering
            else:
                self._memories.remember(scope, new.model_copy(update={"id": memory_id}))
            return {"memory_id": memory_id}

        once = self._once.run(ItemScope.of_user(scope), keyed, write, deadline=deadline)
        memory = self._memories.get(scope, str(once.value["memory_id"])).without_embedding()
        return Keyed(memory, once.replayed or bool(stored_before))

    def remember_batch(
        self, scope: Scope, news: list[NewMemory], keyed: KeyedRequest | None, *, deadline: RemainingTime | None = None
    ) -> Keyed:
        """`MemoryService.remember_batch` under the key: memory `i`'s id derives from the key and `i`."""
        if keyed is None:
            return Keyed(self._memories.remember_batch(scope, news), None)
        stored_before: list[bool] = []

        def write(batch_id: str) -> dict[str, Any]:
            named = [n.model_copy(update={"id": derived_id(batch_id, f"memory#{i}")}) for i, n in enumerate(news)]
            # One read for the whole batch: what an earlier attempt that stopped half way already wrote stays, the
            # rest is written now (a memory it refused is refused again, for the same reason).
            stored = {m.id for m in self._store.get_memories(scope, [str(n.id) for n in named])}
            if stored:
                stored_before.append(True)
            todo = [i for i, n in enumerate(named) if n.id not in stored]
            written = self._memories.remember_batch(scope, [named[i] for i in todo])
            outcome: dict[int, dict[str, Any]] = {
                i: {"index": i, "memory_id": named[i].id, "error": None} for i in range(len(named))
            }
            for position, item in zip(todo, written, strict=True):
                outcome[position]["memory_id"] = item.memory.id if item.memory else None
                outcome[position]["error"] = item.error
            return {"results": [outcome[i] for i in range(len(named))]}

        once = self._once.run(ItemScope.of_user(scope), keyed, write, deadline=deadline)
        ids = [str(r["memory_id"]) for r in once.value["results"] if r["memory_id"]]
        found = {m.id: m.without_embedding() for m in self._store.get_memories(scope, ids)}
        items = [
            BatchItem(index=r["index"], memory=found.get(r["memory_id"]) if r["memory_id"] else None, error=r["error"])
            for r in once.value["results"]
        ]
        return Keyed(items, once.replayed or bool(stored_before))

    def _exists(self, scope: Scope, memory_id: str) -> bool:
        try:
            self._store.get_memory(scope, memory_id)
        except NotFoundError:
            return False
        return True
