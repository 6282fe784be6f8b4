"""One item per interaction saying how far its pipeline got, so a repeated run does nothing twice."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from rapport.clock import Clock
from rapport.domain.scope import Scope
from rapport.ports.items import ItemScope, ItemStore
from rapport.ports.pipeline import PipelineStatus, StoreOutcome

RUN_KIND = "PIPELINE"


class PipelineRunRecord(BaseModel):
    """The run's stored item: RUNNING, COMPLETED or FAILED, never STARTED (that is a trigger's answer)."""

    interaction_id: str
    status: PipelineStatus
    attempts: int = 0
    started_at: datetime
    finished_at: datetime | None = None
    outcome: StoreOutcome | None = None
    error: str | None = None


class PipelineRunRepository:
    def __init__(self, items: ItemStore, clock: Clock) -> None:
        self._items = items
        self._clock = clock

    def get(self, scope: Scope, interaction_id: str) -> PipelineRunRecord | None:
        item = self._items.get_item(ItemScope.of_user(scope), RUN_KIND, interaction_id)
        return PipelineRunRecord.model_validate(item.body) if item else None

    def started(self, scope: Scope, interaction_id: str, previous: PipelineRunRecord | None) -> PipelineRunRecord:
        """`previous`: the run's item as the caller has just read it (it decides whether to start at all)."""
        record = PipelineRunRecord(
            interaction_id=interaction_id,
            status=PipelineStatus.RUNNING,
            attempts=(previous.attempts if previous else 0) + 1,
            started_at=self._clock.now(),
        )
        return self._put(scope, record)

    def completed(self, scope: Scope, outcome: StoreOutcome, previous: PipelineRunRecord | None) -> PipelineRunRecord:
        now = self._clock.now()
        record = PipelineRunRecord(
            interaction_id=outcome.interaction_id,
            status=PipelineStatus.COMPLETED,
            attempts=previous.attempts if previous else 1,
            started_at=previous.started_at if previous else now,
            finished_at=now,
            outcome=outcome,
        )
        return self._put(scope, record)

    def failed(self, scope: Scope, interaction_id: str, error: str) -> PipelineRunRecord:
        previous = self.get(scope, interaction_id)
        now = self._clock.now()
        record = PipelineRunRecord(
            interaction_id=interaction_id,
            status=PipelineStatus.FAILED,
            attempts=previous.attempts if previous else 1,
            started_at=previous.started_at if previous else now,
            finished_at=now,
            error=error[:500],
        )
        return self._put(scope, record)

    def _put(self, scope: Scope, record: PipelineRunRecord) -> PipelineRunRecord:
        self._items.put_item(
            ItemScope.of_user(scope),
            RUN_KIND,
            record.interaction_id,
            record.model_dump(mode="json"),
            now=self._clock.now(),
        )
        return record
