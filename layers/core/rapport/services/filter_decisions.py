"""The constructive filter's decisions: kept as items, listed for audit, and reversible by restoring the original."""

from __future__ import annotations

from collections.abc import Sequence

from rapport.clock import Clock
from rapport.domain.filtering import FilterDecision, Verdict
from rapport.domain.models import Memory, MemoryStatus, Page, Provenance, SourceKind
from rapport.domain.quarantine import QUARANTINE_KEY
from rapport.domain.relations import RelationType
from rapport.domain.scope import Scope
from rapport.errors import ConflictError, InvalidInputError, NotFoundError
from rapport.ids import derived_id
from rapport.ports.items import ItemPut, ItemQuery, ItemScope, ItemStore
from rapport.ports.store import MemoryStore
from rapport.services.edges import EdgeRepository, edge_at
from rapport.services.memories import MemoryService, NewMemory
from rapport.settings import Settings

FILTER_KIND = "FILTER"


class FilterDecisionRepository:
    """Keyed by decision id; the ids carry their interaction's time, so key order is chronological."""

    def __init__(self, items: ItemStore) -> None:
        self._items = items

    def put(self, decision: FilterDecision) -> FilterDecision:
        self._items.put_item(
            ItemScope.of_user(Scope(decision.tenant_id, decision.user_id)),
            FILTER_KIND,
            decision.id,
            decision.model_dump(mode="json"),
            now=decision.restored_at or decision.decided_at,
        )
        return decision

    @staticmethod
    def write(decision: FilterDecision) -> ItemPut:
        """The item write that keeps the decision, for a caller that writes it together with its own items."""
        return ItemPut(kind=FILTER_KIND, key=decision.id, body=decision.model_dump(mode="json"))

    def get_many(self, scope: Scope, decision_ids: Sequence[str]) -> dict[str, FilterDecision]:
        """The stored decisions among the ids, from one batched read."""
        found = self._items.get_items(ItemScope.of_user(scope), [(FILTER_KIND, i) for i in decision_ids])
        return {key: FilterDecision.model_validate(item.body) for (_, key), item in found.items()}

    def get(self, scope: Scope, decision_id: str) -> FilterDecision:
        item = self._items.get_item(ItemScope.of_user(scope), FILTER_KIND, decision_id)
        decision = FilterDecision.model_validate(item.body) if item is not None else None
        if decision is None or not decision.visible_to(scope):
            raise NotFoundError(f"filter decision {decision_id} not found")
        return decision

    def list(self, scope: Scope, *, limit: int, cursor: str | None) -> Page[FilterDecision]:
        page = self._items.list_items(
            ItemScope.of_user(scope),
            ItemQuery(kind=FILTER_KIND, limit=limit, cursor=cursor, descending=True),
        )
        return Page[FilterDecision](
            items=[FilterDecision.model_validate(item.body) for item in page.items], next_cursor=page.next_cursor
        )


class FilterDecisionService:
    def __init__(
        self,
        decisions: FilterDecisionRepository,
        store: MemoryStore,
        memories: MemoryService,
        edges: EdgeRepository,
        settings: Settings,
        clock: Clock,
    ) -> None:
        self._decisions = decisions
        self._store = store
        self._memories = memories
        self._edges = edges
        self._settings = settings
        self._clock = clock

    def list(
        self, scope: Scope, *, limit: int, cursor: str | None, verdict: Verdict | None = None
    ) -> Page[FilterDecision]:
        if not 1 <= limit <= self._settings.max_page_size:
            raise InvalidInputError(f"limit must be between 1 and {self._settings.max_page_size}; got {limit}")
        # The person's decisions are kept together, in time order; those about another assistant's relational
        # memories, and (when asked) those of another verdict, are read through and left out.
        wanted: list[FilterDecision] = []
        while True:
            # Only what the page still lacks, so the cursor stays just past the last decision read.
            page = self._decisions.list(scope, limit=limit - len(wanted), cursor=cursor)
            wanted += [d for d in page.items if d.visible_to(scope) and (verdict is None or d.verdict is verdict)]
            cursor = page.next_cursor
            if len(wanted) >= limit or cursor is None:
                return Page[FilterDecision](items=wanted[:limit], next_cursor=cursor if len(wanted) >= limit else None)

    def get(self, scope: Scope, decision_id: str) -> FilterDecision:
        return self._decisions.get(scope, decision_id)

    def restore(self, scope: Scope, decision_id: str) -> tuple[FilterDecision, Memory]:
        """Store the original the filter blocked or reframed, or lift the quarantine of the memory it quarantined.
        Idempotent: restoring twice returns the same memory."""
        decision = self._decisions.get(scope, decision_id)
        if decision.verdict is Verdict.ALLOWED:
            raise ConflictError(
                f"filter decision {decision_id} allowed the memory as it was: there is nothing to restore"
            )
        if decision.verdict is Verdict.QUARANTINED:
            return self._lift_quarantine(scope, decision)
        memory_id = derived_id(decision.id, "restore")
        memory = self._existing(scope, memory_id)
        if memory is None:
            built = self._memories.build(
                scope,
                NewMemory(
                    content=decision.original,
                    domain=decision.domain,
                    type=decision.type,
                    importance=decision.importance,
                    metadata={"restored_from_decision": decision.id, "restored_verdict": decision.verdict.value},
                    source=Provenance(kind=SourceKind.PIPELINE, interaction_id=decision.interaction_id),
                ),
            )
            memory = self._memories.remember_many(scope, [built.model_copy(update={"id": memory_id})])[0]
        now = self._clock.now()
        self._edges.put(
            scope,
            edge_at(
                memory.id,
                RelationType.DERIVED_FROM,
                decision.interaction_id,
                now,
                transformation="restored",
                confidence=1.0,
            ),
        )
        if decision.restored_memory_id != memory.id:
            decision = self._decisions.put(
                decision.model_copy(update={"restored_memory_id": memory.id, "restored_at": now})
            )
        return decision, memory.without_embedding()

    def _lift_quarantine(self, scope: Scope, decision: FilterDecision) -> tuple[FilterDecision, Memory]:
        """The quarantined memory becomes active (recalled like any other from now on); its marker stays, with when
        it was restored, as its history."""
        if decision.memory_id is None:
            raise ConflictError(f"filter decision {decision.id} stored no memory: there is nothing to restore")
        try:
            memory = self._store.get_memory(scope, decision.memory_id)
        except NotFoundError as exc:
            raise NotFoundError(
                f"memory {decision.memory_id} of filter decision {decision.id} was deleted: there is nothing to restore"
            ) from exc
        now = self._clock.now()
        if memory.status is MemoryStatus.QUARANTINED:
            marker = memory.metadata.get(QUARANTINE_KEY)
            restored = {**(marker if isinstance(marker, dict) else {}), "restored_at": now.isoformat()}
            memory = self._memories.save(
                memory.model_copy(
                    update={
                        "status": MemoryStatus.ACTIVE,
                        "updated_at": now,
                        "metadata": {**memory.metadata, QUARANTINE_KEY: restored},
                    }
                ),
                previous=memory,
            )
        if decision.restored_memory_id != memory.id:
            decision = self._decisions.put(
                decision.model_copy(update={"restored_memory_id": memory.id, "restored_at": now})
            )
        return decision, memory.without_embedding()

    def _existing(self, scope: Scope, memory_id: str) -> Memory | None:
        try:
            return self._store.get_memory(scope, memory_id)
        except NotFoundError:
            return None
