"""Routes for governance a client drives: marking memories used (reinforcement) and undoing a consolidation."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from rapport.api.contract import WITH_BODY, WRITE, answers
from rapport.api.dependencies import AgentId, UserScope
from rapport.api.governance_schemas import MarkUsedOut, MarkUsedRequest, UndoConsolidationOut
from rapport.api.schemas import MemoryOut
from rapport.jobs.governance import GovernanceJobs
from rapport.services.memories import MemoryService
from rapport.settings import Settings


def build_governance_router(*, memories: MemoryService, governance: GovernanceJobs, settings: Settings) -> Router:
    router = Router()

    @router.post(
        "/v1/users/<user_id>/memories/used",
        tags=["governance"],
        summary="Mark memories as used in a reply: each gains strength (bounded at 1.0) and its decay restarts",
        operation_id="memories_mark_used",
        responses=answers({200: "The memories reinforced, and the ids not found"}, errors=WITH_BODY),
    )
    def mark_used(user_id: str, scope: UserScope, body: MarkUsedRequest, agent_id: AgentId = None) -> MarkUsedOut:
        wanted = list(dict.fromkeys(body.memory_ids))
        reinforced = memories.reinforce(scope, wanted, settings.relational.reinforcement_boost)
        found = {m.id for m in reinforced}
        return MarkUsedOut(
            memories=[MemoryOut.of(m) for m in reinforced], not_found=[i for i in wanted if i not in found]
        )

    @router.post(
        "/v1/users/<user_id>/consolidations/<consolidation_id>/undo",
        tags=["governance"],
        summary="Undo a consolidation: the originals become active again and the merged memory is archived",
        operation_id="consolidations_undo",
        responses=answers({200: "The consolidation, undone"}, errors=WRITE),
    )
    def undo_consolidation(user_id: str, scope: UserScope, consolidation_id: str) -> UndoConsolidationOut:
        derivation, restored = governance.undo_consolidation(scope, consolidation_id)
        return UndoConsolidationOut(
            consolidation_id=derivation.id,
            state=derivation.state.value,
            restored=restored,
            originals=derivation.member_ids,
        )

    return router
