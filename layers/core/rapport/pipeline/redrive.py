"""Starting the pipeline so that no start is lost, and replaying what failed (`rapport dlq replay`).

`PipelineStarter` is what the table's stream (AWS) hands each new interaction to: a start that fails, after the
trigger's own retries, becomes a dead letter, so it is replayed rather than lost. `Redrive` takes letters off the
dead-letter queue, starts each run again and deletes the letter once the start (or, in process, the run) succeeded.
Both are safe to repeat: every step is idempotent on the interaction id and a completed run is not redone.
"""

from __future__ import annotations

import logging

from pydantic import BaseModel, Field

from rapport.domain.models import Interaction
from rapport.errors import RapportError
from rapport.ports.dead_letters import DeadLetter, DeadLetters, Failure
from rapport.ports.pipeline import PipelineRequest, PipelineRun, PipelineStatus, PipelineTrigger

logger = logging.getLogger(__name__)


def letter_of(request: PipelineRequest, exc: BaseException | str, execution_id: str | None = None) -> DeadLetter:
    if isinstance(exc, str):
        error, cause = exc.partition(": ")[::2]
        return DeadLetter(request=request, failure=Failure(error=error, cause=cause), execution_id=execution_id)
    return DeadLetter(
        request=request, failure=Failure(error=type(exc).__name__, cause=str(exc)), execution_id=execution_id
    )


class StartedByTheTable:
    """The writer's trigger when the table's stream starts the pipeline (AWS): the interaction's write is the outbox,
    so there is nothing to start here and nothing a failure here could lose."""

    def start(self, request: PipelineRequest, *, wait: bool, recorded: Interaction | None = None) -> PipelineRun:
        return PipelineRun(interaction_id=request.interaction_id, status=PipelineStatus.STARTED)


class PipelineStarter:
    def __init__(self, trigger: PipelineTrigger, dead_letters: DeadLetters) -> None:
        self._trigger = trigger
        self._dead_letters = dead_letters

    def start(self, request: PipelineRequest) -> PipelineRun:
        """Start the run; a start that fails is parked as a dead letter (and reported FAILED). Only a dead-letter
        queue that cannot be written raises, so the stream keeps the record and tries again."""
        try:
            return self._trigger.start(request, wait=False)
        except Exception as exc:
            logger.warning("pipeline start failed for interaction %s; parked", request.interaction_id, exc_info=True)
            self._dead_letters.send(letter_of(request, exc))
            return PipelineRun(interaction_id=request.interaction_id, status=PipelineStatus.FAILED, error=str(exc))


class ReplayReport(BaseModel):
    replayed: list[str] = Field(default_factory=list)  # interaction ids whose run started (or completed) again
    failed: dict[str, str] = Field(default_factory=dict)  # interaction id -> why; its letter stays


class Redrive:
    def __init__(self, dead_letters: DeadLetters, trigger: PipelineTrigger) -> None:
        self._dead_letters = dead_letters
        self._trigger = trigger

    def replay(self, limit: int = 100) -> ReplayReport:
        report = ReplayReport()
        for received in self._dead_letters.receive(limit):
            request = received.letter.request
            try:
                # In process the run happens here (wait): a letter is deleted only once its run completed. Step
                # Functions starts it; a run that fails again parks a new letter from the state machine's catch.
                run = self._trigger.start(request, wait=True)
            except RapportError as exc:
                report.failed[request.interaction_id] = f"{type(exc).__name__}: {exc}"
                continue
            if run.status is PipelineStatus.FAILED:
                report.failed[request.interaction_id] = run.error or "failed"
                continue
            self._dead_letters.delete(received.receipt)
            report.replayed.append(request.interaction_id)
        return report
