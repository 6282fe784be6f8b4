"""Routes for one conversational turn: the caller's own model's reply to what /v1/process kept."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.contract import UPSTREAM, WITH_BODY, answers
from rapport.api.dependencies import TenantId
from rapport.api.pipeline_schemas import RecordedInteractionOut, TurnRepliedOut
from rapport.api.relational_schemas import TurnReplyRequest
from rapport.domain.scope import Scope
from rapport.services.turns import TurnService


def build_turns_router(turns: TurnService) -> Router:
    router = Router()

    @router.post(
        "/v1/turns/<turn_id>/reply",
        tags=["relational"],
        summary="Attach your model's reply to a turn",
        operation_id="turns_reply",
        responses=answers(
            {201: "The turn, recorded as an interaction", 200: "The turn already had this reply: nothing new"},
            errors=(*WITH_BODY, *UPSTREAM),
            model=TurnRepliedOut,
        ),
    )
    def reply_to_turn(
        turn_id: str,
        body: TurnReplyRequest,
        tenant_id: TenantId,
        wait: Annotated[
            bool, Query(description="Wait for the memories the pipeline extracts (local); false returns at once.")
        ] = True,
    ):  # a Response: powertools cannot build a schema for its annotation
        answered = turns.reply(Scope.of(tenant_id, body.user_id), turn_id, body.reply, wait=wait)
        return Response(
            status_code=200 if answered.replayed else 201,
            content_type=content_types.APPLICATION_JSON,
            body={
                "turn_id": answered.turn.id,
                "status": answered.turn.status.value,
                "replayed": answered.replayed,
                **RecordedInteractionOut.of(answered.recorded).model_dump(mode="json"),
            },
        )

    return router
