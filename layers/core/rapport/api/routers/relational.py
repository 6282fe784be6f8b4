"""Routes for /v1/process, the relational state of an end user, and the events a tenant reports about it."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.dependencies import TenantId, UserScope
from rapport.api.relational_schemas import (
    ProcessRequest,
    ProcessResponse,
    StateEventOut,
    StateEventRequest,
    StateOut,
)
from rapport.clock import Clock
from rapport.domain.scope import Scope
from rapport.services.process import ProcessService
from rapport.services.profiles import ProfileService
from rapport.services.relational_state import RelationalStateService, parse_event

IDEMPOTENCY_HEADER = "Idempotency-Key"


def build_relational_router(
    *, processor: ProcessService, state: RelationalStateService, profiles: ProfileService, clock: Clock
) -> Router:
    router = Router()

    @router.post("/v1/process", tags=["relational"], summary="Context (and a reply) for one user message")
    def process(body: ProcessRequest, tenant_id: TenantId) -> dict:
        outcome = processor.process(
            Scope.of(tenant_id, body.user_id),
            body.message,
            channel=body.channel,
            session_id=body.session_id,
        )
        return ProcessResponse.of(outcome).model_dump(mode="json")

    @router.get("/v1/users/<user_id>/state", tags=["relational"], summary="Trust, sentiment, grudge, familiarity")
    def get_state(user_id: str, scope: UserScope) -> dict:
        now = clock.now()
        return StateOut.of(
            scope.user_id,
            state.read(scope, now),
            state.stored(scope),
            profiles.get(scope),
        ).model_dump(mode="json")

    @router.post("/v1/users/<user_id>/events", tags=["relational"], summary="Report a broken or kept promise…")
    def report_event(
        user_id: str, scope: UserScope, body: StateEventRequest
    ):  # a Response: powertools cannot build a schema for its annotation
        # A client retrying after a timeout sends the same Idempotency-Key: the event then counts once (200, replayed)
        key = router.current_event.get_header_value(IDEMPOTENCY_HEADER, case_sensitive=False)
        record, reading, replayed = state.report_event(scope, parse_event(body.type), body.note, idempotency_key=key)
        return Response(
            status_code=200 if replayed else 201,
            content_type=content_types.APPLICATION_JSON,
            body={
                "event": StateEventOut.of(record).model_dump(mode="json"),
                "replayed": replayed,
                "state": StateOut.of(scope.user_id, reading, state.stored(scope), profiles.get(scope)).model_dump(
                    mode="json"
                ),
            },
        )

    @router.get("/v1/users/<user_id>/events", tags=["relational"], summary="Reported events, newest first")
    def list_events(
        user_id: str,
        scope: UserScope,
        limit: Annotated[int, Query()] = 20,
        cursor: Annotated[str | None, Query()] = None,
    ) -> dict:
        page = state.events(scope, limit=limit, cursor=cursor)
        return {
            "events": [StateEventOut.of(e).model_dump(mode="json") for e in page.items],
            "next_cursor": page.next_cursor,
        }

    return router
