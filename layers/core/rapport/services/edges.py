"""The edge repository: typed relationships kept as items beside the memories, listable from either end."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rapport.domain.relations import SYMMETRIC, Edge, EdgeType
from rapport.domain.scope import Scope
from rapport.ports.items import ItemScope, ItemStore
from rapport.services.mirrored_edges import MirroredEdges

EDGE_KIND = "EDGE"
INCOMING_KIND = "EDGE_IN"  # each edge's mirror, keyed by its target, so edges pointing at a memory are listable


class EdgeRepository:
    """The end user's edges (items `EDGE` and their mirrors `EDGE_IN`), each an `Edge` body. A bidirectional or
    symmetric type is kept both ways, so listing either end finds it."""

    def __init__(self, items: ItemStore) -> None:
        self._edges = MirroredEdges(items, kind=EDGE_KIND, mirror_kind=INCOMING_KIND)

    def put(self, scope: Scope, edge: Edge) -> Edge:
        item_scope = ItemScope.of_user(scope)
        directions = [edge, edge.reversed()] if edge.type in SYMMETRIC else [edge]
        for directed in directions:
            self._edges.put(
                item_scope,
                directed.source_id,
                directed.type.value,
                directed.target_id,
                directed.model_dump(mode="json"),
                now=directed.timestamp,
            )
        return edge

    def get(self, scope: Scope, source_id: str, relation: EdgeType, target_id: str) -> Edge | None:
        body = self._edges.get(ItemScope.of_user(scope), source_id, relation.value, target_id)
        return Edge.model_validate(body) if body is not None else None

    def outgoing(
        self,
        scope: Scope,
        source_id: str,
        relation: EdgeType | None = None,
        *,
        limit: int | None = None,
    ) -> list[Edge]:
        """Edges from a node, optionally of one type (a key-prefix query, no scan); at most `limit` when given."""
        item_scope = ItemScope.of_user(scope)
        bodies = self._edges.outgoing(item_scope, source_id, relation.value if relation else None, limit=limit)
        return [Edge.model_validate(body) for body in bodies]

    def incoming(
        self,
        scope: Scope,
        target_id: str,
        relation: EdgeType | None = None,
        *,
        limit: int | None = None,
    ) -> list[Edge]:
        """Edges that point at a node, read from their mirrors; at most `limit` when given."""
        item_scope = ItemScope.of_user(scope)
        bodies = self._edges.incoming(item_scope, target_id, relation.value if relation else None, limit=limit)
        return [Edge.model_validate(body) for body in bodies]

    def delete(self, scope: Scope, source_id: str, relation: EdgeType, target_id: str) -> bool:
        item_scope = ItemScope.of_user(scope)
        pairs = [(source_id, target_id)]
        if relation in SYMMETRIC:
            pairs.append((target_id, source_id))
        deleted = False
        for src, dst in pairs:
            deleted |= self._edges.delete(item_scope, src, relation.value, dst)
        return deleted

    def delete_all(self, scope: Scope, node_id: str) -> int:
        """Remove every edge from or to the node, mirrors and reverse copies included; how many edges went."""
        removed = 0
        for edge in self.outgoing(scope, node_id) + self.incoming(scope, node_id):
            removed += self.delete(scope, edge.source_id, edge.type, edge.target_id)
        return removed

    def has_any(self, scope: Scope) -> bool:
        """Whether the end user has any edge at all: one single-item read, so recall can skip the graph work."""
        return self._edges.has_any(ItemScope.of_user(scope))


def edge_at(
    source_id: str,
    relation: EdgeType,
    target_id: str,
    at: datetime,
    *,
    strength: float = 1.0,
    **properties: Any,
) -> Edge:
    """Shorthand for building an edge with its type's properties as keyword arguments."""
    return Edge(
        source_id=source_id,
        target_id=target_id,
        type=relation,
        strength=strength,
        timestamp=at,
        properties=properties,
    )
