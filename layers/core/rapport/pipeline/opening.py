"""Step 1, record: the interaction is already in the history (the API wrote it); check it and open the run."""

from __future__ import annotations

from rapport.domain.models import Interaction
from rapport.domain.scope import Scope
from rapport.pipeline.runs import PipelineRunRepository
from rapport.ports.pipeline import PipelineRequest, PipelineRun, PipelineStatus, RecordOutcome
from rapport.ports.store import MemoryStore


class OpenRun:
    def __init__(self, store: MemoryStore, runs: PipelineRunRepository) -> None:
        self._store = store
        self._runs = runs

    def __call__(self, request: PipelineRequest) -> RecordOutcome:
        """Idempotent: it only reads the interaction (NotFoundError, a permanent failure, if there is none) and
        notes the attempt. Writing history here as well would store it twice when the API has already done so."""
        return self.open(request)[0]

    def open(self, request: PipelineRequest) -> tuple[RecordOutcome, Interaction, PipelineRun]:
        """The step, the interaction it read and the run's item as the step left it: the in-process runner hands
        them to the later steps, which would otherwise each read them again (as the state machine's tasks must:
        their state carries no text)."""
        scope = Scope(request.tenant_id, request.user_id)
        interaction = self._store.get_interaction(scope, request.interaction_id)
        previous = self._runs.get(scope, request.interaction_id)
        done = previous is not None and previous.status is PipelineStatus.COMPLETED
        run = previous if done and previous is not None else self._runs.started(scope, request.interaction_id, previous)
        outcome = RecordOutcome(
            interaction_id=interaction.id,
            message_count=len(interaction.messages),
            session_id=interaction.session_id,
            already_done=done,
        )
        return outcome, interaction, run
