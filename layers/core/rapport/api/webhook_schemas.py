"""Wire models of `/v1/webhooks`: an endpoint (its secret only in the answer that created it) and its delivery log."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from rapport.domain.webhooks import MAX_URL_LENGTH, DeliveryAttempt, OutboundEventType, WebhookEndpoint


class CreateWebhookRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        max_length=MAX_URL_LENGTH,
        description="An https URL on the public internet (a host resolving to a private, loopback or link-local "
        "address is refused).",
    )
    event_types: list[OutboundEventType] = Field(
        max_length=len(OutboundEventType), description="The events this endpoint receives; at least one."
    )


class WebhookOut(BaseModel):
    id: str
    url: str
    event_types: list[OutboundEventType]
    created_at: datetime

    @classmethod
    def of(cls, endpoint: WebhookEndpoint) -> WebhookOut:
        return cls(id=endpoint.id, url=endpoint.url, event_types=endpoint.event_types, created_at=endpoint.created_at)


class CreatedWebhookOut(WebhookOut):
    secret: str = Field(
        description="`whsec_<base64>`: verify each delivery with it (any Standard Webhooks library). Shown only "
        "here: keep it now; a lost secret means deleting the endpoint and registering it again."
    )

    @classmethod
    def created(cls, endpoint: WebhookEndpoint) -> CreatedWebhookOut:
        return cls(**WebhookOut.of(endpoint).model_dump(), secret=endpoint.secret)


class WebhooksOut(BaseModel):
    webhooks: list[WebhookOut]


class DeliveryOut(BaseModel):
    event_id: str = Field(description="The `webhook-id` the receiver saw: the same on each attempt.")
    type: OutboundEventType
    attempt: int
    status_code: int | None = Field(description="What the endpoint answered; null when no answer came.")
    error: str | None = Field(description="Why the attempt failed (timeout, refused, a non-2xx status).")
    delivered: bool
    at: datetime

    @classmethod
    def of(cls, attempt: DeliveryAttempt) -> DeliveryOut:
        return cls(
            event_id=attempt.event_id,
            type=attempt.event_type,
            attempt=attempt.attempt,
            status_code=attempt.status_code,
            error=attempt.error,
            delivered=attempt.delivered,
            at=attempt.at,
        )


class DeliveriesOut(BaseModel):
    deliveries: list[DeliveryOut] = Field(description="Newest first.")
    next_cursor: str | None = None
