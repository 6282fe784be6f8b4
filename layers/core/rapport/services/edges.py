"""The edge repository: typed relationships between memories, kept in one adjacency item per node.

Each node (a memory, an interaction, a pattern) has one `EDGES` item whose fields are its edges, `out|{TYPE}|{other}`
and `in|{TYPE}|{other}`, each holding the edge. Writing edges is one blind write of fields, whatever their number
(no read first, no conflict between writers of different edges); reading the edges of many nodes is one batched read
of their items, which is what recall does for all its candidates at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter

from rapport.clock import Clock, SystemClock
from rapport.domain.relations import SYMMETRIC, Edge, EdgeType, edge_type_of
from rapport.domain.scope import Scope
from rapport.ports.items import FieldChange, ItemDelete, ItemQuery, ItemScope, ItemStore, ItemWrite, StoredItem

ADJACENCY_KIND = "EDGES"
_OUT, _IN = "out", "in"
_PAGE = 100


@dataclass
class NodeEdges:
    """One node's edges, both directions, in key order (type, then the other end)."""

    outgoing: list[Edge] = field(default_factory=list)
    incoming: list[Edge] = field(default_factory=list)


def _field(direction: str, relation: str, other: str) -> str:
    return f"{direction}|{relation}|{other}"


# One validation call per node rather than one per edge: recall reads a few hundred edges per query, and the
# per-call overhead was half their cost.
_EDGE_LIST = TypeAdapter(list[Edge])


def _node_edges(item: StoredItem | None) -> NodeEdges:
    edges = NodeEdges()
    if item is None:
        return edges
    names = sorted(item.body)
    for name, edge in zip(names, _EDGE_LIST.validate_python([item.body[n] for n in names]), strict=True):
        (edges.outgoing if name.startswith(_OUT + "|") else edges.incoming).append(edge)
    return edges


def _directed(edges: Iterable[Edge]) -> list[Edge]:
    """A symmetric type is kept both ways, so listing either end finds it."""
    return [d for edge in edges for d in ([edge, edge.reversed()] if edge.type in SYMMETRIC else [edge])]


def _key(edge: Edge) -> tuple[str, str, str]:
    return edge.source_id, edge.type.value, edge.target_id


class EdgeRepository:
    """The end user's edges, each an `Edge` stored in the adjacency items of both of its ends."""

    def __init__(self, items: ItemStore, clock: Clock | None = None) -> None:
        self._items = items
        self._clock = clock or SystemClock()  # only stamps the items a removal writes

    # writes

    def put(self, scope: Scope, edge: Edge) -> Edge:
        self.put_many(scope, [edge])
        return edge

    def put_many(self, scope: Scope, edges: Sequence[Edge], *, with_items: Sequence[ItemWrite] = ()) -> None:
        """Upserts on deterministic fields, all in one write (with the caller's own `with_items`, e.g. the pattern
        nodes enrichment counted): writing the same edge twice leaves one edge."""
        writes = [*self.writes(edges), *with_items]
        if writes:
            self._items.write_items(ItemScope.of_user(scope), writes, now=self._clock.now())

    def writes(self, edges: Sequence[Edge]) -> list[ItemWrite]:
        """The item writes that store `edges`, for a caller that writes them together with its own items."""
        fields: dict[str, dict[str, Any]] = {}
        for edge in _directed(edges):
            body = edge.model_dump(mode="json")
            relation = edge.type.value
            fields.setdefault(edge.source_id, {})[_field(_OUT, relation, edge.target_id)] = body
            fields.setdefault(edge.target_id, {})[_field(_IN, relation, edge.source_id)] = body
        return [FieldChange(kind=ADJACENCY_KIND, key=node, set=values) for node, values in fields.items()]

    def delete(self, scope: Scope, source_id: str, relation: EdgeType, target_id: str) -> bool:
        """The edge (both ways for a symmetric type); True when it was there."""
        present = any(
            _key(e) == (source_id, relation.value, target_id) for e in self.outgoing(scope, source_id, relation)
        )
        self._remove(scope, [(source_id, relation.value, target_id)], deleted_node=None)
        return present

    def delete_all(self, scope: Scope, node_id: str) -> int:
        """Remove every edge from or to the node, reverse copies included; how many edges went."""
        edges = self.edges_of(scope, [node_id])[node_id]
        links = {_key(e) for e in [*edges.outgoing, *edges.incoming]}
        self._remove(scope, sorted(links), deleted_node=node_id)
        # A symmetric edge is one edge, though it is kept both ways.
        return len({(min(s, t), r, max(s, t)) if edge_type_of(r) in SYMMETRIC else (s, r, t) for s, r, t in links})

    def _remove(self, scope: Scope, links: Sequence[tuple[str, str, str]], *, deleted_node: str | None) -> None:
        removed: dict[str, set[str]] = {}
        for source, relation, target in links:
            pairs = [(source, target), (target, source)] if edge_type_of(relation) in SYMMETRIC else [(source, target)]
            for src, dst in pairs:
                removed.setdefault(src, set()).add(_field(_OUT, relation, dst))
                removed.setdefault(dst, set()).add(_field(_IN, relation, src))
        writes: list[ItemWrite] = [
            FieldChange(kind=ADJACENCY_KIND, key=node, remove=frozenset(names))
            for node, names in removed.items()
            if node != deleted_node
        ]
        if deleted_node is not None:
            writes.append(ItemDelete(kind=ADJACENCY_KIND, key=deleted_node))
        if writes:
            self._items.write_items(ItemScope.of_user(scope), writes, now=self._clock.now())

    # reads

    def edges_of(self, scope: Scope, node_ids: Iterable[str]) -> dict[str, NodeEdges]:
        """Every given node's edges, from one batched read (a node without edges has empty lists)."""
        wanted = list(dict.fromkeys(node_ids))
        if not wanted:
            return {}
        found = self._items.get_items(ItemScope.of_user(scope), [(ADJACENCY_KIND, node) for node in wanted])
        return {node: _node_edges(found.get((ADJACENCY_KIND, node))) for node in wanted}

    def get(self, scope: Scope, source_id: str, relation: EdgeType, target_id: str) -> Edge | None:
        for edge in self.outgoing(scope, source_id, relation):
            if edge.target_id == target_id:
                return edge
        return None

    def outgoing(
        self,
        scope: Scope,
        source_id: str,
        relation: EdgeType | None = None,
        *,
        limit: int | None = None,
    ) -> list[Edge]:
        """Edges from a node, optionally of one type, in key order; at most `limit` when given."""
        edges = self.edges_of(scope, [source_id])[source_id].outgoing
        return _limited([e for e in edges if relation is None or e.type == relation], limit)

    def incoming(
        self,
        scope: Scope,
        target_id: str,
        relation: EdgeType | None = None,
        *,
        limit: int | None = None,
    ) -> list[Edge]:
        """Edges that point at a node; at most `limit` when given."""
        edges = self.edges_of(scope, [target_id])[target_id].incoming
        return _limited([e for e in edges if relation is None or e.type == relation], limit)

    def has_any(self, scope: Scope) -> bool:
        """Whether the end user has any edge at all (an adjacency item whose edges were all removed does not count)."""
        cursor: str | None = None
        while True:
            page = self._items.list_items(
                ItemScope.of_user(scope), ItemQuery(kind=ADJACENCY_KIND, limit=_PAGE, cursor=cursor)
            )
            if any(item.body for item in page.items):
                return True
            cursor = page.next_cursor
            if cursor is None:
                return False


def _limited(edges: list[Edge], limit: int | None) -> list[Edge]:
    return edges if limit is None else edges[: max(limit, 0)]


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
