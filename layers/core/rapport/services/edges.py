"""The edge repository: typed relationships kept as items beside the memories, listable from either end."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rapport.domain.relations import SYMMETRIC, Edge, EdgeType
from rapport.ports.items import ItemQuery, ItemScope, ItemStore, StoredItem

EDGE_KIND = "EDGE"
# The mirror of each edge, keyed by its target: DynamoDB can only list a partition by key prefix, so finding the
# edges that point at a memory needs a second item rather than a scan.
INCOMING_KIND = "EDGE_IN"
_PAGE = 200


def edge_key(source_id: str, relation: EdgeType, target_id: str) -> str:
    return f"{source_id}#{relation.value}#{target_id}"


def _body(edge: Edge) -> dict[str, Any]:
    return edge.model_dump(mode="json")


def _edge(item: StoredItem) -> Edge:
    return Edge.model_validate(item.body)


class EdgeRepository:
    """Writes are upserts on a deterministic key, so writing the same edge twice leaves one edge."""

    def __init__(self, items: ItemStore) -> None:
        self._items = items

    def put(self, tenant_id: str, user_id: str, edge: Edge) -> Edge:
        """Store the edge (both ways for a bidirectional or symmetric type) and its incoming mirror(s)."""
        scope = ItemScope(tenant_id=tenant_id, user_id=user_id)
        directions = [edge, edge.reversed()] if edge.type in SYMMETRIC else [edge]
        for directed in directions:
            body = _body(directed)
            self._items.put_item(
                scope,
                EDGE_KIND,
                edge_key(directed.source_id, directed.type, directed.target_id),
                body,
                now=directed.timestamp,
            )
            self._items.put_item(
                scope,
                INCOMING_KIND,
                edge_key(directed.target_id, directed.type, directed.source_id),
                body,
                now=directed.timestamp,
            )
        return edge

    def get(self, tenant_id: str, user_id: str, source_id: str, relation: EdgeType, target_id: str) -> Edge | None:
        scope = ItemScope(tenant_id=tenant_id, user_id=user_id)
        item = self._items.get_item(scope, EDGE_KIND, edge_key(source_id, relation, target_id))
        return _edge(item) if item else None

    def outgoing(
        self,
        tenant_id: str,
        user_id: str,
        source_id: str,
        relation: EdgeType | None = None,
        *,
        limit: int | None = None,
    ) -> list[Edge]:
        """Edges from a node, optionally of one type (a key-prefix query, no scan); at most `limit` when given."""
        return self._list(tenant_id, user_id, EDGE_KIND, source_id, relation, limit)

    def incoming(
        self,
        tenant_id: str,
        user_id: str,
        target_id: str,
        relation: EdgeType | None = None,
        *,
        limit: int | None = None,
    ) -> list[Edge]:
        """Edges that point at a node, read from their mirrors; at most `limit` when given."""
        return self._list(tenant_id, user_id, INCOMING_KIND, target_id, relation, limit)

    def delete(self, tenant_id: str, user_id: str, source_id: str, relation: EdgeType, target_id: str) -> bool:
        scope = ItemScope(tenant_id=tenant_id, user_id=user_id)
        pairs = [(source_id, target_id)]
        if relation in SYMMETRIC:
            pairs.append((target_id, source_id))
        deleted = False
        for src, dst in pairs:
            deleted |= self._items.delete_item(scope, EDGE_KIND, edge_key(src, relation, dst))
            self._items.delete_item(scope, INCOMING_KIND, edge_key(dst, relation, src))
        return deleted

    def delete_all(self, tenant_id: str, user_id: str, node_id: str) -> int:
        """Remove every edge from or to the node, mirrors and reverse copies included; how many edges went."""
        removed = 0
        for edge in self.outgoing(tenant_id, user_id, node_id) + self.incoming(tenant_id, user_id, node_id):
            removed += self.delete(tenant_id, user_id, edge.source_id, edge.type, edge.target_id)
        return removed

    def has_any(self, tenant_id: str, user_id: str) -> bool:
        """Whether the end user has any edge at all: one single-item read, so recall can skip the graph work."""
        scope = ItemScope(tenant_id=tenant_id, user_id=user_id)
        return bool(self._items.list_items(scope, ItemQuery(kind=EDGE_KIND, limit=1)).items)

    def _list(
        self, tenant_id: str, user_id: str, kind: str, node_id: str, relation: EdgeType | None, limit: int | None = None
    ) -> list[Edge]:
        if limit is not None and limit < 1:
            return []
        scope = ItemScope(tenant_id=tenant_id, user_id=user_id)
        prefix = f"{node_id}#{relation.value}#" if relation else f"{node_id}#"
        edges: list[Edge] = []
        cursor: str | None = None
        while True:
            size = _PAGE if limit is None else min(_PAGE, limit - len(edges))
            page = self._items.list_items(scope, ItemQuery(kind=kind, key_prefix=prefix, limit=size, cursor=cursor))
            edges.extend(_edge(item) for item in page.items)
            cursor = page.next_cursor
            if cursor is None or (limit is not None and len(edges) >= limit):
                return edges


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
