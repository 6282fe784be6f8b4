"""Routes for the conversation history of one end user."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.contract import READ, UPSTREAM, WITH_BODY, answers
from rapport.api.dependencies import AgentId, UserScope, with_agent
from rapport.api.idempotency import deadline, keyed, replayed
from rapport.api.pipeline_schemas import InteractionStatusOut, RecordedInteractionOut
from rapport.api.schemas import CreateInteractionRequest, InteractionOut, InteractionPageOut
from rapport.services.interactions import InteractionService, NewInteraction
from rapport.services.keyed_writes import KeyedWrites


def build_interactions_router(interactions: InteractionService, writes: KeyedWrites) -> Router:
    router = Router()

    @router.post(
        "/v1/users/<user_id>/interactions",
        tags=["history"],
        summary="Record a conversation",
        description="Kept as history, one searchable episode per message, then run through the ingestion pipeline "
        "(`pipeline` in the answer; `?wait=false` returns before it has run). Send an `Idempotency-Key` header and "
        "a retry is answered from the first attempt, stored once.",
        operation_id="interactions_record",
        status_code=201,
        responses=answers(
            {201: "The interaction, its episodes and the pipeline's run"},
            errors=(*WITH_BODY, *UPSTREAM),
            model=RecordedInteractionOut,
        ),
    )
    def create_interaction(
        user_id: str,
        scope: UserScope,
        body: CreateInteractionRequest,
        wait: Annotated[
            bool, Query(description="Wait for the memories the pipeline extracts (local); false returns at once.")
        ] = True,
        agent_id: AgentId = None,
    ):  # a Response: powertools cannot build a schema for its annotation
        scope = with_agent(scope, body.agent_id)
        new = NewInteraction(
            messages=[m.to_domain() for m in body.messages],
            channel=body.channel,
            session_id=body.session_id,
            occurred_at=body.occurred_at,
            metadata=body.metadata,
        )
        answer = writes.record(scope, new, keyed(router, "interactions", body), wait=wait, deadline=deadline(router))
        recorded = replayed(router, answer)
        return Response(
            status_code=201,
            content_type=content_types.APPLICATION_JSON,
            body=RecordedInteractionOut.of(recorded).model_dump(mode="json"),
        )

    @router.get(
        "/v1/users/<user_id>/history",
        tags=["history"],
        summary="Interactions, newest first",
        operation_id="interactions_list",
        responses=answers({200: "A page of interactions"}, errors=READ, model=InteractionPageOut),
    )
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

    @router.get(
        "/v1/users/<user_id>/interactions/<interaction_id>",
        tags=["history"],
        summary="One interaction, and how far its pipeline got: pending, done or failed",
        operation_id="interactions_get",
        responses=answers(
            {200: "The interaction and its pipeline's progress"}, errors=READ, model=InteractionStatusOut
        ),
    )
    def get_interaction(user_id: str, interaction_id: str, scope: UserScope) -> dict:
        return InteractionStatusOut.of(interactions.progress(scope, interaction_id)).model_dump(mode="json")

    return router
