"""API input and output models of the graph routes: associations between memories and the shared knowledge graph."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rapport.graph.associations import Association, AssociationResult
from rapport.graph.knowledge_models import (
    AttributeValue,
    KnowledgeEdge,
    KnowledgeNode,
    KnowledgeResult,
    NodeKind,
)


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AssociateRequest(_Request):
    memory_id: str = Field(min_length=1, max_length=128, description="The source memory.")
    related_memory_id: str = Field(min_length=1, max_length=128, description="The target memory.")
    # A plain string, not an enum: an unknown relation must reach the core, which answers 400 listing the valid ones.
    relation: str = Field(min_length=1, max_length=64, description="One of the 11 relation types, e.g. LEADS_TO.")
    properties: dict[str, Any] = Field(
        default_factory=dict,
        description="`strength` (0-1), `timestamp`, and the relation's own properties (docs/graph.md).",
    )


class AssociationOut(BaseModel):
    status: str = "associated"
    relation: str
    source_id: str
    target_id: str
    created: bool
    strength: float
    timestamp: datetime
    properties: dict[str, Any]

    @classmethod
    def of(cls, result: AssociationResult) -> AssociationOut:
        edge = result.edge
        return cls(
            relation=edge.type.value,
            source_id=edge.source_id,
            target_id=edge.target_id,
            created=result.created,
            strength=edge.strength,
            timestamp=edge.timestamp,
            properties=edge.properties,
        )


class ListedAssociationOut(BaseModel):
    relation: str
    source_id: str
    target_id: str
    direction: str  # outgoing, incoming, or both (a bidirectional or symmetric link)
    strength: float
    timestamp: datetime
    properties: dict[str, Any]
    enrichment: bool

    @classmethod
    def of(cls, association: Association) -> ListedAssociationOut:
        return cls(
            relation=association.relation.value,
            source_id=association.source_id,
            target_id=association.target_id,
            direction=association.direction.value if association.direction else "both",
            strength=association.strength,
            timestamp=association.timestamp,
            properties=association.properties,
            enrichment=association.enrichment,
        )


class NodeIn(_Request):
    kind: NodeKind = NodeKind.ENTITY
    name: str = Field(min_length=1, max_length=300)
    category: str | None = Field(None, min_length=1, max_length=64)
    description: str | None = Field(None, max_length=2000)
    aliases: list[str] = Field(default_factory=list, max_length=20)
    attributes: dict[str, AttributeValue] = Field(default_factory=dict, max_length=50)


class KnowledgeEdgeIn(_Request):
    source: str = Field(min_length=1, max_length=300, description="A node id (entity:postgresql) or name.")
    target: str = Field(min_length=1, max_length=300)
    relation: str = Field(min_length=1, max_length=48, description="UPPER_SNAKE, e.g. IS_A, USES.")
    strength: float = Field(1.0, ge=0.0, le=1.0)
    properties: dict[str, AttributeValue] = Field(default_factory=dict, max_length=50)


class KnowledgeRequest(_Request):
    nodes: list[NodeIn] = Field(default_factory=list)
    edges: list[KnowledgeEdgeIn] = Field(default_factory=list)


class NodeOut(BaseModel):
    id: str
    kind: NodeKind
    name: str
    category: str | None
    description: str | None
    aliases: list[str]
    attributes: dict[str, AttributeValue]
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, node: KnowledgeNode) -> NodeOut:
        return cls.model_validate(node.model_dump())


class KnowledgeEdgeOut(BaseModel):
    source_id: str
    relation: str
    target_id: str
    strength: float
    properties: dict[str, AttributeValue]
    timestamp: datetime

    @classmethod
    def of(cls, edge: KnowledgeEdge) -> KnowledgeEdgeOut:
        return cls.model_validate(edge.model_dump())


class FoundNodeOut(NodeOut):
    distance: int
    matched_terms: list[str]


class KnowledgeQueryOut(BaseModel):
    query: str
    depth: int
    nodes: list[FoundNodeOut]
    edges: list[KnowledgeEdgeOut]
    truncated: bool

    @classmethod
    def of(cls, result: KnowledgeResult) -> KnowledgeQueryOut:
        return cls(
            query=result.query,
            depth=result.depth,
            nodes=[
                FoundNodeOut.model_validate(
                    {**found.node.model_dump(), "distance": found.distance, "matched_terms": found.matched_terms}
                )
                for found in result.nodes
            ],
            edges=[KnowledgeEdgeOut.of(e) for e in result.edges],
            truncated=result.truncated,
        )


class AssociationListOut(BaseModel):
    memory_id: str
    associations: list[ListedAssociationOut]


class KnowledgeWrittenOut(BaseModel):
    status: str = Field("stored", examples=["stored"])
    nodes: list[NodeOut]
    edges: list[KnowledgeEdgeOut]


class NodeDeletedOut(BaseModel):
    deleted: str = Field(description="The id of the node removed.")
    edges_removed: int
