"""Step 1, record: the interaction is already in the history (the API wrote it); check it and open the run."""

from __future__ import annotations

from dataclasses import dataclass

from rapport.domain.models import Interaction
from rapport.pipeline.runs import PipelineRunRepository
from rapport.ports.pipeline import PipelineRequest, PipelineRun, PipelineStatus, RecordOutcome
from rapport.ports.store import MemoryStore


@dataclass(frozen=True)
class Opened:
    """What the open step leaves for the later steps in process: its outcome, the interaction it read (or was
    handed), the run's item as it stands, and whether this is the run's first attempt (so nothing of an earlier one
    can be stored)."""

    outcome: RecordOutcome
    interaction: Interaction
    run: PipelineRun
    first_attempt: bool


class OpenRun:
    def __init__(self, store: MemoryStore, runs: PipelineRunRepository) -> None:
        self._store = store
        self._runs = runs

    def __call__(self, request: PipelineRequest) -> RecordOutcome:
        """Idempotent: it only reads the interaction (NotFoundError, a permanent failure, if there is none) and
        notes the attempt. Writing history here as well would store it twice when the API has already done so."""
        return self.open(request).outcome

    def open(self, request: PipelineRequest, recorded: Interaction | None = None) -> Opened:
        """The step, for the in-process runner, which hands what it read to the later steps (the state machine's
        tasks read it for themselves: their state carries no text). `recorded`: the interaction as the request
        that stored it has it; its run is opened without reading either back, unless a run of it exists already."""
        scope = request.scope
        if recorded is not None:
            first = self._runs.first_started(scope, request.interaction_id)
            if first is not None:
                return Opened(_outcome(recorded, done=False), recorded, first, first_attempt=True)
        interaction = self._store.get_interaction(scope, request.interaction_id)
        previous = self._runs.get(scope, request.interaction_id)
        done = previous is not None and previous.status is PipelineStatus.COMPLETED
        run = previous if done and previous is not None else self._runs.started(scope, request.interaction_id, previous)
        return Opened(_outcome(interaction, done=done), interaction, run, first_attempt=previous is None)


def _outcome(interaction: Interaction, *, done: bool) -> RecordOutcome:
    return RecordOutcome(
        interaction_id=interaction.id,
        message_count=len(interaction.messages),
        session_id=interaction.session_id,
        already_done=done,
    )
