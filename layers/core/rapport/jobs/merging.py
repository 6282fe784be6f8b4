"""Compression and consolidation for one end user: find the work, write each derivation down, carry it out."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from rapport.domain.lifecycle.compression import compression_groups, is_compressible
from rapport.domain.lifecycle.consolidation import cluster, is_consolidatable, strongest_first
from rapport.domain.lifecycle.decay import effective_strength
from rapport.domain.lifecycle.derived import GOVERNANCE_KEY, Operation
from rapport.domain.lifecycle.tiers import highest_tier
from rapport.domain.models import Memory, MemoryStatus, Provenance, SourceKind
from rapport.domain.scope import Scope
from rapport.ids import new_id
from rapport.jobs.derivations import Completion, Derivation, Derivations
from rapport.jobs.report import JobReport
from rapport.jobs.summarize import Summarizer, SummaryMethod
from rapport.settings import GovernanceSettings

_ASSOCIATIONS_KEPT = 50


class Merging:
    def __init__(self, derivations: Derivations, summarizer: Summarizer, settings: GovernanceSettings) -> None:
        self._derivations = derivations
        self._summarizer = summarizer
        self._settings = settings

    def resume_open(self, scope: Scope, as_of: datetime, report: JobReport) -> None:
        """Finish what an interrupted run began, before looking for new work (so nothing is picked twice)."""
        for derivation_id in self._derivations.open_ids(scope):
            completion = self._derivations.resume(scope, derivation_id, as_of)
            if completion is not None:
                report.resumed += 1
                self._account(completion, report)

    def compress(self, memories: Sequence[Memory], as_of: datetime, report: JobReport) -> None:
        candidates = [m for m in memories if is_compressible(m, as_of, self._settings)]
        for group in compression_groups(candidates, self._settings.compress_max_group):
            content, method = self._summarizer.compress(group)
            derived = self._derived(Operation.COMPRESSION, group, content, method, as_of)
            self._carry_out(Operation.COMPRESSION, derived, group, as_of, report)

    def consolidate(self, scope: Scope, memories: Sequence[Memory], as_of: datetime, report: JobReport) -> None:
        apart = self._derivations.kept_apart(scope)
        # One assistant's relational memories are never merged with another's: each is its own relationship.
        by_type: dict[tuple[str, str, str], list[Memory]] = defaultdict(list)
        for memory in memories:
            if is_consolidatable(memory, self._settings):
                by_type[(memory.domain.value, memory.type, memory.relationship or "")].append(memory)
        for key in sorted(by_type):
            ordered = strongest_first(by_type[key], as_of, self._settings)[
                : self._settings.consolidation_max_candidates
            ]
            by_id = {m.id: m for m in ordered}
            clusters = cluster(
                [(m.id, m.embedding or []) for m in ordered],
                self._settings.consolidation_min_similarity,
                max_cluster=self._settings.consolidation_max_cluster,
                apart=apart,
            )
            for ids in clusters:
                members = [by_id[i] for i in ids]  # the strongest first: it leads and speaks for the cluster
                content, method = self._summarizer.merge(members[0], members)
                derived = self._derived(Operation.CONSOLIDATION, members, content, method, as_of)
                self._carry_out(Operation.CONSOLIDATION, derived, members, as_of, report)

    def _carry_out(
        self, operation: Operation, derived: Memory, members: list[Memory], as_of: datetime, report: JobReport
    ) -> None:
        derivation = Derivation(
            id=derived.id,
            operation=operation,
            derived=derived,
            member_ids=[m.id for m in members],
            prior_status={m.id: m.status for m in members},
            created_at=as_of,
        )
        self._derivations.begin(derivation, as_of)
        self._account(self._derivations.complete(derivation, as_of), report)

    def _account(self, completion: Completion, report: JobReport) -> None:
        derivation = completion.derivation
        action = f"{derivation.operation.value}-into"
        if completion.created:
            report.derived += 1
            report.note("derived", derivation.id, f"{derivation.operation.value} of {len(derivation.member_ids)}")
        for member_id in completion.archived:
            report.note(action, member_id, derivation.id)
        if derivation.operation is Operation.COMPRESSION:
            report.compressed += len(completion.archived)
        else:
            report.consolidated += len(completion.archived)
        report.archived += len(completion.archived)
        report.kept += len(completion.kept)
        for member_id in completion.kept:
            report.note("kept", member_id, f"not archived into {derivation.id}: missing, changed or unverified")

    def _derived(
        self, operation: Operation, members: list[Memory], content: str, method: SummaryMethod, as_of: datetime
    ) -> Memory:
        """Strongest strength (as of now), highest importance and tier, every member's provenance; a compact memory
        is marked by its status, a consolidated one is active like any other."""
        first = members[0]
        strengths = [effective_strength(m, as_of, self._settings) for m in members]
        occurred = [m.occurred_at for m in members if m.occurred_at is not None]
        associations = list(dict.fromkeys(a for m in members for a in m.associations))[-_ASSOCIATIONS_KEPT:]
        observations = sum(int(m.metadata.get("observations", 1)) for m in members)
        marker: dict[str, Any] = {
            "operation": operation.value,
            "method": method.value,
            "as_of": as_of.isoformat(),
            "derived_from": [m.id for m in members],
            "sources": [{"memory_id": m.id, **m.source.model_dump(mode="json", exclude_none=True)} for m in members],
        }
        return Memory(
            id=new_id(as_of),
            tenant_id=first.tenant_id,
            user_id=first.user_id,
            domain=first.domain,
            type=first.type,
            content=content,
            strength=max(strengths),
            importance=max(m.importance for m in members),
            confidence=(
                min(m.confidence for m in members)
                if operation is Operation.COMPRESSION
                else max(m.confidence for m in members)
            ),
            tier=highest_tier(members),
            status=MemoryStatus.COMPRESSED if operation is Operation.COMPRESSION else MemoryStatus.ACTIVE,
            associations=associations,
            source=Provenance(kind=SourceKind.GOVERNANCE),
            metadata={GOVERNANCE_KEY: marker, "observations": observations},
            created_at=as_of,
            updated_at=as_of,
            occurred_at=min(occurred) if occurred else None,
            last_reinforced_at=max(m.last_reinforced_at for m in members),
            decayed_at=as_of,
            agent_id=first.agent_id,  # relational members are all one assistant's (grouped so)
        )
