"""Routes for working memory: a session's context (last turns and running summary) while it is active."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from rapport.api.contract import READ, answers
from rapport.api.dependencies import AgentId, UserScope
from rapport.api.governance_schemas import SessionContextOut
from rapport.services.sessions import SessionService


def build_sessions_router(sessions: SessionService) -> Router:
    router = Router()

    @router.get(
        "/v1/users/<user_id>/sessions/<session_id>/context",
        tags=["working memory"],
        summary="A session's working memory: the latest turns and a running summary, within the token budget",
        operation_id="sessions_context_get",
        responses=answers({200: "The session's context"}, errors=READ),
    )
    def session_context(user_id: str, scope: UserScope, session_id: str, agent_id: AgentId = None) -> SessionContextOut:
        return SessionContextOut.of(sessions.context(scope, session_id))

    return router
