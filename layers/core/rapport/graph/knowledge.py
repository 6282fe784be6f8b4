"""The tenant's shared knowledge graph: what every assistant of the tenant knows, never an end user's memories."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rapport.clock import Clock
from rapport.domain.text import tokenize
from rapport.errors import InvalidInputError, NotFoundError
from rapport.graph.knowledge_models import (
    KNOWLEDGE_RELATION,
    EntityMention,
    FoundNode,
    KnowledgeEdge,
    KnowledgeNode,
    KnowledgeResult,
    KnowledgeWrite,
    NewKnowledgeEdge,
    NewNode,
    NodeKind,
    node_id,
)
from rapport.graph.knowledge_store import KnowledgeRepository
from rapport.ports.items import ItemStore
from rapport.settings import GraphSettings

_MAX_QUERY_TERMS = 10
_TERM_HITS = 100


class KnowledgeGraph:
    def __init__(self, items: ItemStore, settings: GraphSettings, clock: Clock) -> None:
        self._knowledge = KnowledgeRepository(items)
        self._settings = settings
        self._clock = clock

    # writes

    def write(self, tenant_id: str, nodes: Sequence[NewNode], edges: Sequence[NewKnowledgeEdge]) -> KnowledgeWrite:
        """Upsert nodes, then edges between them. Everything is checked before anything is written."""
        if not nodes and not edges:
            raise InvalidInputError("nothing to store: send at least one node or edge")
        if len(nodes) + len(edges) > self._settings.knowledge_max_batch:
            raise InvalidInputError(
                f"{len(nodes) + len(edges)} nodes and edges; the limit is {self._settings.knowledge_max_batch} per call"
            )
        # A node of this request can be named by its name or by the id it will get.
        by_name = {n.name.casefold(): node_id(n.kind, n.name) for n in nodes}
        by_name |= {identifier: identifier for identifier in list(by_name.values())}
        planned = [
            (
                self._resolve(tenant_id, e.source, by_name),
                _relation(e.relation),
                self._resolve(tenant_id, e.target, by_name),
                e,
            )
            for e in edges
        ]
        for source, relation, target, _ in planned:
            if source == target:
                raise InvalidInputError(f"an edge {relation} from {source} to itself links nothing")
        stored_nodes = [self._put_node(tenant_id, new) for new in nodes]
        stored_edges = [self._put_edge(tenant_id, s, r, t, e) for s, r, t, e in planned]
        return KnowledgeWrite(nodes=stored_nodes, edges=stored_edges)

    def add_entities(self, tenant_id: str, mentions: Sequence[EntityMention]) -> list[str]:
        """The pipeline's feed: entity names found in conversations, reduced to name and category. Only the
        shareable categories pass (things, not people); no end-user id, memory id or text is kept."""
        shareable = {c.casefold() for c in self._settings.knowledge_shareable_categories}
        ids: list[str] = []
        for mention in dict.fromkeys(mentions):
            if mention.category.casefold() not in shareable:
                continue
            node = NewNode(kind=NodeKind.ENTITY, name=mention.name.strip(), category=mention.category.casefold())
            ids.append(self._put_node(tenant_id, node).id)
        return ids

    def _put_node(self, tenant_id: str, new: NewNode) -> KnowledgeNode:
        now = self._clock.now()
        identifier = node_id(new.kind, new.name)
        old = self._knowledge.get_node(tenant_id, identifier)
        aliases = list(dict.fromkeys([*(old.aliases if old else []), *(a.strip() for a in new.aliases if a.strip())]))
        node = KnowledgeNode(
            id=identifier,
            kind=new.kind,
            name=old.name if old else new.name.strip(),
            category=new.category or (old.category if old else None),
            description=new.description or (old.description if old else None),
            aliases=aliases,
            attributes={**(old.attributes if old else {}), **new.attributes},
            created_at=old.created_at if old else now,
            updated_at=now,
        )
        self._knowledge.put_node(tenant_id, node, _terms_of(node), now=now)
        return node

    def _put_edge(
        self, tenant_id: str, source: str, relation: str, target: str, new: NewKnowledgeEdge
    ) -> KnowledgeEdge:
        now = self._clock.now()
        old = self._knowledge.get_edge(tenant_id, source, relation, target)
        # The same rule as between memories: properties merge, strength never drops on a repeat.
        edge = KnowledgeEdge(
            source_id=source,
            target_id=target,
            relation=relation,
            strength=max(new.strength, old.strength) if old else new.strength,
            properties={**(old.properties if old else {}), **new.properties},
            timestamp=now,
        )
        self._knowledge.put_edge(tenant_id, edge, now=now)
        return edge

    def _resolve(self, tenant_id: str, reference: str, by_name: dict[str, str]) -> str:
        reference = reference.strip()
        if self._knowledge.has_node(tenant_id, reference):
            return reference
        if reference.casefold() in by_name:
            return by_name[reference.casefold()]
        for kind in NodeKind:
            candidate = node_id(kind, reference)
            if self._knowledge.has_node(tenant_id, candidate):
                return candidate
        raise InvalidInputError(
            f"edge end {reference!r} is no node: send it in `nodes`, or name a stored node by id or name"
        )

    def delete_node(self, tenant_id: str, identifier: str) -> int:
        """Removes a node, every edge to or from it (both the edge and its mirror) and its name's search terms;
        returns how many edges went. NotFoundError for no such node. The node goes last, so a retry after a
        failure half way finds it and finishes the job."""
        node = self.get_node(tenant_id, identifier)
        if node is None:
            raise NotFoundError(f"no knowledge node {identifier!r}")
        removed = 0
        while edges := self._knowledge.edges_of(tenant_id, identifier):
            for edge in edges:
                removed += self._knowledge.delete_edge(tenant_id, edge)
        self._knowledge.delete_node(tenant_id, identifier, _terms_of(node))
        return removed

    # reads

    def get_node(self, tenant_id: str, identifier: str) -> KnowledgeNode | None:
        return self._knowledge.get_node(tenant_id, identifier)

    def query(self, tenant_id: str, text: str, depth: int | None = None) -> KnowledgeResult:
        """Nodes whose name shares the query's words, then their neighbourhood up to `depth` hops, both ways."""
        settings = self._settings
        depth = settings.knowledge_default_depth if depth is None else depth
        if not 0 <= depth <= settings.knowledge_max_depth:
            raise InvalidInputError(f"depth must be between 0 and {settings.knowledge_max_depth}; got {depth}")
        terms = list(dict.fromkeys(tokenize(text)))[:_MAX_QUERY_TERMS]
        if not text.strip() or not terms:
            raise InvalidInputError("query has no searchable words: send a name or words to look for")
        matched: dict[str, list[str]] = {}
        for term in terms:
            for found in self._knowledge.nodes_with_term(tenant_id, term, limit=_TERM_HITS):
                matched.setdefault(found, []).append(term)
        counts = Counter({node: len(found) for node, found in matched.items()})
        seeds = [node for node, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))][
            : settings.knowledge_seed_limit
        ]
        distance = {node: 0 for node in seeds}
        edges: dict[tuple[str, str, str], KnowledgeEdge] = {}
        frontier, truncated = list(seeds), False
        for hop in range(1, depth + 1):
            following: list[str] = []
            for node in frontier:
                for edge in self._knowledge.edges_of(tenant_id, node):
                    edges[(edge.source_id, edge.relation, edge.target_id)] = edge
                    other = edge.target_id if edge.source_id == node else edge.source_id
                    if other in distance:
                        continue
                    if len(distance) >= settings.knowledge_max_nodes:
                        truncated = True
                        continue
                    distance[other] = hop
                    following.append(other)
            frontier = following
        nodes = [
            FoundNode(node=node, distance=distance[node.id], matched_terms=matched.get(node.id, []))
            for node in (self.get_node(tenant_id, identifier) for identifier in distance)
            if node is not None
        ]
        nodes.sort(key=lambda found: (found.distance, -len(found.matched_terms), found.node.name))
        kept = {found.node.id for found in nodes}
        return KnowledgeResult(
            query=text,
            depth=depth,
            nodes=nodes,
            edges=[e for e in edges.values() if e.source_id in kept and e.target_id in kept],
            truncated=truncated,
        )


def _terms_of(node: KnowledgeNode) -> list[str]:
    """The words of a node's name and aliases: what finds it."""
    return list(dict.fromkeys(t for text in (node.name, *node.aliases) for t in tokenize(text)))


def _relation(name: str) -> str:
    relation = name.strip().upper().replace(" ", "_").replace("-", "_")
    if not KNOWLEDGE_RELATION.fullmatch(relation):
        raise InvalidInputError(f"relation {name!r} must be a word in UPPER_SNAKE (letters, digits, _), up to 48")
    return relation
