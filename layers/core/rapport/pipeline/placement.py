"""Where a filtered candidate lands: a new memory, a reinforcement of a near-duplicate, or the successor of a fact it
contradicts. Every write is keyed deterministically, so doing it twice changes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rapport.clock import Clock
from rapport.domain.filtering import Verdict
from rapport.domain.lifecycle.decay import reinforce
from rapport.domain.lifecycle.tiers import higher_tier, tier_for
from rapport.domain.models import (
    Domain,
    Interaction,
    Memory,
    MemoryStatus,
    Provenance,
    SourceKind,
    Tier,
    UserMemoryType,
)
from rapport.domain.quarantine import QUARANTINE_KEY, quarantine_marker
from rapport.domain.relations import Edge, RelationType
from rapport.domain.scope import Scope
from rapport.errors import NotFoundError
from rapport.ids import derived_id
from rapport.pipeline.slots import SlotHolder, SlotRepository
from rapport.ports.pipeline import Judged
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import IndexQuery, VectorIndex
from rapport.services.edges import edge_at
from rapport.services.memories import MemoryService, NewMemory
from rapport.settings import Settings

_NEIGHBOURS = 10
_REINFORCED_BY_KEPT = 20  # the last interactions that reinforced a memory, so a rerun does not count one twice


@dataclass(frozen=True)
class Placement:
    memory: Memory
    judged: Judged
    created: bool  # the memory is this interaction's own (written now, or by an earlier run of the same interaction)
    reinforced: bool = False
    invalidated: str | None = None  # the id of the fact this one contradicted
    edges: tuple[Edge, ...] = ()  # the links the placement made, for the store step to write with its other items


def memory_id_for(interaction_id: str, judged: Judged) -> str:
    return derived_id(interaction_id, f"memory|{judged.candidate.domain.value}|{(judged.content or '').lower()}")


class Placer:
    """Builds and places the kept candidates of an interaction; placed in order, a later one sees the earlier ones
    in the index. Memories are written through the memory service only, so store, index and graph move together."""

    def __init__(
        self,
        *,
        store: MemoryStore,
        index: VectorIndex,
        slots: SlotRepository,
        memories: MemoryService,
        clock: Clock,
        settings: Settings,
    ) -> None:
        self._store = store
        self._index = index
        self._slots = slots
        self._memories = memories
        self._clock = clock
        self._settings = settings

    def build(self, interaction: Interaction, judged: Judged) -> Memory:
        """The memory a kept candidate becomes (validated like any memory; not yet embedded or written)."""
        candidate = judged.candidate
        metadata: dict[str, Any] = {
            "extractor": judged.extractor,
            "filter": {
                "decision_id": judged.decision_id,
                "verdict": judged.verdict.value,
                "decided_by": judged.decided_by,
            },
            "observations": 1,
            "observed_at": interaction.occurred_at.isoformat(),
            "evidence": candidate.evidence[:20],
        }
        fallbacks = [reason for reason in (judged.extractor_fallback_reason, judged.fallback_reason) if reason]
        if fallbacks:
            metadata["fallback"] = fallbacks
        if candidate.slot:
            metadata["slot"] = candidate.slot
        if candidate.correction:
            metadata["correction"] = True
        if judged.content != candidate.content:
            metadata["original"] = candidate.content
        quarantined = judged.verdict is Verdict.QUARANTINED
        if quarantined:
            metadata[QUARANTINE_KEY] = quarantine_marker(judged.decided_by, judged.reason)
        built = self._memories.build(
            interaction.scope,
            NewMemory(
                content=judged.content or candidate.content,
                domain=candidate.domain,
                type=candidate.type,
                importance=candidate.importance,
                confidence=candidate.confidence,
                tier=self._tier(candidate.importance, interaction),
                status=MemoryStatus.QUARANTINED if quarantined else MemoryStatus.ACTIVE,
                metadata=metadata,
                # Only events carry their date into the searchable text: a fact or a lesson is the same fact
                # whenever it is observed, and a date in its text would keep its repetitions from being found as
                # near-duplicates.
                occurred_at=interaction.occurred_at if candidate.type == UserMemoryType.EVENT.value else None,
                source=Provenance(
                    kind=SourceKind.PIPELINE,
                    interaction_id=interaction.id,
                    message_index=candidate.evidence[0] if candidate.evidence else None,
                    session_id=interaction.session_id,
                    channel=interaction.channel,
                ),
            ),
        )
        return built.model_copy(update={"id": memory_id_for(interaction.id, judged)})

    def existing(self, interaction: Interaction, memory_ids: list[str]) -> dict[str, Memory]:
        """The memories an earlier run of this interaction already wrote among the built ones, in one read."""
        return {m.id: m for m in self._store.get_memories(interaction.scope, memory_ids)}

    def place(self, interaction: Interaction, judged: Judged, memory: Memory, existing: Memory | None) -> Placement:
        """`memory` is the built, embedded memory for `judged`; `existing`, the stored memory of that id (`existing`),
        if any. Memories are written here; the placement's edges are returned for the caller to write."""
        if existing is not None:
            # An earlier run wrote it: finish what that run may not have (index, edges, contradiction).
            self._memories.store_embedded(existing)
            return self._link_new(interaction, judged, existing, created=True)
        # A quarantined memory is kept apart: it neither counts as another observation of a live memory nor
        # takes a slot from the fact that holds it.
        duplicate = (
            None if memory.status is MemoryStatus.QUARANTINED else self._near_duplicate(interaction, memory, judged)
        )
        if duplicate is not None:
            if duplicate.source.interaction_id == interaction.id:
                return Placement(memory=duplicate, judged=judged, created=True)  # the same observation, said twice
            reinforced, edge = self._reinforce(interaction, duplicate, judged)
            return Placement(memory=reinforced, judged=judged, created=False, reinforced=True, edges=(edge,))
        self._memories.store_embedded(memory)
        return self._link_new(interaction, judged, memory, created=True)

    def _tier(self, importance: float, interaction: Interaction) -> Tier:
        return tier_for(
            importance,
            in_session=interaction.session_id is not None,
            long_term_above=self._settings.pipeline_long_term_importance,
            short_term_above=self._settings.pipeline_short_term_importance,
        )

    # new memories

    def _link_new(self, interaction: Interaction, judged: Judged, memory: Memory, *, created: bool) -> Placement:
        edges = [
            edge_at(
                memory.id,
                RelationType.DERIVED_FROM,
                interaction.id,
                memory.created_at,
                strength=memory.confidence,
                transformation="reframed" if judged.content != judged.candidate.content else "extracted",
                confidence=memory.confidence,
            )
        ]
        invalidated = self._supersede(interaction, judged, memory, edges)
        return Placement(memory=memory, judged=judged, created=created, invalidated=invalidated, edges=tuple(edges))

    def _supersede(self, interaction: Interaction, judged: Judged, memory: Memory, edges: list[Edge]) -> str | None:
        """A single-valued user fact with a new value invalidates the old one: kept as history, linked, not deleted."""
        slot = judged.candidate.slot
        if memory.domain is not Domain.USER or not slot or memory.status is MemoryStatus.QUARANTINED:
            return None
        holder = self._slots.holder(interaction.scope, slot)
        old_id = holder.memory_id if holder else None
        invalidated: str | None = None
        old = self._get(interaction, old_id) if old_id and old_id != memory.id else None
        if old is not None:
            if old.status is MemoryStatus.ACTIVE and not _same(old.content, memory.content):
                now = self._clock.now()
                marked = old.model_copy(
                    update={
                        "status": MemoryStatus.INVALIDATED,
                        "updated_at": now,
                        "metadata": {**old.metadata, "invalidated_by": memory.id, "invalidated_at": now.isoformat()},
                    }
                )
                self._memories.save(marked, previous=old)
                invalidated = old.id
            elif old.metadata.get("invalidated_by") == memory.id:
                invalidated = old.id  # a rerun after a crash: the invalidation happened, finish linking it
            if invalidated:
                reason = "corrected by the user" if judged.candidate.correction else f"a newer value for {slot}"
                edges.append(edge_at(old.id, RelationType.INVALIDATED_BY, memory.id, memory.created_at, reason=reason))
        if old_id != memory.id:
            self._slots.hold(
                interaction.scope, slot, SlotHolder(memory_id=memory.id, content=memory.content), now=memory.created_at
            )
        return invalidated

    # near-duplicates

    def _near_duplicate(self, interaction: Interaction, memory: Memory, judged: Judged) -> Memory | None:
        assert memory.embedding is not None
        tenant, user = interaction.tenant_id, interaction.user_id
        query = IndexQuery(tenant_id=tenant, user_id=user, domains=(memory.domain,), k=_NEIGHBOURS)
        threshold = self._settings.pipeline_duplicate_similarity
        scores = {hit.memory_id: hit.score for hit in self._index.knn_search(query, memory.embedding)}
        close = [memory_id for memory_id, score in scores.items() if score >= threshold]
        if not close:
            return None
        found = self._store.get_memories(Scope(tenant, user), close)
        eligible = [
            m
            for m in found
            if m.status is MemoryStatus.ACTIVE
            and m.type != UserMemoryType.EPISODE.value  # what was said is history, not a memory to reinforce
            and not _other_value_of_slot(m, judged)
        ]
        return max(eligible, key=lambda m: scores[m.id], default=None)

    def _reinforce(self, interaction: Interaction, existing: Memory, judged: Judged) -> tuple[Memory, Edge]:
        """Strength up (bounded at 1.0), one more observation, a REINFORCES edge; counted once per interaction, and
        not lost to another pipeline reinforcing the same memory at the same moment (written only over the value it
        was computed from)."""
        settings = self._settings
        now = self._clock.now()

        def observed(current: Memory) -> Memory | None:
            seen_by = [str(i) for i in current.metadata.get("reinforced_by", [])]
            if interaction.id in seen_by:
                return None  # a rerun of this interaction: counted already
            importance = max(current.importance, judged.candidate.importance)
            # governance: the step adds to today's decayed strength, and the decay restarts from now
            stronger = reinforce(current, now, settings.pipeline_reinforcement_step, settings.governance)
            return stronger.model_copy(
                update={
                    "importance": importance,
                    "tier": higher_tier(current.tier, self._tier(importance, interaction)),
                    "updated_at": now,
                    "metadata": {
                        **current.metadata,
                        "observations": int(current.metadata.get("observations", 1)) + 1,
                        "reinforced_by": [*seen_by, interaction.id][-_REINFORCED_BY_KEPT:],
                    },
                }
            )

        # One write carries the new strength and the marker, so a rerun cannot count this interaction twice.
        existing = self._memories.rewrite(existing, observed)
        edge = edge_at(
            interaction.id,
            RelationType.REINFORCES,
            existing.id,
            existing.last_reinforced_at,
            strength=judged.candidate.confidence,
            observations=int(existing.metadata.get("observations", 1)),
        )
        return existing, edge

    def _get(self, interaction: Interaction, memory_id: str) -> Memory | None:
        try:
            return self._store.get_memory(interaction.scope, memory_id)
        except NotFoundError:
            return None


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def _other_value_of_slot(existing: Memory, judged: Judged) -> bool:
    """ "User lives in New York" is close to "User lives in New Jersey" in any embedding; for a single-valued fact
    a different value is a contradiction, never a repetition."""
    slot = judged.candidate.slot
    return bool(slot) and existing.metadata.get("slot") == slot and not _same(existing.content, judged.content or "")
