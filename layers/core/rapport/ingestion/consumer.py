"""The bus's consumer when no pipeline state machine is deployed (and always locally): records each interaction once."""

from __future__ import annotations

from typing import Any

from rapport.domain.scope import Scope
from rapport.ingestion.events import InteractionReceived
from rapport.ingestion.idempotency import IdempotencyClaims
from rapport.services.interactions import InteractionService, RecordedInteraction


class InteractionConsumer:
    """`InteractionService.record` is the ingestion path: it stores history and episodes and calls its listeners,
    which is where the extraction pipeline hooks in."""

    def __init__(self, interactions: InteractionService, claims: IdempotencyClaims) -> None:
        self._interactions = interactions
        self._claims = claims

    def handle(self, event: InteractionReceived) -> RecordedInteraction | None:
        """Record the interaction; None when this event id was recorded before (an at-least-once redelivery)."""
        if not self._claims.claim(event.tenant_id, event.event_id):
            return None
        try:
            return self._interactions.record(Scope(event.tenant_id, event.user_id), event.to_new_interaction())
        except Exception:
            self._claims.release(event.tenant_id, event.event_id)
            raise

    def handle_detail(self, detail: dict[str, Any]) -> RecordedInteraction | None:
        """The in-process bus hands over the raw detail, as EventBridge would: validate it here, like the Lambda."""
        return self.handle(InteractionReceived.model_validate(detail))
