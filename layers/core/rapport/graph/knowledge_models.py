"""The shared knowledge graph's entities: nodes (entities, concepts, facts) and typed edges, owned by a tenant."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

# Knowledge relations are the tenant's own vocabulary (IS_A, USES, LOCATED_IN…), unlike the fixed eleven between
# memories; UPPER_SNAKE keeps them readable and free of the '#' that separates key parts.
KNOWLEDGE_RELATION = re.compile(r"^[A-Z][A-Z0-9_]{0,47}$")
_SLUG_CHARS = 64
AttributeValue = str | int | float | bool


class NodeKind(StrEnum):
    ENTITY = "entity"  # a thing with a name: PostgreSQL, Acme Corp, Rome
    CONCEPT = "concept"  # an idea: ACID compliance, async programming
    FACT = "fact"  # a statement: "PostgreSQL supports transactional DDL"


def node_id(kind: NodeKind, name: str) -> str:
    """Deterministic, so the same name of the same kind is always the same node: `entity:postgresql`. Names that
    differ only in case or punctuation meet on purpose; a long name gets a hash suffix, so two facts sharing their
    first words stay two nodes."""
    slug = re.sub(r"[^\w]+", "-", name.casefold()).strip("-_")
    if not slug or len(slug) > _SLUG_CHARS:
        digest = hashlib.sha256(name.casefold().encode()).hexdigest()[:10]
        slug = f"{slug[:_SLUG_CHARS].rstrip('-_')}-{digest}" if slug else digest
    return f"{kind.value}:{slug}"


class KnowledgeNode(BaseModel):
    id: str
    kind: NodeKind
    name: str
    category: str | None = None
    description: str | None = None
    aliases: list[str] = Field(default_factory=list)
    attributes: dict[str, AttributeValue] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


class KnowledgeEdge(BaseModel):
    model_config = ConfigDict(frozen=True)

    source_id: str
    target_id: str
    relation: str = Field(pattern=KNOWLEDGE_RELATION.pattern)
    strength: float = Field(1.0, ge=0.0, le=1.0)
    properties: dict[str, AttributeValue] = Field(default_factory=dict)
    timestamp: datetime


class NewNode(BaseModel):
    kind: NodeKind = NodeKind.ENTITY
    name: str = Field(min_length=1, max_length=300)
    category: str | None = Field(None, min_length=1, max_length=64)
    description: str | None = Field(None, max_length=2000)
    aliases: list[str] = Field(default_factory=list, max_length=20)
    attributes: dict[str, AttributeValue] = Field(default_factory=dict, max_length=50)


class NewKnowledgeEdge(BaseModel):
    """`source` and `target` name a node by id (`entity:postgresql`) or by name (a node of this request first,
    then a stored entity, concept or fact of that name)."""

    source: str = Field(min_length=1, max_length=300)
    target: str = Field(min_length=1, max_length=300)
    relation: str = Field(min_length=1, max_length=48)
    strength: float = Field(1.0, ge=0.0, le=1.0)
    properties: dict[str, AttributeValue] = Field(default_factory=dict, max_length=50)


class EntityMention(BaseModel):
    """What the pipeline may hand to the shared graph: a name and a category, nothing about who said it."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1, max_length=200)
    category: str = Field(min_length=1, max_length=64)


class KnowledgeWrite(BaseModel):
    nodes: list[KnowledgeNode]
    edges: list[KnowledgeEdge]


class FoundNode(BaseModel):
    node: KnowledgeNode
    distance: int  # hops from the nearest node the query matched (0: matched itself)
    matched_terms: list[str] = Field(default_factory=list)


class KnowledgeResult(BaseModel):
    query: str
    depth: int
    nodes: list[FoundNode]
    edges: list[KnowledgeEdge]
    truncated: bool  # the node cap stopped the walk before the asked depth
