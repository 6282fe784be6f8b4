"""The edge repository: typed relationships between memories, kept in one adjacency item per node.

Each node (a memory, an interaction, a pattern) has one `EDGES` item whose fields are its edges, `out|{TYPE}|{other}`
and `in|{TYPE}|{other}`, each holding the edge. Writing edges is one blind write of fields, whatever their number
(no read first, no conflict between writers of different edges); reading the edges of many nodes is one batched read
of their items, which is what recall does for all its candidates at once.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from pydantic import TypeAdapter

from rapport.clock import Clock, SystemClock
from rapport.domain.relations import SYMMETRIC, Edge, EdgeType, edge_type_of
from rapport.domain.scope import Scope
from rapport.ports.items import (
    FieldChange,
    ItemDelete,
    ItemQuery,
    ItemScope,
    ItemStore,
    ItemWrite,
    SharedItemForms,
    StoredItem,
)

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


Link = tuple[str, float]  # an edge's type (its value) and strength: what the relation score reads of it
_Score = TypeVar("_Score")


class Adjacency:
    """One node's adjacency item as read. Its edges are validated when asked for (expansion follows them); the
    relation score reads only each edge's type and strength, straight from the stored fields (`links`): recall scores
    twenty candidates' edges per query and expands from few, and validating every edge was most of its graph work.

    Read-only, so one may serve every reader of the item until it is written (`SharedItemForms`): the body is never
    handed out (each `edges()` validates its own copies) and a relation score, a pure function of the links, is
    computed once per rule (`relation`). One kept between reads (`kept`) holds its body as `marshal` bytes, a few kB
    where the parsed fields of twenty-odd edges are tens, since what a recall reads again is the score."""

    def __init__(self, body: dict[str, Any] | None) -> None:
        self._body: dict[str, Any] | None = body or {}
        self._packed = b""
        self._names = sorted(self._body)
        self._relations: dict[tuple[int, Callable[..., Any]], Any] = {}

    @classmethod
    def kept(cls, body: dict[str, Any]) -> Adjacency:
        adjacency = cls(body)
        adjacency._packed = marshal.dumps(body)
        adjacency._body = None
        return adjacency

    def _fields(self) -> dict[str, Any]:
        if self._body is not None:
            return self._body
        return marshal.loads(self._packed)  # type: ignore[no-any-return]  # noqa: S302 - bytes made by `kept`

    def edges(self) -> NodeEdges:
        edges = NodeEdges()
        fields = self._fields()
        validated = _EDGE_LIST.validate_python([fields[n] for n in self._names])
        for name, edge in zip(self._names, validated, strict=True):
            (edges.outgoing if name.startswith(_OUT + "|") else edges.incoming).append(edge)
        return edges

    def relation(self, limit: int, score: Callable[[list[Link], list[Link]], _Score]) -> _Score:
        """`score(incoming, outgoing)` of `links(limit)`, kept per limit and score: the caller's score is pure and
        its result immutable (a `RelationScore`), so a shared adjacency scores once for every recall."""
        key = (limit, score)
        found = self._relations.get(key)
        if found is None:
            outgoing, incoming = self.links(limit)
            found = self._relations[key] = score(incoming, outgoing)
        return found  # type: ignore[no-any-return]  # kept by the score that made it

    def links(self, limit: int) -> tuple[list[Link], list[Link]]:
        """(outgoing, incoming), each in key order and cut at `limit`, as `edges()` lists them."""
        outgoing: list[Link] = []
        incoming: list[Link] = []
        fields = self._fields()
        for name in self._names:
            side = outgoing if name.startswith(_OUT + "|") else incoming
            if len(side) < limit:
                edge = fields[name]
                side.append((str(edge["type"]), float(edge.get("strength", 1.0))))
        return outgoing, incoming


def _adjacency(item: StoredItem | None) -> Adjacency:
    return Adjacency(item.body if item is not None else None)


def _shared_adjacency(item: StoredItem) -> Adjacency:
    """The form a store that shares item forms keeps (one function, so the store keeps one form per item)."""
    return Adjacency.kept(item.body)


_NO_EDGES = Adjacency(None)  # read-only: what every node without an adjacency item reads


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
        self._forms = items if isinstance(items, SharedItemForms) else None  # a store that shares read-only forms

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
        return {node: adjacency.edges() for node, adjacency in self.adjacency_of(scope, node_ids).items()}

    def adjacency_of(self, scope: Scope, node_ids: Iterable[str]) -> dict[str, Adjacency]:
        """As `edges_of`, the edges validated only when asked for."""
        wanted = list(dict.fromkeys(node_ids))
        if not wanted:
            return {}
        if self._forms is not None:
            shared = self._forms.get_item_forms(
                ItemScope.of_user(scope), [(ADJACENCY_KIND, node) for node in wanted], _shared_adjacency
            )
            return {node: shared.get((ADJACENCY_KIND, node), _NO_EDGES) for node in wanted}
        found = self._items.get_items(ItemScope.of_user(scope), [(ADJACENCY_KIND, node) for node in wanted])
        return {node: _adjacency(found.get((ADJACENCY_KIND, node))) for node in wanted}

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
