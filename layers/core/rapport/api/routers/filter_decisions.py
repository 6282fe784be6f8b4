"""Routes for the constructive filter's decisions: list them for audit, restore what was blocked or reframed."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.dependencies import UserScope
from rapport.api.pipeline_schemas import FilterDecisionOut
from rapport.api.schemas import MemoryOut
from rapport.domain.filtering import Verdict
from rapport.services.filter_decisions import FilterDecisionService


def build_filter_decisions_router(decisions: FilterDecisionService) -> Router:
    router = Router()

    @router.get(
        "/v1/users/<user_id>/filter-decisions",
        tags=["pipeline"],
        summary="Every allow, block and reframe of the constructive filter, newest first",
    )
    def list_decisions(
        user_id: str,
        scope: UserScope,
        verdict: Annotated[Verdict | None, Query(description="Only decisions with this verdict.")] = None,
        limit: Annotated[int, Query()] = 20,
        cursor: Annotated[str | None, Query()] = None,
    ) -> dict:
        page = decisions.list(scope, limit=limit, cursor=cursor, verdict=verdict)
        return {
            "decisions": [FilterDecisionOut.of(d).model_dump(mode="json") for d in page.items],
            "next_cursor": page.next_cursor,
        }

    @router.get("/v1/users/<user_id>/filter-decisions/<decision_id>", tags=["pipeline"], summary="One decision")
    def get_decision(user_id: str, scope: UserScope, decision_id: str) -> dict:
        return FilterDecisionOut.of(decisions.get(scope, decision_id)).model_dump(mode="json")

    @router.post(
        "/v1/users/<user_id>/filter-decisions/<decision_id>/restore",
        tags=["pipeline"],
        summary="Store the original of a blocked or reframed memory (idempotent)",
    )
    def restore(user_id: str, scope: UserScope, decision_id: str) -> dict:
        decision, memory = decisions.restore(scope, decision_id)
        return {
            "decision": FilterDecisionOut.of(decision).model_dump(mode="json"),
            "memory": MemoryOut.of(memory).model_dump(mode="json"),
        }

    return router
