"""Routes for /v1/process, the relational state of an end user, and the events a tenant reports about it."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.contract import READ, UPSTREAM, WITH_BODY, answers
from rapport.api.dependencies import AgentId, TenantId, UserScope, with_agent
from rapport.api.idempotency import deadline, keyed, replayed
from rapport.api.relational_schemas import (
    ProcessRequest,
    ProcessResponse,
    StateEventOut,
    StateEventPageOut,
    StateEventReportedOut,
    StateEventRequest,
    StateOut,
)
from rapport.clock import Clock
from rapport.domain.scope import Scope
from rapport.services.idempotency import IDEMPOTENCY_HEADER
from rapport.services.keyed_writes import Keyed
from rapport.services.process import PreviousReply, ProcessService
from rapport.services.profiles import ProfileService
from rapport.services.relational_state import RelationalStateService, parse_event


def build_relational_router(
    *, processor: ProcessService, state: RelationalStateService, profiles: ProfileService, clock: Clock
) -> Router:
    router = Router()

    @router.post(
        "/v1/process",
        tags=["relational"],
        summary="Context (and a reply) for one user message",
        description="A system prompt with the relevant memories, the tone modifier, the relation bias and what we "
        "know of the people the message mentions, the relational state, a crisis flag, and the model's reply when "
        "an LLM is configured (`reply: null` otherwise: use your own model with the prompt, then send its reply to "
        "`POST /v1/turns/{turn_id}/reply`). Send an `Idempotency-Key` header and a retry answers the same turn, "
        "recorded once.",
        operation_id="process",
        responses=answers(
            {200: "What to answer the message with"}, errors=(*WITH_BODY, *UPSTREAM), model=ProcessResponse
        ),
    )
    def process(body: ProcessRequest, tenant_id: TenantId) -> dict:
        outcome = processor.process(
            Scope.of(tenant_id, body.user_id, body.agent_id),
            body.message,
            channel=body.channel,
            session_id=body.session_id,
            previous=PreviousReply(**body.previous_turn.model_dump()) if body.previous_turn else None,
            keyed=keyed(router, "process", body),
            deadline=deadline(router),
        )
        replayed(router, Keyed(outcome, outcome.replayed))
        return ProcessResponse.of(outcome).model_dump(mode="json")

    @router.get(
        "/v1/users/<user_id>/state",
        tags=["relational"],
        summary="Trust, sentiment, grudge, familiarity",
        description="Decay applied as of now; with the relation bias, the tone modifier and the profile.",
        operation_id="state_get",
        responses=answers({200: "The relational state"}, errors=READ, model=StateOut),
    )
    def get_state(user_id: str, scope: UserScope, agent_id: AgentId = None) -> dict:
        now = clock.now()
        return StateOut.of(
            scope.user_id,
            state.read(scope, now),
            state.stored(scope),
            profiles.get(scope),
        ).model_dump(mode="json")

    @router.post(
        "/v1/users/<user_id>/events",
        tags=["relational"],
        summary="Report a broken or kept promise…",
        description="`type` is broken_promise, promise_kept or crisis_resolved (another answers 400 listing them). "
        "Send an `Idempotency-Key` header and a retry counts once.",
        operation_id="events_report",
        responses=answers(
            {201: "The event, counted", 200: "A retry with the same Idempotency-Key: counted once, `replayed`"},
            errors=WITH_BODY,
            model=StateEventReportedOut,
        ),
    )
    def report_event(
        user_id: str, scope: UserScope, body: StateEventRequest, agent_id: AgentId = None
    ):  # a Response: powertools cannot build a schema for its annotation
        scope = with_agent(scope, body.agent_id)
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

    @router.get(
        "/v1/users/<user_id>/events",
        tags=["relational"],
        summary="Reported events, newest first",
        operation_id="events_list",
        responses=answers(
            {200: "A page of events, each with the state before and after"}, errors=READ, model=StateEventPageOut
        ),
    )
    def list_events(
        user_id: str,
        scope: UserScope,
        agent_id: AgentId = None,
        limit: Annotated[int, Query()] = 20,
        cursor: Annotated[str | None, Query()] = None,
    ) -> dict:
        page = state.events(scope, limit=limit, cursor=cursor)
        return {
            "events": [StateEventOut.of(e).model_dump(mode="json") for e in page.items],
            "next_cursor": page.next_cursor,
        }

    return router
