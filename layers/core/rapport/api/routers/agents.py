"""Routes for the tenant's assistants: the listing, each with what it holds of its relationships."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from rapport.api.contract import READ, answers
from rapport.api.dependencies import TenantId
from rapport.api.users_schemas import AgentOut, AgentsOut
from rapport.services.assistants import AssistantDirectory


def build_agents_router(assistants: AssistantDirectory) -> Router:
    router = Router()

    @router.get(
        "/v1/agents",
        tags=["users"],
        summary="The tenant's assistants, each with how many people it has a relationship with",
        description="The default assistant (what a call without `agent_id` talks to) first, then every assistant "
        "named in a write, in id order. `people` and `relational_memories` count what the search index holds of "
        "each one's relational memories (one aggregation; a memory written a moment ago may not be counted yet). "
        "User memories, people and the history are every assistant's, so they are not counted per assistant.",
        operation_id="agents_list",
        responses=answers({200: "The tenant's assistants"}, errors=READ),
    )
    def list_agents(tenant_id: TenantId) -> AgentsOut:
        return AgentsOut(agents=[AgentOut.of(a) for a in assistants.list(tenant_id)])

    return router
