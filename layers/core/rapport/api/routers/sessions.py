"""Routes for working memory: a session's context (last turns and running summary) while it is active."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from rapport.api.governance_schemas import SessionContextOut
from rapport.api.identity import CallerOf
from rapport.composition.services import Services
from rapport.domain.identifiers import check_user_id


def build_sessions_router(services: Services, caller_of: CallerOf) -> Router:
    router = Router()
    sessions = services.sessions

    def tenant() -> str:
        return caller_of(router.current_event).tenant_id

    @router.get(
        "/v1/users/<user_id>/sessions/<session_id>/context",
        tags=["working memory"],
        summary="A session's working memory: the latest turns and a running summary, within the token budget",
    )
    def session_context(user_id: str, session_id: str) -> dict:
        view = sessions.context(tenant(), check_user_id(user_id), session_id)
        return SessionContextOut.of(view).model_dump(mode="json")

    return router
