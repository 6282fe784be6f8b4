"""Slack Events API payloads: the envelope, and how a message event becomes an `Interaction Received` event."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from rapport import strict_json
from rapport.domain.models import MessageRole
from rapport.domain.timestamps import moment_of_epoch_seconds
from rapport.errors import InvalidInputError
from rapport.ingestion.events import InteractionReceived, ReceivedMessage

SLACK_CHANNEL = "slack"
# Message subtypes that still carry something a person wrote; edits, deletions, joins and bot posts do not.
_HUMAN_SUBTYPES = frozenset({None, "thread_broadcast", "file_share"})


class SlackMessageEvent(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: str
    subtype: str | None = None
    user: str | None = None
    bot_id: str | None = None
    text: str | None = None
    channel: str | None = None
    channel_type: str | None = None
    ts: str | None = None
    thread_ts: str | None = None


class SlackEnvelope(BaseModel):
    """The outer object of every Events API request; Slack adds fields over time, so unknown ones are ignored."""

    model_config = ConfigDict(extra="ignore")

    type: str
    challenge: str | None = None
    team_id: str | None = None
    api_app_id: str | None = None
    event_id: str | None = None
    event_time: int | None = None
    event: dict[str, Any] | None = None


def parse_envelope(body: bytes) -> SlackEnvelope:
    try:
        return SlackEnvelope.model_validate(strict_json.loads(body))
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"the body is not a Slack Events API payload: not valid JSON ({exc.msg})") from exc
    except (ValueError, ValidationError) as exc:
        raise InvalidInputError("the body is not a Slack Events API payload (JSON with a 'type')") from exc


def interaction_from_slack(tenant_id: str, envelope: SlackEnvelope) -> InteractionReceived | None:
    """The interaction a human's message amounts to; None for what is acknowledged but not remembered (bot posts,
    edits, deletions, other event types)."""
    if envelope.type != "event_callback" or envelope.event is None:
        return None
    if not envelope.event_id:
        raise InvalidInputError("an event_callback without an event_id cannot be deduplicated")
    try:
        event = SlackMessageEvent.model_validate(envelope.event)
    except ValidationError as exc:
        raise InvalidInputError("the Slack event has no 'type'") from exc
    if event.type != "message" or event.subtype not in _HUMAN_SUBTYPES or event.bot_id:
        return None
    if not event.user or not event.channel or not (event.text or "").strip():
        return None
    # A thread is its own conversation; a top-level message belongs to the channel's running one.
    session = f"{event.channel}:{event.thread_ts}" if event.thread_ts else event.channel
    try:
        return InteractionReceived(
            event_id=f"slack:{envelope.event_id}",
            tenant_id=tenant_id,
            user_id=event.user,
            messages=[ReceivedMessage(role=MessageRole.USER, content=event.text or "")],
            channel=SLACK_CHANNEL,
            session_id=session,
            occurred_at=_slack_time(event.ts) or _epoch(envelope.event_time),
            metadata={
                "slack": {
                    key: value
                    for key, value in {
                        "team_id": envelope.team_id,
                        "api_app_id": envelope.api_app_id,
                        "channel": event.channel,
                        "channel_type": event.channel_type,
                        "ts": event.ts,
                        "thread_ts": event.thread_ts,
                    }.items()
                    if value is not None
                }
            },
        )
    except ValidationError as exc:
        raise InvalidInputError(f"the Slack message cannot be ingested: {exc.errors()[0]['msg']}") from exc


def _slack_time(ts: str | None) -> datetime | None:
    """Slack's `ts` is "seconds.micro" since the epoch; it doubles as the message id. One that is no such time
    (`inf`, `1e20`, a word) is refused rather than stored as a moment nothing after can compute with."""
    if not ts:
        return None
    try:
        return moment_of_epoch_seconds(float(ts))
    except ValueError as exc:
        raise InvalidInputError(f"the Slack message's ts {ts[:40]!r} is not a Unix time in range") from exc


def _epoch(seconds: int | None) -> datetime | None:
    if not seconds:
        return None
    try:
        return moment_of_epoch_seconds(seconds)
    except ValueError as exc:
        raise InvalidInputError(f"the Slack event_time {seconds} is not a Unix time in range") from exc
