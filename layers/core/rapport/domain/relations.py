"""Typed relationships between memories (docs/graph.md): the eleven edge types, the enrichment types, each type's
properties, and the edge entity."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class RelationType(StrEnum):
    RELATES_TO = "RELATES_TO"
    LEADS_TO = "LEADS_TO"
    OCCURRED_BEFORE = "OCCURRED_BEFORE"
    PREFERS_OVER = "PREFERS_OVER"
    EXEMPLIFIES = "EXEMPLIFIES"
    CONTRADICTS = "CONTRADICTS"
    REINFORCES = "REINFORCES"
    INVALIDATED_BY = "INVALIDATED_BY"
    EVOLVED_INTO = "EVOLVED_INTO"
    DERIVED_FROM = "DERIVED_FROM"
    PART_OF = "PART_OF"


# A bidirectional relation holds both ways, so it is written both ways: listing either end finds it.
BIDIRECTIONAL: frozenset[RelationType] = frozenset({RelationType.RELATES_TO, RelationType.CONTRADICTS})


class EnrichmentType(StrEnum):
    """Edges only enrichment writes. Clients cannot post them, so the associate API accepts exactly the
    eleven relation types; they are stored, listed, expanded and deletable like any other edge."""

    PRECEDED_BY = "PRECEDED_BY"  # the later memory points at an earlier one of the same user (within a window)
    SIMILAR_TO = "SIMILAR_TO"  # close in meaning (cosine above a threshold)


# Anything an edge can be: what the store, the listings and recall expansion work with.
EdgeType = RelationType | EnrichmentType

# Types stored in both directions: the two bidirectional relations, and similarity (symmetric by nature).
SYMMETRIC: frozenset[EdgeType] = frozenset({*BIDIRECTIONAL, EnrichmentType.SIMILAR_TO})


def edge_type_of(name: str) -> EdgeType:
    """The edge type called `name` (one of the eleven, or an enrichment type); ValueError when there is none."""
    for kind in (RelationType, EnrichmentType):
        try:
            return kind(name)
        except ValueError:
            continue
    raise ValueError(f"{name!r} is not an edge type")


class Edge(BaseModel):
    """A directed, typed link from one node (a memory, or the interaction a memory came from) to another."""

    model_config = ConfigDict(frozen=True)

    # '#' separates the parts of an edge's storage key, so an id holding one could pose as another edge.
    source_id: str = Field(pattern=r"^[^#\s]+$")
    target_id: str = Field(pattern=r"^[^#\s]+$")
    type: EdgeType  # one of the eleven, or an enrichment type
    strength: float = Field(1.0, ge=0.0, le=1.0)
    timestamp: datetime
    properties: dict[str, Any] = Field(default_factory=dict)

    def reversed(self) -> Edge:
        return self.model_copy(update={"source_id": self.target_id, "target_id": self.source_id})


# --- each type's own properties -------------------------------------------------------------------------------
# Strength and timestamp are every edge's base properties and live on `Edge` itself; these models hold the rest.
# Unknown properties are refused (extra="forbid"): a misspelt "reson" would otherwise be stored and never read.
# Every type-specific property is optional, so a client can link first and explain later.


class EdgeProperties(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_Text = Field(None, min_length=1, max_length=1000)
_Confidence = Field(None, ge=0.0, le=1.0)


class RelatesToProperties(EdgeProperties):
    context: str | None = _Text


class LeadsToProperties(EdgeProperties):
    reason: str | None = _Text


class OccurredBeforeProperties(EdgeProperties):
    time_gap: float | None = Field(None, ge=0.0, description="Seconds between the two.")


class PrefersOverProperties(EdgeProperties):
    context: str | None = _Text
    reason: str | None = _Text


class ExemplifiesProperties(EdgeProperties):
    pattern_type: str | None = Field(None, min_length=1, max_length=100)
    confidence: float | None = _Confidence
    key_terms: list[str] | None = Field(None, max_length=20, description="Set by enrichment's pattern detection.")


class ContradictsProperties(EdgeProperties):
    resolution: str | None = _Text
    reason: str | None = _Text


class ReinforcesProperties(EdgeProperties):
    observations: int = Field(1, ge=1, le=1_000_000)


class InvalidatedByProperties(EdgeProperties):
    reason: str | None = _Text


class EvolvedIntoProperties(EdgeProperties):
    confidence: float | None = _Confidence
    reason: str | None = _Text


class DerivedFromProperties(EdgeProperties):
    transformation: str | None = Field(None, min_length=1, max_length=200)
    confidence: float | None = _Confidence


class PartOfProperties(EdgeProperties):
    role: str | None = Field(None, min_length=1, max_length=200)
    context: str | None = _Text


class PrecededByProperties(EdgeProperties):
    time_gap: float = Field(ge=0.0, description="Seconds from the earlier memory to the later one.")


class SimilarToProperties(EdgeProperties):
    similarity_score: float = Field(ge=-1.0, le=1.0, description="Cosine similarity of the two embeddings.")


PROPERTIES: dict[EdgeType, type[EdgeProperties]] = {
    RelationType.RELATES_TO: RelatesToProperties,
    RelationType.LEADS_TO: LeadsToProperties,
    RelationType.OCCURRED_BEFORE: OccurredBeforeProperties,
    RelationType.PREFERS_OVER: PrefersOverProperties,
    RelationType.EXEMPLIFIES: ExemplifiesProperties,
    RelationType.CONTRADICTS: ContradictsProperties,
    RelationType.REINFORCES: ReinforcesProperties,
    RelationType.INVALIDATED_BY: InvalidatedByProperties,
    RelationType.EVOLVED_INTO: EvolvedIntoProperties,
    RelationType.DERIVED_FROM: DerivedFromProperties,
    RelationType.PART_OF: PartOfProperties,
    EnrichmentType.PRECEDED_BY: PrecededByProperties,
    EnrichmentType.SIMILAR_TO: SimilarToProperties,
}


def allowed_properties(relation: EdgeType) -> list[str]:
    """The properties a type takes besides `strength` and `timestamp`."""
    return list(PROPERTIES[relation].model_fields)


def type_properties(relation: EdgeType, raw: dict[str, Any]) -> dict[str, Any]:
    """The type's own properties, validated, with unset ones left out; ValueError names what is wrong."""
    try:
        model = PROPERTIES[relation].model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'properties'}: {e['msg']}" for e in exc.errors())
        allowed = ", ".join(["strength", "timestamp", *allowed_properties(relation)])
        raise ValueError(f"invalid properties for {relation.value}: {problems} (allowed: {allowed})") from exc
    return model.model_dump(mode="json", exclude_none=True)


# --- how recall expansion reached a memory -----------------------------------------------------------------------
class Direction(StrEnum):
    OUTGOING = "outgoing"  # from_id -relation-> the memory
    INCOMING = "incoming"  # the memory -relation-> from_id


class PathStep(BaseModel):
    """One hop of the path recall expansion followed to reach a memory, starting at a seed hit."""

    model_config = ConfigDict(frozen=True)

    from_id: str
    relation: EdgeType
    direction: Direction
