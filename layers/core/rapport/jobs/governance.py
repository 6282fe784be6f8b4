"""The four governance jobs for one end user (decay, compress, consolidate, retention), each idempotent for a given
`as_of`: run twice, the second run changes nothing; stopped half-way, the next run finishes the work."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime

from rapport.clock import Clock
from rapport.domain.lifecycle.consolidation import may_consolidate
from rapport.domain.lifecycle.crossings import crossed_threshold, decay_to_persist
from rapport.domain.lifecycle.decay import decayed_to
from rapport.domain.lifecycle.derived import Operation
from rapport.domain.lifecycle.tiers import is_conversation_message, leaving_short_term, working_memory_over
from rapport.domain.models import LIVE_STATUSES, Domain, Interaction, Memory, MemoryStatus
from rapport.domain.scope import Scope
from rapport.errors import NotFoundError, RapportError
from rapport.jobs.derivations import Derivation, Derivations
from rapport.jobs.history import HistoryRetention
from rapport.jobs.lease import UserLease
from rapport.jobs.merging import Merging
from rapport.jobs.plans import PlanDirectory
from rapport.jobs.report import JobName, JobReport
from rapport.jobs.summarize import Summarizer
from rapport.ports.items import ItemRef, ItemStore
from rapport.ports.language_model import LanguageModel
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import VectorIndex
from rapport.services.memories import MemoryService
from rapport.services.sessions import SessionService
from rapport.services.versioned_items import ItemsRead, Plan
from rapport.settings import Settings

logger = logging.getLogger(__name__)

_PAGE = 100
_ALL_DOMAINS = (Domain.USER, Domain.RELATIONAL)


class GovernanceJobs:
    def __init__(
        self,
        *,
        store: MemoryStore,
        items: ItemStore,
        memories: MemoryService,
        index: VectorIndex,
        sessions: SessionService,
        settings: Settings,
        clock: Clock,
        language_model: LanguageModel | None = None,
    ) -> None:
        self._store = store
        self._memories_writer = memories
        self._sessions = sessions
        self._settings = settings.governance
        self.plans = PlanDirectory(items, self._settings)
        self.derivations = Derivations(items, store, memories)
        self.history = HistoryRetention(store, items, memories, self.plans, attempts=settings.relational.write_attempts)
        self._merging = Merging(
            self.derivations, Summarizer(language_model, self._settings.summary_max_chars), self._settings
        )
        self._lease = UserLease(items, clock, self._settings.lease_minutes)
        self._clock = clock

    def run(self, job: JobName, scope: Scope, as_of: datetime, *, run_id: str = "") -> JobReport:
        """One job for one end user as of `as_of`, holding the user against other jobs while it writes."""
        report = JobReport(job=job, as_of=as_of, users=1)
        holder = f"{job.value}:{run_id or as_of.isoformat()}"
        if job is JobName.DECAY:
            # Most days nothing crosses a threshold: the memories are read, and nothing at all is written, not
            # even the lease.
            crossed = self._crossings(scope, as_of, report)
            if crossed:
                with self._lease.hold(scope, holder):
                    self._decay(scope, crossed, as_of, report)
            return report
        with self._lease.hold(scope, holder):
            if job is JobName.COMPRESS:
                self._merging.resume_open(scope, as_of, report)
                memories = [decayed_to(m, as_of, self._settings) for m in self._memories(scope)]
                report.examined = len(memories)
                self._merging.compress(memories, as_of, report)
            elif job is JobName.CONSOLIDATE:
                self._merging.resume_open(scope, as_of, report)
                memories = [decayed_to(m, as_of, self._settings) for m in self._with_vectors(scope)]
                report.examined = len(memories)
                self._merging.consolidate(scope, memories, as_of, report)
            else:
                self._retention(scope, as_of, report)
        return report

    def reads(self, interaction: Interaction) -> list[ItemRef]:
        """What the retention cap builds on, read with the interaction's other items: the running message count."""
        return self.history.reads(interaction)

    def plan(self, interaction: Interaction, read: ItemsRead) -> Plan:
        """The count, written with the interaction; once it is stored, the plan's cap holds right after it (the
        plans are read only when the count passes the smallest cap any plan has)."""
        write, total = self.history.plan(interaction, read)
        if not self.history.over_smallest_cap(total):
            return Plan(writes=[write])
        return Plan(writes=[write], then=lambda: self._enforce_cap(interaction, total))

    def _enforce_cap(self, interaction: Interaction, total: int) -> None:
        """A failure is logged, not raised: the interaction is recorded already, and the nightly sweep enforces the
        cap again."""
        try:
            trim = self.history.enforce(interaction.scope, total, self._clock.now())
        except RapportError as exc:
            logger.warning("retention cap not enforced after interaction %s: %s", interaction.id, exc)
            return
        if trim.interactions:
            logger.info(
                "retention cap %s: trimmed %d messages of %s/%s",
                trim.cap,
                trim.messages,
                interaction.tenant_id,
                interaction.user_id,
            )

    def undo_consolidation(self, scope: Scope, consolidation_id: str) -> tuple[Derivation, list[str]]:
        derivation = self.derivations.get(scope, consolidation_id)
        if derivation.operation is not Operation.CONSOLIDATION:
            raise NotFoundError(f"no consolidation {consolidation_id} for this user (it is a {derivation.operation})")
        return self.derivations.undo(scope, consolidation_id, self._clock.now())

    # decay

    def _crossings(self, scope: Scope, as_of: datetime, report: JobReport) -> list[Memory]:
        """The live memories whose decay crossed a rule's threshold since their strength was stored: the only ones
        the decay job writes; every reader decays the stored strength itself (docs/governance.md)."""
        crossed: list[Memory] = []
        for memory in self._memories(scope):
            report.examined += 1
            if memory.status in LIVE_STATUSES and crossed_threshold(memory, as_of, self._settings) is not None:
                crossed.append(memory)
        return crossed

    def _decay(self, scope: Scope, crossed: list[Memory], as_of: datetime, report: JobReport) -> None:
        for listed in crossed:
            # Read again right before writing (a status or text changed since the page was read is kept), and
            # written only over that value: a reinforcement made meanwhile wins.
            try:
                memory = self._store.get_memory(scope, listed.id)
                updated = self._memories_writer.rewrite(
                    memory, lambda current: decay_to_persist(current, as_of, self._settings)
                )
            except NotFoundError:
                continue
            threshold = crossed_threshold(memory, as_of, self._settings)
            if updated is memory or threshold is None or updated.strength >= threshold:
                continue  # reinforced meanwhile: back above it
            report.decayed += 1
            report.note("decayed", memory.id, f"{memory.strength:.4f} -> {updated.strength:.4f} (below {threshold:g})")

    # retention: the plan's cap on history, then the tiers' windows

    def _retention(self, scope: Scope, as_of: datetime, report: JobReport) -> None:
        trim = self.history.sweep(scope, as_of)
        report.trimmed_interactions += len(trim.interactions)
        report.trimmed_messages += trim.messages
        for interaction_id in trim.interactions:
            report.note("trimmed", interaction_id, f"over the cap of {trim.cap} messages")
        memories = list(self._memories(scope))
        report.examined = len(memories)
        retiring = leaving_short_term([m for m in memories if is_conversation_message(m)], as_of, self._settings)
        sessions: dict[tuple[str, str], bool] = {}
        for memory in memories:
            session_id = memory.source.session_id
            if memory.status is not MemoryStatus.ACTIVE or not session_id:
                continue
            # Sessions are each assistant's: the one the memory was made with decides.
            session = (memory.agent_id, session_id)
            if session not in sessions:
                sessions[session] = self._sessions.is_live(memory.scope, session_id, as_of)
            if working_memory_over(memory, sessions[session], as_of, self._settings):
                retiring.append(memory)
        interactions: dict[str, Interaction | None] = {}
        for memory in retiring:
            if not self._held_elsewhere(memory, interactions):
                report.kept += 1
                report.note("kept", memory.id, "the only copy of what it holds: not archived")
                continue
            self._memories_writer.set_status(memory, MemoryStatus.ARCHIVED, as_of)
            report.archived += 1
            report.note("archived", memory.id, f"left the {memory.tier.value} tier")

    def _held_elsewhere(self, memory: Memory, interactions: dict[str, Interaction | None]) -> bool:
        """A message or a working-tier memory may be archived only while its interaction still holds the text."""
        interaction_id = memory.source.interaction_id
        if not interaction_id:
            return False
        if interaction_id not in interactions:
            try:
                interactions[interaction_id] = self._store.get_interaction(memory.scope, interaction_id)
            except NotFoundError:
                interactions[interaction_id] = None
        interaction = interactions[interaction_id]
        if interaction is None:
            return False
        index = memory.source.message_index
        return index is None or 0 <= index < len(interaction.messages)

    def _with_vectors(self, scope: Scope) -> Iterator[Memory]:
        """The memories, those that may be consolidated with their vectors (a listing carries none): one batched
        read per page, for those memories only."""
        for page in _pages(self._memories(scope), _PAGE):
            wanted = [m.id for m in page if m.embedding is None and may_consolidate(m, self._settings)]
            vectors = {m.id: m.embedding for m in self._store.get_memories(scope, wanted)} if wanted else {}
            for memory in page:
                if memory.id in vectors:
                    memory = memory.model_copy(update={"embedding": vectors[memory.id]})
                yield memory

    def _memories(self, scope: Scope) -> Iterator[Memory]:
        cursor: str | None = None
        while True:
            # Every assistant's: decay, compression, consolidation and retention look after the whole person, and
            # group a relationship's memories by its assistant where that matters (compression, consolidation).
            page = self._store.list_memories(
                scope, domains=_ALL_DOMAINS, limit=_PAGE, cursor=cursor, every_assistant=True
            )
            yield from page.items
            cursor = page.next_cursor
            if cursor is None:
                return


def _pages(memories: Iterator[Memory], size: int) -> Iterator[list[Memory]]:
    page: list[Memory] = []
    for memory in memories:
        page.append(memory)
        if len(page) == size:
            yield page
            page = []
    if page:
        yield page
