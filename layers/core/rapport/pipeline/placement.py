"""Where a filtered candidate lands: a new memory, a reinforcement of a near-duplicate, or the successor of a fact it
contradicts. Every write is keyed deterministically, so doing it twice changes nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rapport.clock import Clock
from rapport.domain.filtering import Verdict
from rapport.domain.lifecycle.decay import reinforce
from rapport.domain.lifecycle.tiers import higher_tier, tier_for
from rapport.domain.models import (
    DateSpan,
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
from rapport.domain.time_expressions import time_spans
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
    invalidated: tuple[str, ...] = ()  # the ids of the facts this one contradicted or ended
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
        content = judged.content or candidate.content
        built = self._memories.build(
            interaction.scope,
            NewMemory(
                content=content,
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
                mentioned_dates=_mentioned_dates(content, candidate.type, candidate.evidence, interaction)
                if self._settings.resolve_message_dates
                else [],
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

    def _supersede(
        self, interaction: Interaction, judged: Judged, memory: Memory, edges: list[Edge]
    ) -> tuple[str, ...]:
        """A single-valued user fact with a new value invalidates the old one, and an update of fact ("I moved from
        Berlin", "I no longer work at Acme") the memories stating the value it ends: kept as history, linked with
        the reason, never deleted.

        An update that only ends a value ("User no longer works at Acme": it names the value it replaces) ends the
        memories stating that value, not whatever holds the slot now — the user may have said Globex since. An
        update with no slot of its own ("User left Acme for Globex") takes the slot of the fact it ended."""
        candidate = judged.candidate
        if memory.domain is not Domain.USER or memory.status is MemoryStatus.QUARANTINED:
            return ()
        invalidated: list[str] = []
        ended_slots: list[str] = []
        if candidate.replaces:
            reason = candidate.change or f"no longer {candidate.replaces}"
            for stating in self._stating(interaction, candidate.replaces, candidate.slot, memory):
                if self._invalidate(stating, memory, edges, reason):
                    invalidated.append(stating.id)
                    ended_slots += [str(stating.metadata["slot"])] if stating.metadata.get("slot") else []
        slot = candidate.slot or next(iter(ended_slots), None)
        if not slot:
            return tuple(invalidated)
        holder = self._slots.holder(interaction.scope, slot)
        old_id = holder.memory_id if holder else None
        ends_only = bool(candidate.replaces) and _mentions(memory.content, candidate.replaces or "")
        old = self._get(interaction, old_id) if old_id and old_id != memory.id else None
        if old is not None and old.id not in invalidated and not ends_only:
            if candidate.change:
                reason = candidate.change
            else:
                reason = "corrected by the user" if candidate.correction else f"a newer value for {slot}"
            if self._invalidate(old, memory, edges, reason):
                invalidated.append(old.id)
        takes_slot = not ends_only or old_id is None or old_id in invalidated
        if old_id != memory.id and takes_slot:
            self._slots.hold(
                interaction.scope, slot, SlotHolder(memory_id=memory.id, content=memory.content), now=memory.created_at
            )
        return tuple(invalidated)

    def _invalidate(self, old: Memory, memory: Memory, edges: list[Edge], reason: str) -> bool:
        """`old` invalidated by `memory` with the reason (and linked); False when it was not `memory`'s to end."""
        if old.status is MemoryStatus.ACTIVE and not _same(old.content, memory.content):
            now = self._clock.now()
            marked = old.model_copy(
                update={
                    "status": MemoryStatus.INVALIDATED,
                    "updated_at": now,
                    "metadata": {
                        **old.metadata,
                        "invalidated_by": memory.id,
                        "invalidated_at": now.isoformat(),
                        "invalidated_reason": reason,
                    },
                }
            )
            self._memories.save(marked, previous=old)
        elif old.metadata.get("invalidated_by") != memory.id:
            return False  # a rerun after a crash finds its own invalidation done and finishes linking it
        edges.append(edge_at(old.id, RelationType.INVALIDATED_BY, memory.id, memory.created_at, reason=reason))
        return True

    def _stating(self, interaction: Interaction, value: str, slot: str | None, memory: Memory) -> list[Memory]:
        """The user's live facts and preferences that state `value` ("User works at Acme" for Acme): of the update's
        own slot when it has one, else of any slot but where the user comes from (that does not change)."""
        query = IndexQuery(
            tenant_id=interaction.tenant_id,
            user_id=interaction.user_id,
            domains=(Domain.USER,),
            statuses=(MemoryStatus.ACTIVE.value, MemoryStatus.INVALIDATED.value),
            k=_NEIGHBOURS,
        )
        found_ids = [hit.memory_id for hit in self._index.keyword_search(query, value) if hit.memory_id != memory.id]
        stating: list[Memory] = []
        for old in self._store.get_memories(interaction.scope, found_ids) if found_ids else []:
            old_slot = old.metadata.get("slot")
            if (
                old.type in _UPDATABLE_TYPES
                and _mentions(old.content, value)
                and not _ENDED_WORDING.search(old.content)
                and (old_slot == slot if slot else old_slot not in _LASTING_SLOTS)
            ):
                stating.append(old)
        return sorted(stating, key=lambda m: m.id)

    # near-duplicates

    def _near_duplicate(self, interaction: Interaction, memory: Memory, judged: Judged) -> Memory | None:
        assert memory.embedding is not None
        tenant, user = interaction.tenant_id, interaction.user_id
        query = IndexQuery(
            tenant_id=tenant, user_id=user, domains=(memory.domain,), k=_NEIGHBOURS, agent_id=interaction.agent_id
        )
        threshold = self._settings.pipeline_duplicate_similarity
        scores = {hit.memory_id: hit.score for hit in self._index.knn_search(query, memory.embedding)}
        close = [memory_id for memory_id, score in scores.items() if score >= threshold]
        if not close:
            return None
        found = self._store.get_memories(interaction.scope, close)
        eligible = [
            m
            for m in found
            if m.status is MemoryStatus.ACTIVE
            and m.visible_to(interaction.scope)  # another assistant's relationship is not this one's to reinforce
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


# What an update of fact can end: a lasting truth or a taste, not an event that happened or a goal.
_UPDATABLE_TYPES = frozenset({UserMemoryType.FACT.value, UserMemoryType.PREFERENCE.value})
# Slots that no change of the present ends: moving from Berlin does not change where the user is from.
_LASTING_SLOTS = frozenset({"origin", "hometown", "birthplace", "nationality", "name", "birthday"})
# A memory already saying the value ended, or saying it with a negative, is not the statement to end.
_ENDED_WORDING = re.compile(
    r"(?i)\b(?:no longer|not|never|used to|stopped|quit|left|gave up|switched from|dislikes|hates|instead of)\b"
    r"|n['’]t\b"
)


def _mentions(content: str, value: str) -> bool:
    """Whether the memory names the value as a whole phrase, whatever the case: "Acme" is in "User works at Acme",
    not in "User works at Acmeville"."""
    return bool(re.search(rf"(?<![\w]){re.escape(value.strip())}(?![\w])", content, flags=re.IGNORECASE))


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def _other_value_of_slot(existing: Memory, judged: Judged) -> bool:
    """ "User lives in New York" is close to "User lives in New Jersey" in any embedding; for a single-valued fact
    a different value is a contradiction, never a repetition."""
    slot = judged.candidate.slot
    return bool(slot) and existing.metadata.get("slot") == slot and not _same(existing.content, judged.content or "")


def _mentioned_dates(content: str, memory_type: str, evidence: list[int], interaction: Interaction) -> list[DateSpan]:
    """The dates the memory's words name, resolved as of the interaction; an event whose extracted words dropped the
    time phrase ("went to the support group" from "…yesterday") keeps those of the messages it was read from."""
    spans = time_spans(content, interaction.occurred_at)
    if spans or memory_type != UserMemoryType.EVENT.value:
        return spans
    said = [interaction.messages[i].content for i in evidence if 0 <= i < len(interaction.messages)]
    found = [span for text in said for span in time_spans(text, interaction.occurred_at)]
    return list(dict.fromkeys(found))
