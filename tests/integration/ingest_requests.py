"""Signed Slack and webhook requests as the platforms send them, for the ingestion tests of every tier."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from pydantic import SecretStr
from standardwebhooks import Webhook

from rapport.composition.services import Services
from rapport.ingestion.signatures import signature
from rapport.ingestion.stored_secrets import ItemStoreTenantSecrets

SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
WEBHOOK_SECRET = "whsec_9c1b5a0e6f3d4e2a8b7c"
TENANT = "acme"


def with_ingest_secrets(
    services: Services, *, slack: str | None = SLACK_SECRET, webhook: str = WEBHOOK_SECRET
) -> Services:
    """The tenant's signing secrets stored, as `rapport ingest-secret set` stores them."""
    secrets = ItemStoreTenantSecrets(services.items, services.clock)
    if slack is not None:
        secrets.put(TENANT, "slack", SecretStr(slack))
    secrets.put(TENANT, "webhook", SecretStr(webhook))
    return services


def now(services: Services) -> int:
    """The services' clock as a platform's Unix timestamp."""
    return int(services.clock.now().timestamp())


def slack_message(
    text: str = "I just adopted a dog named Max",
    *,
    event_id: str = "Ev08MFMKH6",
    user: str = "U061F7AUR",
    channel: str = "C0LAN2Q65",
    thread_ts: str | None = None,
    **event_fields: Any,
) -> bytes:
    """An Events API `event_callback` with a message event, serialised once: these are the bytes that get signed."""
    event: dict[str, Any] = {
        "type": "message",
        "channel": channel,
        "user": user,
        "text": text,
        "ts": "1700000000.000100",
        "channel_type": "channel",
        **event_fields,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return json.dumps(
        {
            "token": "deprecated-verification-token",
            "team_id": "T061EG9R6",
            "api_app_id": "A0PNCHHK2",
            "event": event,
            "type": "event_callback",
            "event_id": event_id,
            "event_time": 1700000000,
        }
    ).encode()


def slack_headers(
    body: bytes, *, timestamp: int, secret: str = SLACK_SECRET, retry: int | None = None
) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": signature("v0", secret, str(timestamp), body),
    }
    if retry is not None:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    return headers


def webhook_body(idempotency_key: str = "msg-1001", *, user_id: str = "dana", text: str = "I moved to Lisbon") -> bytes:
    return json.dumps(
        {
            "idempotency_key": idempotency_key,
            "user_id": user_id,
            "channel": "discord",
            "session_id": "guild-7/channel-3",
            "messages": [
                {"role": "user", "content": text},
                {"role": "assistant", "content": "Lisbon! How are you settling in?"},
            ],
        },
        separators=(",", ":"),
    ).encode()


def webhook_headers(body: bytes, *, timestamp: int, secret: str = WEBHOOK_SECRET) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "X-Rapport-Timestamp": str(timestamp),
        "X-Rapport-Signature": signature("v1", secret, str(timestamp), body),
    }


def standard_webhook_headers(
    body: bytes, *, message_id: str = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", timestamp: int, secret: str = WEBHOOK_SECRET
) -> dict[str, str]:
    """Signed by the `standardwebhooks` library itself, as a sender using it would."""
    at = datetime.fromtimestamp(timestamp, tz=UTC)
    return {
        "Content-Type": "application/json",
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": Webhook(secret).sign(message_id, at, body.decode()),
    }
