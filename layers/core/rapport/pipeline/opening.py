"""Step 1, record: the interaction is already in the history (the API wrote it); check it and open the run."""

from __future__ import annotations

from rapport.domain.scope import Scope
from rapport.pipeline.runs import PipelineRunRepository
from rapport.ports.pipeline import PipelineRequest, PipelineStatus, RecordOutcome
from rapport.ports.store import MemoryStore


class OpenRun:
    def __init__(self, store: MemoryStore, runs: PipelineRunRepository) -> None:
        self._store = store
        self._runs = runs

    def __call__(self, request: PipelineRequest) -> RecordOutcome:
        """Idempotent: it only reads the interaction (NotFoundError, a permanent failure, if there is none) and
        notes the attempt. Writing history here as well would store it twice when the API has already done so."""
        interaction = self._store.get_interaction(Scope(request.tenant_id, request.user_id), request.interaction_id)
        previous = self._runs.get(Scope(request.tenant_id, request.user_id), request.interaction_id)
        done = previous is not None and previous.status is PipelineStatus.COMPLETED
        if not done:
            self._runs.started(Scope(request.tenant_id, request.user_id), request.interaction_id)
        return RecordOutcome(
            interaction_id=interaction.id,
            message_count=len(interaction.messages),
            session_id=interaction.session_id,
            already_done=done,
        )
