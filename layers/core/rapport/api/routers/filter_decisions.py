"""Routes for the constructive filter's decisions: list them for audit, restore what was blocked or reframed."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.contract import READ, WRITE, answers
from rapport.api.dependencies import AgentId, UserScope
from rapport.api.pipeline_schemas import FilterDecisionOut, FilterDecisionPageOut, RestoredOut
from rapport.api.schemas import MemoryOut
from rapport.domain.filtering import Verdict
from rapport.services.filter_decisions import FilterDecisionService


def build_filter_decisions_router(decisions: FilterDecisionService) -> Router:
    router = Router()

    @router.get(
        "/v1/users/<user_id>/filter-decisions",
        tags=["pipeline"],
        summary="Every allow, block, reframe and quarantine of the constructive filter, newest first",
        operation_id="filter_decisions_list",
        responses=answers({200: "A page of decisions, each with its reason"}, errors=READ),
    )
    def list_decisions(
        user_id: str,
        scope: UserScope,
        agent_id: AgentId = None,
        verdict: Annotated[Verdict | None, Query(description="Only decisions with this verdict.")] = None,
        limit: Annotated[int, Query()] = 20,
        cursor: Annotated[str | None, Query()] = None,
    ) -> FilterDecisionPageOut:
        page = decisions.list(scope, limit=limit, cursor=cursor, verdict=verdict)
        return FilterDecisionPageOut(
            decisions=[FilterDecisionOut.of(d) for d in page.items], next_cursor=page.next_cursor
        )

    @router.get(
        "/v1/users/<user_id>/filter-decisions/<decision_id>",
        tags=["pipeline"],
        summary="One decision",
        operation_id="filter_decisions_get",
        responses=answers({200: "The decision"}, errors=READ),
    )
    def get_decision(user_id: str, scope: UserScope, decision_id: str, agent_id: AgentId = None) -> FilterDecisionOut:
        return FilterDecisionOut.of(decisions.get(scope, decision_id))

    @router.post(
        "/v1/users/<user_id>/filter-decisions/<decision_id>/restore",
        tags=["pipeline"],
        summary="Store the original of a blocked or reframed memory, or lift a quarantine (idempotent)",
        operation_id="filter_decisions_restore",
        responses=answers({200: "The decision, now restored, and the memory stored or un-quarantined"}, errors=WRITE),
    )
    def restore(user_id: str, scope: UserScope, decision_id: str, agent_id: AgentId = None) -> RestoredOut:
        decision, memory = decisions.restore(scope, decision_id)
        return RestoredOut(decision=FilterDecisionOut.of(decision), memory=MemoryOut.of(memory))

    return router
