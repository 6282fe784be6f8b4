"""The generic signed webhook: its body, for any chat platform a tenant bridges to Rapport."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rapport import strict_json
from rapport.domain.timestamps import Moment
from rapport.errors import InvalidInputError
from rapport.ingestion.events import USER_ID_PATTERN, InteractionReceived, ReceivedMessage

DEFAULT_CHANNEL = "webhook"


class WebhookPayload(BaseModel):
    """`POST /v1/ingest/webhook` body. Under Standard Webhooks the signed `webhook-id` names the event; under the
    deprecated v1 scheme the idempotency key does, inside the signed body. Either way it cannot be swapped."""

    model_config = ConfigDict(extra="forbid")

    idempotency_key: str | None = Field(None, min_length=1, max_length=200)
    user_id: str = Field(pattern=USER_ID_PATTERN)
    messages: list[ReceivedMessage] = Field(min_length=1)
    channel: str = Field(DEFAULT_CHANNEL, min_length=1, max_length=64)
    session_id: str | None = Field(None, max_length=128)
    occurred_at: Moment | None = None
    metadata: dict[str, Any] | None = None


class SignedKeyWebhookPayload(WebhookPayload):
    """The body of a request signed with the deprecated v1 scheme, whose signature covers no event id but the body."""

    idempotency_key: str = Field(min_length=1, max_length=200)


def interaction_from_webhook(tenant_id: str, body: bytes, *, message_id: str | None = None) -> InteractionReceived:
    """`message_id` is the verified `webhook-id` (Standard Webhooks): it is the event id, and a body's
    `idempotency_key` is then not used. Without it (the v1 scheme) the body must carry the key."""
    model = WebhookPayload if message_id else SignedKeyWebhookPayload
    try:
        payload = model.model_validate(strict_json.loads(body))
    except ValueError as exc:  # ValidationError and JSONDecodeError are ValueErrors too
        raise InvalidInputError(_describe(exc)) from exc
    key = message_id or payload.idempotency_key
    return InteractionReceived(
        event_id=f"webhook:{key}",
        tenant_id=tenant_id,
        user_id=payload.user_id,
        messages=payload.messages,
        channel=payload.channel,
        session_id=payload.session_id,
        occurred_at=payload.occurred_at,
        metadata=payload.metadata,
    )


def _describe(exc: ValueError) -> str:
    if not isinstance(exc, ValidationError):
        return f"the body is not valid JSON: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else str(exc)
    problems = [f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()[:5]]
    return "the webhook body is invalid: " + "; ".join(problems)
