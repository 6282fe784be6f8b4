"""Routes for the conversation history of one end user."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.dependencies import UserScope
from rapport.api.pipeline_schemas import PipelineRunOut
from rapport.api.schemas import CreateInteractionRequest, InteractionOut, MemoryOut
from rapport.services.interactions import InteractionService, NewInteraction


def build_interactions_router(interactions: InteractionService) -> Router:
    router = Router()

    @router.post("/v1/users/<user_id>/interactions", tags=["history"], summary="Record a conversation")
    def create_interaction(
        user_id: str,
        scope: UserScope,
        body: CreateInteractionRequest,
        wait: Annotated[
            bool, Query(description="Wait for the memories the pipeline extracts (local); false returns at once.")
        ] = True,
    ):  # a Response: powertools cannot build a schema for its annotation
        recorded = interactions.record(
            scope,
            NewInteraction(
                messages=[m.to_domain() for m in body.messages],
                channel=body.channel,
                session_id=body.session_id,
                occurred_at=body.occurred_at,
                metadata=body.metadata,
            ),
            wait=wait,
        )
        return Response(
            status_code=201,
            content_type=content_types.APPLICATION_JSON,
            body={
                "interaction": InteractionOut.of(recorded.interaction).model_dump(mode="json"),
                "memories": [MemoryOut.of(m).model_dump(mode="json") for m in recorded.episodes],
                "pipeline": PipelineRunOut.of(recorded.pipeline).model_dump(mode="json") if recorded.pipeline else None,
            },
        )

    @router.get("/v1/users/<user_id>/history", tags=["history"], summary="Interactions, newest first")
    def history(
        user_id: str,
        scope: UserScope,
        limit: Annotated[int, Query()] = 20,
        cursor: Annotated[str | None, Query()] = None,
    ) -> dict:
        page = interactions.history(scope, limit=limit, cursor=cursor)
        return {
            "interactions": [InteractionOut.of(i).model_dump(mode="json") for i in page.items],
            "next_cursor": page.next_cursor,
        }

    return router
