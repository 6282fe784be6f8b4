"""Edges kept from both ends: each edge is an item under its source and a mirror under its target, so either end
lists its edges with a key-prefix query. Memory edges and the tenant's knowledge graph both store edges this way."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rapport.ports.items import ItemQuery, ItemScope, ItemStore

_PAGE = 200


def edge_item_key(source_id: str, relation: str, target_id: str) -> str:
    """`{source}#{RELATION}#{target}`: the ends first, so listing a node's edges is one key prefix."""
    return f"{source_id}#{relation}#{target_id}"


class MirroredEdges:
    """One edge kind and its mirror kind. DynamoDB lists a partition only by key prefix, so the edges pointing at a
    node need their own items (the mirror, keyed by the target) rather than a scan. Both items hold the same body;
    writes are upserts on deterministic keys, so writing the same edge twice leaves one edge."""

    def __init__(self, items: ItemStore, *, kind: str, mirror_kind: str) -> None:
        self._items = items
        self._kind = kind
        self._mirror_kind = mirror_kind

    def put(
        self, scope: ItemScope, source_id: str, relation: str, target_id: str, body: dict[str, Any], *, now: datetime
    ) -> None:
        """The edge, then its mirror: a mirror never exists without the edge it points back to."""
        self._items.put_item(scope, self._kind, edge_item_key(source_id, relation, target_id), body, now=now)
        self._items.put_item(scope, self._mirror_kind, edge_item_key(target_id, relation, source_id), body, now=now)

    def get(self, scope: ItemScope, source_id: str, relation: str, target_id: str) -> dict[str, Any] | None:
        item = self._items.get_item(scope, self._kind, edge_item_key(source_id, relation, target_id))
        return item.body if item else None

    def delete(self, scope: ItemScope, source_id: str, relation: str, target_id: str) -> bool:
        """The edge and its mirror; True when the edge was there."""
        deleted = self._items.delete_item(scope, self._kind, edge_item_key(source_id, relation, target_id))
        self._items.delete_item(scope, self._mirror_kind, edge_item_key(target_id, relation, source_id))
        return deleted

    def outgoing(
        self, scope: ItemScope, node_id: str, relation: str | None = None, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Bodies of the edges from a node (of one relation when given), in key order; at most `limit`."""
        return self._list(scope, self._kind, node_id, relation, limit)

    def incoming(
        self, scope: ItemScope, node_id: str, relation: str | None = None, *, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Bodies of the edges pointing at a node, read from their mirrors; at most `limit`."""
        return self._list(scope, self._mirror_kind, node_id, relation, limit)

    def has_any(self, scope: ItemScope) -> bool:
        """Whether the scope holds any edge at all: one single-item read."""
        return bool(self._items.list_items(scope, ItemQuery(kind=self._kind, limit=1)).items)

    def _list(
        self, scope: ItemScope, kind: str, node_id: str, relation: str | None, limit: int | None
    ) -> list[dict[str, Any]]:
        if limit is not None and limit < 1:
            return []
        prefix = f"{node_id}#{relation}#" if relation else f"{node_id}#"
        bodies: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            size = _PAGE if limit is None else min(_PAGE, limit - len(bodies))
            page = self._items.list_items(scope, ItemQuery(kind=kind, key_prefix=prefix, limit=size, cursor=cursor))
            bodies.extend(item.body for item in page.items)
            cursor = page.next_cursor
            if cursor is None or (limit is not None and len(bodies) >= limit):
                return bodies
