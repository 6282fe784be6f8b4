"""Routes for typed associations between one end user's memories: link, list both ways, unlink."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.contract import READ, WITH_BODY, WRITE, answers
from rapport.api.dependencies import UserScope
from rapport.api.graph_schemas import AssociateRequest, AssociationListOut, AssociationOut, ListedAssociationOut
from rapport.graph.associations import AssociationService, NewAssociation


def build_associations_router(associations: AssociationService) -> Router:
    router = Router()

    @router.post(
        "/v1/users/<user_id>/associations",
        tags=["associations"],
        summary="Link two memories",
        description="An unknown relation answers 400 with the valid ones in `details.valid_relations`.",
        operation_id="associations_add",
        responses=answers(
            {201: "The link was made", 200: "The link existed: its strength and properties were updated"},
            errors=WITH_BODY,
        ),
    )
    def associate(user_id: str, scope: UserScope, body: AssociateRequest) -> tuple[AssociationOut, int]:
        result = associations.associate(scope, NewAssociation.model_validate(body.model_dump()))
        return AssociationOut.of(result), 201 if result.created else 200

    @router.get(
        "/v1/users/<user_id>/memories/<memory_id>/associations",
        tags=["associations"],
        summary="A memory's associations, outgoing and incoming",
        operation_id="associations_list",
        responses=answers({200: "The memory's associations"}, errors=READ),
    )
    def list_associations(
        user_id: str,
        scope: UserScope,
        memory_id: str,
        relation: Annotated[str | None, Query(description="Only this relation (enrichment types too).")] = None,
    ) -> AssociationListOut:
        listed = associations.list_for(scope, memory_id, relation)
        return AssociationListOut(memory_id=memory_id, associations=[ListedAssociationOut.of(a) for a in listed])

    @router.delete(
        "/v1/users/<user_id>/associations",
        tags=["associations"],
        summary="Remove one association",
        operation_id="associations_delete",
        status_code=204,
        responses=answers({204: "Removed"}, errors=WRITE),
    )
    def remove_association(
        user_id: str,
        scope: UserScope,
        memory_id: Annotated[str, Query(min_length=1)],
        related_memory_id: Annotated[str, Query(min_length=1)],
        relation: Annotated[str, Query(min_length=1)],
    ):  # a 204: no body, so no model
        associations.remove(scope, memory_id, related_memory_id, relation)
        return Response(status_code=204, content_type=content_types.APPLICATION_JSON, body="")

    return router
