"""Routes for the tenant's shared knowledge graph: add nodes and edges, query a neighbourhood."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.dependencies import TenantId
from rapport.api.graph_schemas import KnowledgeEdgeOut, KnowledgeQueryOut, KnowledgeRequest, NodeOut
from rapport.errors import NotFoundError
from rapport.graph.knowledge import KnowledgeGraph
from rapport.graph.knowledge_models import NewKnowledgeEdge, NewNode


def build_knowledge_router(knowledge: KnowledgeGraph) -> Router:
    router = Router()

    @router.post("/v1/knowledge", tags=["knowledge"], summary="Add shared knowledge: nodes and typed edges")
    def add_knowledge(
        body: KnowledgeRequest, tenant_id: TenantId
    ):  # a Response: powertools cannot build a schema for its annotation
        written = knowledge.write(
            tenant_id,
            [NewNode.model_validate(n.model_dump()) for n in body.nodes],
            [NewKnowledgeEdge.model_validate(e.model_dump()) for e in body.edges],
        )
        return Response(
            status_code=201,
            content_type=content_types.APPLICATION_JSON,
            body={
                "status": "stored",
                "nodes": [NodeOut.of(n).model_dump(mode="json") for n in written.nodes],
                "edges": [KnowledgeEdgeOut.of(e).model_dump(mode="json") for e in written.edges],
            },
        )

    @router.get("/v1/knowledge/query", tags=["knowledge"], summary="Nodes matching a query and their neighbourhood")
    def query_knowledge(
        query: Annotated[str, Query(min_length=1, max_length=1000)],
        tenant_id: TenantId,
        depth: Annotated[int | None, Query(description="Hops from the matched nodes; default 2.")] = None,
    ) -> dict:
        return KnowledgeQueryOut.of(knowledge.query(tenant_id, query, depth)).model_dump(mode="json")

    @router.get("/v1/knowledge/nodes/<node_id>", tags=["knowledge"], summary="One node of the shared graph")
    def get_node(node_id: str, tenant_id: TenantId) -> dict:
        node = knowledge.get_node(tenant_id, node_id)
        if node is None:
            raise NotFoundError(f"no knowledge node {node_id!r}")
        return NodeOut.of(node).model_dump(mode="json")

    @router.delete("/v1/knowledge/nodes/<node_id>", tags=["knowledge"], summary="Remove a node and its edges")
    def delete_node(node_id: str, tenant_id: TenantId) -> dict:
        edges_removed = knowledge.delete_node(tenant_id, node_id)
        return {"deleted": node_id, "edges_removed": edges_removed}

    return router
