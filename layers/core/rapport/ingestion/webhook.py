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
    """`POST /v1/ingest/webhook` body. The idempotency key is inside the signed body, so it cannot be swapped."""

    model_config = ConfigDict(extra="forbid")

    idempotency_key: str = Field(min_length=1, max_length=200)
    user_id: str = Field(pattern=USER_ID_PATTERN)
    messages: list[ReceivedMessage] = Field(min_length=1)
    channel: str = Field(DEFAULT_CHANNEL, min_length=1, max_length=64)
    session_id: str | None = Field(None, max_length=128)
    occurred_at: Moment | None = None
    metadata: dict[str, Any] | None = None


def interaction_from_webhook(tenant_id: str, body: bytes) -> InteractionReceived:
    try:
        payload = WebhookPayload.model_validate(strict_json.loads(body))
    except ValueError as exc:  # ValidationError and JSONDecodeError are ValueErrors too
        raise InvalidInputError(_describe(exc)) from exc
    return InteractionReceived(
        event_id=f"webhook:{payload.idempotency_key}",
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
