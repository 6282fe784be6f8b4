"""Step 1, record: the interaction is already in the history (the API wrote it); check it and open the run."""

from __future__ import annotations

from rapport.pipeline.context import PipelineContext
from rapport.pipeline.models import PipelineRequest, RecordOutcome
from rapport.pipeline.runs import RunStatus


def record(ctx: PipelineContext, request: PipelineRequest) -> RecordOutcome:
    """Idempotent: it only reads the interaction (NotFoundError, a permanent failure, if there is none) and notes
    the attempt. Writing history here as well would store it twice when the API has already done so."""
    interaction = ctx.store.get_interaction(request.tenant_id, request.user_id, request.interaction_id)
    previous = ctx.runs.get(request.tenant_id, request.user_id, request.interaction_id)
    done = previous is not None and previous.status is RunStatus.COMPLETED
    if not done:
        ctx.runs.started(request.tenant_id, request.user_id, request.interaction_id)
    return RecordOutcome(
        interaction_id=interaction.id,
        message_count=len(interaction.messages),
        session_id=interaction.session_id,
        already_done=done,
    )
