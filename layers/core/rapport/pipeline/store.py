"""Step 4, store: embed, place each kept memory (new, reinforced or superseding), link it, keep every decision."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from rapport.clock import Clock
from rapport.domain.filtering import FilterDecision, Verdict
from rapport.domain.models import Domain, Interaction, Memory, MemoryStatus
from rapport.domain.quarantine import DETECTOR, QUARANTINE_KEY, withheld_messages
from rapport.domain.relations import Edge, RelationType
from rapport.domain.webhooks import OutboundEventType
from rapport.errors import InvalidInputError
from rapport.ids import derived_id
from rapport.pipeline.placement import Placement, Placer
from rapport.pipeline.runs import PipelineRunRepository
from rapport.ports.embedder import Embedder
from rapport.ports.pipeline import Judged, PipelineRun, PipelineState, PipelineStatus, StoreOutcome
from rapport.ports.store import MemoryStore
from rapport.ports.webhooks import OutboundEvents
from rapport.services.edges import EdgeRepository, edge_at
from rapport.services.embedding import embed_memories
from rapport.services.filter_decisions import FilterDecisionRepository
from rapport.services.memories import MemoryService

_ASSOCIATIONS_KEPT = 50  # a memory reinforced by many conversations would otherwise list every one of them


@dataclass(frozen=True)
class Stored:
    """The store step's outcome, and (in process) the memories it names, as written: the answer shows them without
    reading them back. `memories` is None for a run completed before, whose memories are read."""

    outcome: StoreOutcome
    memories: list[Memory] | None = None


class Store:
    """`placer` decides where each kept memory lands; memories are written through `memories` only."""

    def __init__(
        self,
        *,
        store: MemoryStore,
        embedder: Embedder,
        placer: Placer,
        memories: MemoryService,
        edges: EdgeRepository,
        decisions: FilterDecisionRepository,
        runs: PipelineRunRepository,
        clock: Clock,
        events: OutboundEvents | None = None,
    ) -> None:
        self._events = events
        self._store = store
        self._embedder = embedder
        self._placer = placer
        self._memories = memories
        self._edges = edges
        self._decisions = decisions
        self._runs = runs
        self._clock = clock

    def __call__(self, state: PipelineState) -> StoreOutcome:
        """The state machine's task: everything read from the store."""
        return self.store(state).outcome

    def store(
        self,
        state: PipelineState,
        interaction: Interaction | None = None,
        *,
        run: PipelineRun | None = None,
        first_attempt: bool = False,
    ) -> Stored:
        """`interaction` and `run`: the interaction and the run's item as the open step left them (in process); read
        from the store when not given. `first_attempt`: the open step found no earlier attempt of this run, so no
        memory or decision of this interaction can be stored yet. Reads: the interaction (again), the memories an
        earlier attempt wrote and its decisions (not on a first attempt), the near-duplicates; writes: the
        memories, then every edge, decision and the run's item in one write."""
        if run is None:
            run = self._runs.get(state.scope, state.interaction_id)
        if run is not None and run.status is PipelineStatus.COMPLETED and run.outcome is not None:
            return Stored(run.outcome.model_copy(update={"skipped": True}))
        if state.filtered is None:
            raise InvalidInputError("the store step needs the filter's outcome under 'filtered'")
        if interaction is None:
            interaction = self._store.get_interaction(state.scope, state.interaction_id)
        kept = [j for j in state.filtered.judged if j.verdict is not Verdict.BLOCKED and j.content]

        built = [self._placer.build(interaction, j) for j in kept]
        # One embedding call for the whole batch, before any write: if the model is down, nothing has been written.
        vectors = embed_memories(self._embedder, built, reply_weight=0.0)  # extracted memories are not replies
        # The embedding call can take seconds (retries), and an erasure of this user may have run meanwhile: look
        # again right before the first write, so a run in flight does not bring back what the erasure removed
        # (NotFoundError, a permanent failure: the interaction is gone).
        # No registration of the user here: the interaction still exists, and the user is registered with it (an
        # erasure removes the registration last).
        self._store.get_interaction(state.scope, state.interaction_id)
        existing = {} if first_attempt else self._placer.existing(interaction, [m.id for m in built])
        placements: list[Placement] = []
        for j, m, v in zip(kept, built, vectors, strict=True):
            placed = self._placer.place(interaction, j, m.model_copy(update={"embedding": v}), existing.get(m.id))
            existing.setdefault(placed.memory.id, placed.memory)  # a later candidate of the same id sees it
            placements.append(placed)
        associated, associations = self._associate(interaction, placements)
        edges = [edge for p in placements for edge in p.edges] + associations
        decisions = self._decisions_of(
            interaction, state.filtered.judged, placements, self._quarantined(interaction), first_attempt=first_attempt
        )

        outcome = StoreOutcome(
            interaction_id=interaction.id,
            stored=_unique(p.memory.id for p in placements if p.created),
            reinforced=_unique(p.memory.id for p in placements if p.reinforced),
            invalidated=_unique(i for p in placements for i in p.invalidated),
            decisions=[d.id for d in decisions],
        )
        completed = self._runs.completed_record(outcome, run)
        self._edges.put_many(
            interaction.scope,
            edges,
            with_items=[*(self._decisions.write(d) for d in decisions), self._runs.write(completed)],
        )
        # As for any stored memory: the graph links the new ones (similar, preceding, patterns); idempotent.
        created = {p.memory.id: p.memory for p in placements if p.created}
        self._memories.announce_stored(interaction.scope, list(created.values()))
        if self._events is not None:
            data = {
                "user_id": interaction.scope.user_id,
                "interaction_id": interaction.id,
                "stored": len(outcome.stored),
                "reinforced": len(outcome.reinforced),
                "invalidated": len(outcome.invalidated),
            }
            self._events.emit(interaction.scope.tenant_id, OutboundEventType.INTERACTION_PROCESSED, data)
        written = {p.memory.id: p.memory for p in placements} | associated
        named = [*outcome.stored, *outcome.reinforced]
        return Stored(outcome, [written[i] for i in named if i in written])

    def _associate(self, interaction: Interaction, placements: list[Placement]) -> tuple[dict[str, Memory], list[Edge]]:
        """Cross-domain association: each relational memory of the interaction with each of its user memories, both
        in `associations` (the memories so written, returned by id) and as RELATES_TO edges (returned, for the
        caller to write), so recalling one brings the other along."""
        associated: dict[str, Memory] = {}
        by_id = {p.memory.id: p.memory for p in placements if p.memory.status is not MemoryStatus.QUARANTINED}
        users = [m for m in by_id.values() if m.domain is Domain.USER]
        relational = [m for m in by_id.values() if m.domain is Domain.RELATIONAL]
        if not users or not relational:
            return associated, []
        now = self._clock.now()
        edges = [
            edge_at(r.id, RelationType.RELATES_TO, u.id, now, context=f"same interaction ({interaction.id})")
            for r in relational
            for u in users
        ]
        for memory in [*relational, *users]:
            partners = users if memory.domain is Domain.RELATIONAL else relational
            merged = _unique([*memory.associations, *(p.id for p in partners)])[-_ASSOCIATIONS_KEPT:]
            if merged != memory.associations:
                # The index holds no associations, so only the store is written.
                current = self._store.get_memory(memory.scope, memory.id)
                saved = self._memories.save(current.model_copy(update={"associations": merged}), previous=current)
                associated[saved.id] = saved
        return associated, edges

    def _quarantined(self, interaction: Interaction) -> list[Memory]:
        """The episodes of the interaction quarantined when it was recorded (or since restored), so the filter's
        decisions list them too; read only when some message reads as instructions, so an ordinary conversation
        costs no read."""
        if not withheld_messages(interaction.messages):
            return []
        return [
            m
            for m in self._store.get_memories(interaction.scope, interaction.memory_ids)
            if isinstance(m.metadata.get(QUARANTINE_KEY), dict)
        ]

    def _decisions_of(
        self,
        interaction: Interaction,
        judged: list[Judged],
        placements: list[Placement],
        episodes: list[Memory],
        *,
        first_attempt: bool,
    ) -> list[FilterDecision]:
        memory_of = {p.judged.decision_id: p.memory for p in placements}
        now = self._clock.now()
        of_episodes = [_episode_decision(interaction, episode, now) for episode in episodes]
        # Decisions are stored with the run's completion: a first attempt has none whose restore it must keep.
        ids = [j.decision_id for j in judged] + [d.id for d in of_episodes]
        earlier = {} if first_attempt else self._decisions.get_many(interaction.scope, ids)
        decisions: list[FilterDecision] = []
        for j in judged:
            memory: Memory | None = memory_of.get(j.decision_id)
            fallbacks = [reason for reason in (j.extractor_fallback_reason, j.fallback_reason) if reason]
            decision = FilterDecision(
                id=j.decision_id,
                tenant_id=interaction.tenant_id,
                user_id=interaction.user_id,
                interaction_id=interaction.id,
                domain=j.candidate.domain,
                type=j.candidate.type,
                verdict=j.verdict,
                reason=j.reason,
                original=j.candidate.content,
                content=j.content,
                importance=j.candidate.importance,
                decided_by=j.decided_by,
                fallback_reason="; ".join(fallbacks) or None,
                memory_id=memory.id if memory else None,
                decided_at=now,
                agent_id=interaction.agent_id,
            )
            decisions.append(decision)
        decisions += of_episodes
        return [_as_restored(decision, earlier.get(decision.id)) for decision in decisions]


def _as_restored(decision: FilterDecision, previous: FilterDecision | None) -> FilterDecision:
    """A rerun must not forget that a person already restored this one."""
    if previous is None or not previous.restored_memory_id:
        return decision
    return decision.model_copy(
        update={"restored_memory_id": previous.restored_memory_id, "restored_at": previous.restored_at}
    )


def _episode_decision(interaction: Interaction, episode: Memory, now: datetime) -> FilterDecision:
    """The decision that lists a quarantined episode: the message as said, stored and quarantined."""
    marker = episode.metadata[QUARANTINE_KEY]
    return FilterDecision(
        id=derived_id(interaction.id, f"filter|episode|{episode.id}"),
        tenant_id=interaction.tenant_id,
        user_id=interaction.user_id,
        interaction_id=interaction.id,
        domain=episode.domain,
        type=episode.type,
        verdict=Verdict.QUARANTINED,
        reason=str(marker.get("reason", "Quarantined: reads as instructions to the assistant."))[:500],
        original=episode.content,
        content=episode.content,
        importance=episode.importance,
        decided_by=str(marker.get("detector", DETECTOR)),
        memory_id=episode.id,
        decided_at=now,
        agent_id=interaction.agent_id,
    )


def _unique(ids: Iterable[str | None]) -> list[str]:
    return list(dict.fromkeys(i for i in ids if i))
