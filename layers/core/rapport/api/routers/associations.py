"""Routes for typed associations between one end user's memories: link, list both ways, unlink."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.dependencies import UserScope
from rapport.api.graph_schemas import AssociateRequest, AssociationOut, ListedAssociationOut
from rapport.graph.associations import AssociationService, NewAssociation


def build_associations_router(associations: AssociationService) -> Router:
    router = Router()

    @router.post("/v1/users/<user_id>/associations", tags=["associations"], summary="Link two memories")
    def associate(
        user_id: str, scope: UserScope, body: AssociateRequest
    ):  # a Response: powertools cannot build its schema
        result = associations.associate(scope, NewAssociation.model_validate(body.model_dump()))
        return Response(
            status_code=201 if result.created else 200,
            content_type=content_types.APPLICATION_JSON,
            body=AssociationOut.of(result).model_dump(mode="json"),
        )

    @router.get(
        "/v1/users/<user_id>/memories/<memory_id>/associations",
        tags=["associations"],
        summary="A memory's associations, outgoing and incoming",
    )
    def list_associations(
        user_id: str,
        scope: UserScope,
        memory_id: str,
        relation: Annotated[str | None, Query(description="Only this relation (enrichment types too).")] = None,
    ) -> dict:
        listed = associations.list_for(scope, memory_id, relation)
        return {
            "memory_id": memory_id,
            "associations": [ListedAssociationOut.of(a).model_dump(mode="json") for a in listed],
        }

    @router.delete("/v1/users/<user_id>/associations", tags=["associations"], summary="Remove one association")
    def remove_association(
        user_id: str,
        scope: UserScope,
        memory_id: Annotated[str, Query(min_length=1)],
        related_memory_id: Annotated[str, Query(min_length=1)],
        relation: Annotated[str, Query(min_length=1)],
    ):  # a Response: powertools cannot build a schema for its annotation
        associations.remove(scope, memory_id, related_memory_id, relation)
        return Response(status_code=204, content_type=content_types.APPLICATION_JSON, body="")

    return router
