"""Derivations: compressing or consolidating memories as a journalled operation that resumes, never doubles, and
(for a consolidation) can be undone by id.

A derivation is written down before anything else happens (an open marker and the record, holding the derived
memory in full), then carried out step by step: store the derived memory, link it `DERIVED_FROM` each original,
check both are there, archive the originals, close the record. Every step is idempotent, so a run that stops
anywhere is finished by the next one, which replays the open derivations before looking for new work.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from rapport.domain.lifecycle.derived import GOVERNANCE_KEY, Operation
from rapport.domain.models import Memory, MemoryStatus
from rapport.domain.relations import RelationType
from rapport.domain.scope import Scope
from rapport.errors import InvalidInputError, NotFoundError
from rapport.ports.items import ItemQuery, ItemScope, ItemStore
from rapport.ports.store import MemoryStore
from rapport.services.edges import EdgeRepository, edge_at
from rapport.services.memories import MemoryService

DERIVATION_KIND = "DERIVATION"
# Listing what is open (or kept apart) must not read every derivation a user ever had: small marker items do it.
OPEN_KIND = "DERIVATION_OPEN"
APART_KIND = "DERIVATION_APART"
_PAGE = 100


class DerivationState(StrEnum):
    PENDING = "pending"
    DONE = "done"
    UNDONE = "undone"


class Derivation(BaseModel):
    """One compression or consolidation; its id is the derived memory's id."""

    id: str
    operation: Operation
    derived: Memory  # in full (no embedding), so a resumed run writes exactly what the first run meant to
    member_ids: list[str]
    prior_status: dict[str, MemoryStatus] = Field(default_factory=dict)
    state: DerivationState = DerivationState.PENDING
    created_at: datetime
    completed_at: datetime | None = None
    undone_at: datetime | None = None


class OpenMarker(BaseModel):
    operation: Operation


class KeptApart(BaseModel):
    """The members of an undone consolidation: no later run merges any two of them again."""

    member_ids: list[str] = Field(default_factory=list)


class DerivationJournal:
    """The records of an end user's derivations (`DERIVATION`), the markers of those still being carried out
    (`DERIVATION_OPEN`) and the members kept apart after an undo (`DERIVATION_APART`), all keyed by the derived
    memory's id."""

    def __init__(self, items: ItemStore) -> None:
        self._items = items

    def get(self, scope: Scope, derivation_id: str) -> Derivation | None:
        item = self._items.get_item(ItemScope.of_user(scope), DERIVATION_KIND, derivation_id)
        return Derivation.model_validate(item.body) if item is not None else None

    def open(self, derivation: Derivation, now: datetime) -> None:
        """The marker first, so a record can never exist without a way to find it; the record only once."""
        scope = ItemScope.of_user(derivation.derived.scope)
        marker = OpenMarker(operation=derivation.operation).model_dump(mode="json")
        self._items.put_item(scope, OPEN_KIND, derivation.id, marker, now=now)
        self._items.put_item(
            scope, DERIVATION_KIND, derivation.id, derivation.model_dump(mode="json"), now=now, expected_version=0
        )

    def save(self, derivation: Derivation, now: datetime) -> None:
        scope = ItemScope.of_user(derivation.derived.scope)
        self._items.put_item(scope, DERIVATION_KIND, derivation.id, derivation.model_dump(mode="json"), now=now)

    def close(self, scope: Scope, derivation_id: str) -> None:
        self._items.delete_item(ItemScope.of_user(scope), OPEN_KIND, derivation_id)

    def open_ids(self, scope: Scope) -> list[str]:
        return [key for key, _ in self._all(scope, OPEN_KIND)]

    def keep_apart(self, derivation: Derivation, now: datetime) -> None:
        scope = ItemScope.of_user(derivation.derived.scope)
        apart = KeptApart(member_ids=derivation.member_ids).model_dump(mode="json")
        self._items.put_item(scope, APART_KIND, derivation.id, apart, now=now)

    def kept_apart(self, scope: Scope) -> list[KeptApart]:
        return [KeptApart.model_validate(body) for _, body in self._all(scope, APART_KIND)]

    def _all(self, scope: Scope, kind: str) -> list[tuple[str, dict[str, Any]]]:
        found: list[tuple[str, dict[str, Any]]] = []
        cursor: str | None = None
        while True:
            page = self._items.list_items(ItemScope.of_user(scope), ItemQuery(kind=kind, limit=_PAGE, cursor=cursor))
            found.extend((item.key, item.body) for item in page.items)
            cursor = page.next_cursor
            if cursor is None:
                return found


class Completion(BaseModel):
    derivation: Derivation
    created: bool  # the derived memory was written by this call
    archived: list[str]  # originals this call archived
    kept: list[str]  # originals left as they were: gone, changed meanwhile, or their copy could not be verified


class Derivations:
    def __init__(
        self,
        items: ItemStore,
        store: MemoryStore,
        memories: MemoryService,
    ) -> None:
        self._journal = DerivationJournal(items)
        self._store = store
        self._memories = memories
        self._edges = EdgeRepository(items)

    # reading

    def get(self, scope: Scope, derivation_id: str) -> Derivation:
        derivation = self._journal.get(scope, derivation_id)
        if derivation is None:
            raise NotFoundError(f"no compression or consolidation {derivation_id} for this user")
        return derivation

    def open_ids(self, scope: Scope) -> list[str]:
        return self._journal.open_ids(scope)

    def kept_apart(self, scope: Scope) -> frozenset[frozenset[str]]:
        """Pairs of memories whose consolidation was undone: a later run must not merge them again."""
        pairs: set[frozenset[str]] = set()
        for apart in self._journal.kept_apart(scope):
            members = apart.member_ids
            pairs.update(frozenset((a, b)) for i, a in enumerate(members) for b in members[i + 1 :])
        return frozenset(pairs)

    # carrying out

    def begin(self, derivation: Derivation, now: datetime) -> Derivation:
        """Write the intent down: the marker first, so a record can never exist without a way to find it."""
        self._journal.open(derivation, now)
        return derivation

    def resume(self, scope: Scope, derivation_id: str, now: datetime) -> Completion | None:
        """Finish an open derivation; None when its record was never written (the run stopped right after the
        marker, before anything else), in which case the marker goes."""
        try:
            derivation = self.get(scope, derivation_id)
        except NotFoundError:
            self._journal.close(scope, derivation_id)
            return None
        if derivation.state is DerivationState.UNDONE:
            # Undone after it finished: only its marker was left behind; finishing it again would redo it.
            self._journal.close(scope, derivation_id)
            return None
        return self.complete(derivation, now)

    def complete(self, derivation: Derivation, now: datetime) -> Completion:
        scope = derivation.derived.scope
        created = False
        if not self._exists(scope, derivation.id):
            self._memories.remember_many(scope, [derivation.derived])
            created = True
        for member_id in derivation.member_ids:
            self._edges.put(
                scope,
                edge_at(
                    derivation.id,
                    RelationType.DERIVED_FROM,
                    member_id,
                    derivation.created_at,
                    transformation=derivation.operation.value,
                    confidence=derivation.derived.confidence,
                ),
            )
        archived, kept = self._archive_members(derivation, now)
        if derivation.state is DerivationState.PENDING:
            derivation = derivation.model_copy(update={"state": DerivationState.DONE, "completed_at": now})
            self._journal.save(derivation, now)
        self._journal.close(scope, derivation.id)
        return Completion(derivation=derivation, created=created, archived=archived, kept=kept)

    def _archive_members(self, derivation: Derivation, now: datetime) -> tuple[list[str], list[str]]:
        """Archive each original only once its copy is verified: the derived memory is stored and linked to it."""
        archived: list[str] = []
        kept: list[str] = []
        scope = derivation.derived.scope
        copy_stored = self._exists(scope, derivation.id)
        for member_id in derivation.member_ids:
            linked = self._edges.get(scope, derivation.id, RelationType.DERIVED_FROM, member_id)
            try:
                member = self._store.get_memory(scope, member_id)
            except NotFoundError:
                kept.append(member_id)
                continue
            if member.status is MemoryStatus.ARCHIVED:
                continue  # archived by an earlier, interrupted pass of this same derivation
            if not copy_stored or linked is None or member.status is not MemoryStatus.ACTIVE:
                kept.append(member_id)
                continue
            self._set_status(member, MemoryStatus.ARCHIVED, now)
            archived.append(member_id)
        return archived, kept

    # undoing

    def undo(self, scope: Scope, derivation_id: str, now: datetime) -> tuple[Derivation, list[str]]:
        """Put the originals back as they were and archive the derived memory; the pair is then kept apart. Undoing
        twice is the same as once. Returns the derivation and the originals restored by this call."""
        derivation = self.get(scope, derivation_id)
        if derivation.state is DerivationState.PENDING:
            raise InvalidInputError(f"{derivation_id} is still being carried out; undo it once its job has finished")
        # Apart first: a consolidation running meanwhile must not merge what is being taken apart.
        self._journal.keep_apart(derivation, now)
        restored: list[str] = []
        for member in self._store.get_memories(scope, derivation.member_ids):
            if member.status is MemoryStatus.ARCHIVED:
                self._set_status(member, derivation.prior_status.get(member.id, MemoryStatus.ACTIVE), now)
                restored.append(member.id)
        if self._exists(scope, derivation.id):
            derived = self._store.get_memory(scope, derivation.id)
            if derived.status is not MemoryStatus.ARCHIVED:
                marker = {**derived.metadata.get(GOVERNANCE_KEY, {}), "undone_at": now.isoformat()}
                derived = derived.model_copy(update={"metadata": {**derived.metadata, GOVERNANCE_KEY: marker}})
                self._set_status(derived, MemoryStatus.ARCHIVED, now)
        if derivation.state is not DerivationState.UNDONE:
            derivation = derivation.model_copy(update={"state": DerivationState.UNDONE, "undone_at": now})
            self._journal.save(derivation, now)
        return derivation, restored

    # helpers

    def _exists(self, scope: Scope, memory_id: str) -> bool:
        try:
            self._store.get_memory(scope, memory_id)
        except NotFoundError:
            return False
        return True

    def _set_status(self, memory: Memory, status: MemoryStatus, now: datetime) -> None:
        self._memories.set_status(memory, status, now)
