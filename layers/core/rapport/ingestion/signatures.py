"""Request signatures of the ingest routes: Slack's v0 scheme and Rapport's webhook v1 scheme (the same shape)."""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime, timedelta

from rapport.errors import UnauthorizedError

SLACK_SIGNATURE_HEADER = "x-slack-signature"
SLACK_TIMESTAMP_HEADER = "x-slack-request-timestamp"
WEBHOOK_SIGNATURE_HEADER = "x-rapport-signature"
WEBHOOK_TIMESTAMP_HEADER = "x-rapport-timestamp"


class SignatureError(UnauthorizedError):
    """The request is not signed by the tenant's secret, or was signed too long ago: nothing was ingested."""


def signature(version: str, secret: str, timestamp: str, body: bytes) -> str:
    """`{version}=` + hex HMAC-SHA256 of `{version}:{timestamp}:{raw body}` (Slack's v0; the webhook's v1).

    The timestamp is inside the signed bytes, so moving it forward to slip past the replay window breaks the
    signature; the body is the exact bytes received, so nothing may parse and re-serialise it first.
    """
    base = f"{version}:{timestamp}:".encode() + body
    return f"{version}=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def verify_signature(
    *,
    version: str,
    secret: str,
    timestamp: str | None,
    received: str | None,
    body: bytes,
    now: datetime,
    window: timedelta,
    timestamp_header: str,
    signature_header: str,
) -> None:
    """Raise SignatureError unless `received` is the signature of `body` at `timestamp`, within `window` of now."""
    if not received:
        raise SignatureError(f"the {signature_header} header is missing")
    if not timestamp or not timestamp.strip().isdigit():
        raise SignatureError(f"the {timestamp_header} header is missing or not a Unix time in seconds")
    expected = signature(version, secret, timestamp.strip(), body)
    # Constant time: comparing byte by byte would tell an attacker how much of a forged signature was right.
    if not hmac.compare_digest(expected.encode(), received.strip().encode()):
        raise SignatureError(f"the {signature_header} does not match the body: wrong secret, or the body was changed")
    skew = abs(now.timestamp() - int(timestamp.strip()))
    if skew > window.total_seconds():
        raise SignatureError(
            f"the request was signed {int(skew)} s from now, outside the {int(window.total_seconds())} s window: "
            "a replay, or a sender whose clock is wrong"
        )
