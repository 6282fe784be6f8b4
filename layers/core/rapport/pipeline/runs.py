"""One item per interaction saying how far its pipeline got, so a repeated run does nothing twice."""

from __future__ import annotations

from rapport.clock import Clock
from rapport.domain.scope import Scope
from rapport.errors import ConflictError
from rapport.ports.items import ItemPut, ItemScope, ItemStore
from rapport.ports.pipeline import PipelineRun, PipelineStatus, StoreOutcome

RUN_KIND = "PIPELINE"


class PipelineRunRepository:
    def __init__(self, items: ItemStore, clock: Clock) -> None:
        self._items = items
        self._clock = clock

    def get(self, scope: Scope, interaction_id: str) -> PipelineRun | None:
        item = self._items.get_item(ItemScope.of_user(scope), RUN_KIND, interaction_id)
        return PipelineRun.model_validate(item.body) if item else None

    def started(self, scope: Scope, interaction_id: str, previous: PipelineRun | None) -> PipelineRun:
        """`previous`: the run's item as the caller has just read it (it decides whether to start at all)."""
        record = PipelineRun(
            interaction_id=interaction_id,
            status=PipelineStatus.RUNNING,
            attempts=(previous.attempts if previous else 0) + 1,
            started_at=self._clock.now(),
        )
        return self._put(scope, record)

    def first_started(self, scope: Scope, interaction_id: str) -> PipelineRun | None:
        """The first attempt's item, written only while there is none: None when a run of the interaction already
        has one (the caller reads it, as for any other start)."""
        record = PipelineRun(
            interaction_id=interaction_id, status=PipelineStatus.RUNNING, attempts=1, started_at=self._clock.now()
        )
        try:
            self._put(scope, record, expected_version=0)
        except ConflictError:
            return None
        return record

    def completed(self, scope: Scope, outcome: StoreOutcome, previous: PipelineRun | None) -> PipelineRun:
        return self._put(scope, self.completed_record(outcome, previous))

    def completed_record(self, outcome: StoreOutcome, previous: PipelineRun | None) -> PipelineRun:
        """The completed run, not written: `write` turns it into an item write the store step makes with its own."""
        now = self._clock.now()
        return PipelineRun(
            interaction_id=outcome.interaction_id,
            status=PipelineStatus.COMPLETED,
            attempts=previous.attempts if previous else 1,
            started_at=(previous.started_at if previous else None) or now,
            finished_at=now,
            outcome=outcome,
        )

    def failed(self, scope: Scope, interaction_id: str, error: str) -> PipelineRun:
        previous = self.get(scope, interaction_id)
        now = self._clock.now()
        record = PipelineRun(
            interaction_id=interaction_id,
            status=PipelineStatus.FAILED,
            attempts=previous.attempts if previous else 1,
            started_at=(previous.started_at if previous else None) or now,
            finished_at=now,
            error=error[:500],
        )
        return self._put(scope, record)

    @staticmethod
    def write(record: PipelineRun) -> ItemPut:
        return ItemPut(
            kind=RUN_KIND,
            key=record.interaction_id,
            body=record.model_dump(mode="json", include=set(PipelineRun.STORED_FIELDS)),
        )

    def _put(self, scope: Scope, record: PipelineRun, *, expected_version: int | None = None) -> PipelineRun:
        self._items.put_item(
            ItemScope.of_user(scope),
            RUN_KIND,
            record.interaction_id,
            record.model_dump(mode="json", include=set(PipelineRun.STORED_FIELDS)),
            now=self._clock.now(),
            expected_version=expected_version,
        )
        return record
