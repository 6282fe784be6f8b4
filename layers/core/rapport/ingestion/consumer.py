"""The bus's consumer (in AWS and locally): records each interaction once, under the event's id as its key."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from rapport.domain.scope import Scope
from rapport.ingestion.events import InteractionReceived
from rapport.services.idempotency import KeyedRequest, RemainingTime
from rapport.services.interactions import RecordedInteraction
from rapport.services.keyed_writes import KeyedWrites

INGEST_ROUTE = "ingest"


class InteractionConsumer:
    """`InteractionService.record` is the ingestion path, keyed by the platform's event id (services/idempotency.py):
    the interaction's id derives from it, so an at-least-once redelivery, or a retry after an attempt that timed out
    half way, records that one interaction. An attempt that died blocks its event only until its deadline (the
    function's remaining time), never for good."""

    def __init__(self, writes: KeyedWrites, *, remembered_for: timedelta) -> None:
        self._writes = writes
        self._remembered_for = remembered_for

    def handle(
        self, event: InteractionReceived, *, deadline: RemainingTime | None = None
    ) -> RecordedInteraction | None:
        """Record the interaction; None when this event id was recorded before (an at-least-once redelivery)."""
        keyed = KeyedRequest(route=INGEST_ROUTE, key=event.event_id, request=event.model_dump(mode="json"))
        answer = self._writes.record(
            Scope(event.tenant_id, event.user_id),
            event.to_new_interaction(),
            keyed,
            wait=True,
            deadline=deadline,
            expires_after=self._remembered_for,
        )
        return None if answer.replayed else answer.value

    def handle_detail(self, detail: dict[str, Any]) -> RecordedInteraction | None:
        """The in-process bus hands over the raw detail, as EventBridge would: validate it here, like the Lambda."""
        return self.handle(InteractionReceived.model_validate(detail))
