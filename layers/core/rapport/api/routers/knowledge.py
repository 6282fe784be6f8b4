"""Routes for the tenant's shared knowledge graph: add nodes and edges, query a neighbourhood."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.contract import READ, WITH_BODY, WRITE, answers
from rapport.api.dependencies import TenantId
from rapport.api.graph_schemas import (
    KnowledgeEdgeOut,
    KnowledgeQueryOut,
    KnowledgeRequest,
    KnowledgeWrittenOut,
    NodeDeletedOut,
    NodeOut,
)
from rapport.errors import NotFoundError
from rapport.graph.knowledge import KnowledgeGraph
from rapport.graph.knowledge_models import NewKnowledgeEdge, NewNode


def build_knowledge_router(knowledge: KnowledgeGraph) -> Router:
    router = Router()

    @router.post(
        "/v1/knowledge",
        tags=["knowledge"],
        summary="Add shared knowledge: nodes and typed edges",
        description="Shared by every end user of the tenant. A node named again is merged; an edge names its nodes "
        "by id (`entity:postgresql`) or name.",
        operation_id="knowledge_add",
        status_code=201,
        responses=answers({201: "The nodes and edges as stored"}, errors=WITH_BODY),
    )
    def add_knowledge(body: KnowledgeRequest, tenant_id: TenantId) -> KnowledgeWrittenOut:
        written = knowledge.write(
            tenant_id,
            [NewNode.model_validate(n.model_dump()) for n in body.nodes],
            [NewKnowledgeEdge.model_validate(e.model_dump()) for e in body.edges],
        )
        return KnowledgeWrittenOut(
            nodes=[NodeOut.of(n) for n in written.nodes], edges=[KnowledgeEdgeOut.of(e) for e in written.edges]
        )

    @router.get(
        "/v1/knowledge/query",
        tags=["knowledge"],
        summary="Nodes matching a query and their neighbourhood",
        operation_id="knowledge_query",
        responses=answers(
            {200: "The matched nodes, their neighbours within `depth`, and the edges between"}, errors=READ
        ),
    )
    def query_knowledge(
        query: Annotated[str, Query(min_length=1, max_length=1000)],
        tenant_id: TenantId,
        depth: Annotated[int | None, Query(description="Hops from the matched nodes; default 2.")] = None,
    ) -> KnowledgeQueryOut:
        return KnowledgeQueryOut.of(knowledge.query(tenant_id, query, depth))

    @router.get(
        "/v1/knowledge/nodes/<node_id>",
        tags=["knowledge"],
        summary="One node of the shared graph",
        operation_id="knowledge_nodes_get",
        responses=answers({200: "The node"}, errors=READ),
    )
    def get_node(node_id: str, tenant_id: TenantId) -> NodeOut:
        node = knowledge.get_node(tenant_id, node_id)
        if node is None:
            raise NotFoundError(f"no knowledge node {node_id!r}")
        return NodeOut.of(node)

    @router.delete(
        "/v1/knowledge/nodes/<node_id>",
        tags=["knowledge"],
        summary="Remove a node and its edges",
        operation_id="knowledge_nodes_delete",
        responses=answers({200: "The node removed, and how many edges went with it"}, errors=WRITE),
    )
    def delete_node(node_id: str, tenant_id: TenantId) -> NodeDeletedOut:
        return NodeDeletedOut(deleted=node_id, edges_removed=knowledge.delete_node(tenant_id, node_id))

    return router
