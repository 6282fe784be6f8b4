"""Where the tenant's knowledge graph is kept: its item kinds (nodes, edges and their mirrors, the word index) and
the repository that reads and writes them.

Tenant-scoped items (ItemScope without a user): erasing an end user never touches them, which is right only
because nothing here is derived from an end user's words without going through `KnowledgeGraph.add_entities`'
filter.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from rapport.graph.knowledge_models import KnowledgeEdge, KnowledgeNode
from rapport.ports.items import ItemQuery, ItemScope, ItemStore
from rapport.services.mirrored_edges import MirroredEdges

NODE_KIND = "KG_NODE"
EDGE_KIND = "KG_EDGE"
INCOMING_KIND = "KG_EDGE_IN"
TERM_KIND = "KG_TERM"  # `{term}#{node id}`: finds nodes by the words of their name without a scan
_EDGES_READ = 200  # per direction and node: the walk is capped by nodes anyway


class TermEntry(BaseModel):
    """One word of a node's name or aliases, pointing at the node."""

    node_id: str


class KnowledgeRepository:
    def __init__(self, items: ItemStore) -> None:
        self._items = items
        self._edges = MirroredEdges(items, kind=EDGE_KIND, mirror_kind=INCOMING_KIND)

    # nodes

    def get_node(self, tenant_id: str, identifier: str) -> KnowledgeNode | None:
        item = self._items.get_item(ItemScope(tenant_id=tenant_id), NODE_KIND, identifier)
        return KnowledgeNode.model_validate(item.body) if item else None

    def has_node(self, tenant_id: str, identifier: str) -> bool:
        return self._items.get_item(ItemScope(tenant_id=tenant_id), NODE_KIND, identifier) is not None

    def put_node(self, tenant_id: str, node: KnowledgeNode, terms: list[str], *, now: datetime) -> None:
        """The node, then the words that find it."""
        scope = ItemScope(tenant_id=tenant_id)
        self._items.put_item(scope, NODE_KIND, node.id, node.model_dump(mode="json"), now=now)
        for term in terms:
            entry = TermEntry(node_id=node.id).model_dump(mode="json")
            self._items.put_item(scope, TERM_KIND, f"{term}#{node.id}", entry, now=now)

    def delete_node(self, tenant_id: str, identifier: str, terms: list[str]) -> None:
        """The words that find the node, then the node: a retry after a failure half way still finds the node."""
        scope = ItemScope(tenant_id=tenant_id)
        for term in terms:
            self._items.delete_item(scope, TERM_KIND, f"{term}#{identifier}")
        self._items.delete_item(scope, NODE_KIND, identifier)

    def nodes_with_term(self, tenant_id: str, term: str, *, limit: int) -> list[str]:
        """Ids of the nodes whose name or aliases hold the word, at most `limit`."""
        page = self._items.list_items(
            ItemScope(tenant_id=tenant_id), ItemQuery(kind=TERM_KIND, key_prefix=f"{term}#", limit=limit)
        )
        return [TermEntry.model_validate(item.body).node_id for item in page.items]

    # edges

    def get_edge(self, tenant_id: str, source_id: str, relation: str, target_id: str) -> KnowledgeEdge | None:
        body = self._edges.get(ItemScope(tenant_id=tenant_id), source_id, relation, target_id)
        return KnowledgeEdge.model_validate(body) if body is not None else None

    def put_edge(self, tenant_id: str, edge: KnowledgeEdge, *, now: datetime) -> None:
        scope = ItemScope(tenant_id=tenant_id)
        self._edges.put(scope, edge.source_id, edge.relation, edge.target_id, edge.model_dump(mode="json"), now=now)

    def delete_edge(self, tenant_id: str, edge: KnowledgeEdge) -> bool:
        """The edge and its mirror; True when the edge was there."""
        return self._edges.delete(ItemScope(tenant_id=tenant_id), edge.source_id, edge.relation, edge.target_id)

    def edges_of(self, tenant_id: str, node_id: str) -> list[KnowledgeEdge]:
        """The edges from the node, then those pointing at it."""
        scope = ItemScope(tenant_id=tenant_id)
        bodies = self._edges.outgoing(scope, node_id, limit=_EDGES_READ)
        bodies += self._edges.incoming(scope, node_id, limit=_EDGES_READ)
        return [KnowledgeEdge.model_validate(body) for body in bodies]
