"""Associations: the typed links a client draws between two of an end user's memories (the associate API)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from rapport.clock import Clock
from rapport.domain.models import MemoryPatch, MemoryStatus
from rapport.domain.relations import (
    SYMMETRIC,
    Direction,
    Edge,
    EdgeType,
    EnrichmentType,
    RelationType,
    edge_type_of,
    type_properties,
)
from rapport.domain.scope import Scope
from rapport.errors import InvalidInputError, NotFoundError
from rapport.services.edges import EdgeRepository
from rapport.services.memories import MemoryService


class InvalidRelationError(InvalidInputError):
    """An unknown relation name; `details` lists the valid ones, so the API can return them as data."""

    def __init__(self, name: str, valid: list[str]) -> None:
        super().__init__(f"relation {name!r} is not one of: {', '.join(valid)}")
        self.details = {"valid_relations": valid}


class NewAssociation(BaseModel):
    memory_id: str = Field(min_length=1, max_length=128)
    related_memory_id: str = Field(min_length=1, max_length=128)
    relation: str
    properties: dict[str, Any] = Field(default_factory=dict)


class Association(BaseModel):
    """An edge as seen from one memory: which way it points, and whether enrichment or a client drew it."""

    relation: EdgeType
    source_id: str
    target_id: str
    direction: Direction | None  # None: a bidirectional or symmetric link, the same both ways
    strength: float
    timestamp: datetime
    properties: dict[str, Any]
    enrichment: bool


class AssociationResult(BaseModel):
    edge: Edge
    created: bool  # False: an existing edge was merged with this one


VALID_RELATIONS = [t.value for t in RelationType]
ALL_EDGE_TYPES = [*VALID_RELATIONS, *(t.value for t in EnrichmentType)]


def relation_of(name: str) -> RelationType:
    """One of the eleven: enrichment types are for enrichment only."""
    try:
        return RelationType(name.strip().upper())
    except ValueError:
        raise InvalidRelationError(name, VALID_RELATIONS) from None


def edge_type_named(name: str) -> EdgeType:
    try:
        return edge_type_of(name.strip().upper())
    except ValueError:
        raise InvalidRelationError(name, ALL_EDGE_TYPES) from None


class _BaseProperties(BaseModel):
    model_config = ConfigDict(extra="forbid")

    strength: float | None = Field(None, ge=0.0, le=1.0)
    timestamp: AwareDatetime | None = None  # a time without a zone would be read differently by each client


def merge(existing: Edge | None, incoming: Edge) -> Edge:
    """The same edge posted again is one edge: the properties sent overwrite those keys and keep the rest, the
    strength is the higher of the two (re-stating a link never weakens it; delete it to start over), the timestamp
    is the latest post's, and REINFORCES adds up its observations."""
    if existing is None:
        return incoming
    properties = {**existing.properties, **incoming.properties}
    if incoming.type is RelationType.REINFORCES:
        properties["observations"] = int(existing.properties.get("observations", 1)) + int(
            incoming.properties.get("observations", 1)
        )
    return incoming.model_copy(update={"strength": max(existing.strength, incoming.strength), "properties": properties})


class AssociationService:
    def __init__(self, memories: MemoryService, edges: EdgeRepository, clock: Clock) -> None:
        self._memories = memories
        self._edges = edges
        self._clock = clock

    def associate(self, scope: Scope, new: NewAssociation) -> AssociationResult:
        relation = relation_of(new.relation)
        if new.memory_id == new.related_memory_id:
            raise InvalidInputError("memory_id and related_memory_id are the same: a memory cannot relate to itself")
        raw = dict(new.properties)
        try:
            base = _BaseProperties.model_validate({k: raw.pop(k) for k in ("strength", "timestamp") if k in raw})
            own = type_properties(relation, raw)
        except (ValidationError, ValueError) as exc:
            raise InvalidInputError(_explain(exc, relation)) from exc
        # Both ends must be this end user's memories: another tenant's or user's id is as absent as a made-up one.
        source = self._memories.get(scope, new.memory_id)
        self._memories.get(scope, new.related_memory_id)
        edge = Edge(
            source_id=new.memory_id,
            target_id=new.related_memory_id,
            type=relation,
            strength=1.0 if base.strength is None else base.strength,
            timestamp=base.timestamp or self._clock.now(),
            properties=own,
        )
        existing = self._edges.get(scope, edge.source_id, relation, edge.target_id)
        stored = self._edges.put(scope, merge(existing, edge))
        if relation is RelationType.INVALIDATED_BY and source.status is MemoryStatus.ACTIVE:
            # What the edge says, recall should act on: the memory is history now, found only with include_archived.
            self._memories.update(scope, source.id, MemoryPatch(status=MemoryStatus.INVALIDATED))
        return AssociationResult(edge=stored, created=existing is None)

    def list_for(self, scope: Scope, memory_id: str, relation: str | None = None) -> list[Association]:
        """Every edge from or to the memory; a symmetric link once, not once per stored direction."""
        self._memories.get(scope, memory_id)
        only = edge_type_named(relation) if relation else None
        listed: dict[tuple[str, str, str], Association] = {}
        for edge in self._edges.outgoing(scope, memory_id, only):
            listed[_key(edge)] = _association(edge, Direction.OUTGOING)
        for edge in self._edges.incoming(scope, memory_id, only):
            listed.setdefault(_key(edge), _association(edge, Direction.INCOMING))
        return sorted(listed.values(), key=lambda a: (a.relation.value, a.source_id, a.target_id))

    def remove(self, scope: Scope, memory_id: str, related_memory_id: str, relation: str) -> None:
        """Any edge type, enrichment's included (a client may prune what enrichment drew); 404 when absent."""
        kind = edge_type_named(relation)
        if not self._edges.delete(scope, memory_id, kind, related_memory_id):
            raise NotFoundError(f"no {kind.value} association from {memory_id} to {related_memory_id}")
        if kind is RelationType.INVALIDATED_BY:
            self._restore_if_valid_again(scope, memory_id)

    def _restore_if_valid_again(self, scope: Scope, memory_id: str) -> None:
        """Removing the last INVALIDATED_BY undoes what adding it did (see associate)."""
        if self._edges.outgoing(scope, memory_id, RelationType.INVALIDATED_BY, limit=1):
            return
        try:
            memory = self._memories.get(scope, memory_id)
        except NotFoundError:
            return
        if memory.status is MemoryStatus.INVALIDATED:
            self._memories.update(scope, memory_id, MemoryPatch(status=MemoryStatus.ACTIVE))


def _key(edge: Edge) -> tuple[str, str, str]:
    if edge.type in SYMMETRIC:
        low, high = sorted((edge.source_id, edge.target_id))
        return (edge.type.value, low, high)
    return (edge.type.value, edge.source_id, edge.target_id)


def _association(edge: Edge, direction: Direction) -> Association:
    return Association(
        relation=edge.type,
        source_id=edge.source_id,
        target_id=edge.target_id,
        direction=None if edge.type in SYMMETRIC else direction,
        strength=edge.strength,
        timestamp=edge.timestamp,
        properties=edge.properties,
        enrichment=isinstance(edge.type, EnrichmentType),
    )


def _explain(exc: Exception, relation: RelationType) -> str:
    if isinstance(exc, ValidationError):
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return f"invalid properties for {relation.value}: {problems}"
    return str(exc)
