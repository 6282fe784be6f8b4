"""The `Interaction Received` event: what the ingest routes and a tenant's own systems put on the event bus."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from rapport.domain.models import Message, MessageRole
from rapport.ports.event_bus import BusEvent

if TYPE_CHECKING:
    # The write path's model, needed once an event is recorded; the ingest function imports this module at init.
    from rapport.services.interactions import NewInteraction

# Every ingestion source is `rapport.ingest.<system>`: the bus rule matches the prefix, so a tenant's own producer
# picks its own suffix (`rapport.ingest.crm`) without a stack change. `aws.` sources are EventBridge's own.
SOURCE_PREFIX = "rapport.ingest"
SLACK_SOURCE = f"{SOURCE_PREFIX}.slack"
WEBHOOK_SOURCE = f"{SOURCE_PREFIX}.webhook"
INTERACTION_RECEIVED = "Interaction Received"

# The same alphabet as end-user ids in the API (rapport.domain.scope), as a pattern pydantic can report on.
USER_ID_PATTERN = r"^[A-Za-z0-9._@:+\-]{1,128}$"
TENANT_ID_PATTERN = r"^[A-Za-z0-9_+=.@\-]{1,64}$"


class ReceivedMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    role: MessageRole
    content: str = Field(min_length=1)
    name: str | None = Field(None, max_length=128)


class InteractionReceived(BaseModel):
    """The `detail` of an `Interaction Received` event (schema version 1). Unknown fields are refused, so a typo in
    a producer shows up in the dead-letter queue instead of being dropped quietly."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = Field(1, ge=1, le=1)
    event_id: str = Field(
        min_length=1,
        max_length=256,
        description="Idempotency key, unique per tenant: the same id twice is ingested once",
    )
    tenant_id: str = Field(pattern=TENANT_ID_PATTERN)
    user_id: str = Field(pattern=USER_ID_PATTERN, description="The end user, as the tenant names them")
    messages: list[ReceivedMessage] = Field(min_length=1)
    channel: str | None = Field(None, max_length=64)
    session_id: str | None = Field(None, max_length=128)
    occurred_at: datetime | None = None
    metadata: dict[str, Any] | None = None

    def to_bus_event(self, source: str) -> BusEvent:
        return BusEvent(source=source, detail_type=INTERACTION_RECEIVED, detail=self.model_dump(mode="json"))

    def to_new_interaction(self) -> NewInteraction:
        from rapport.services.interactions import NewInteraction

        return NewInteraction(
            messages=[Message(role=m.role, content=m.content, name=m.name) for m in self.messages],
            channel=self.channel,
            session_id=self.session_id,
            occurred_at=self.occurred_at,
            metadata={**(self.metadata or {}), "ingest_event_id": self.event_id},
        )
