"""Request signatures of the ingest routes: Slack's v0 scheme and Rapport's webhook v1 scheme (the same shape)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta

from rapport.errors import UnauthorizedError

SLACK_SIGNATURE_HEADER = "x-slack-signature"
SLACK_TIMESTAMP_HEADER = "x-slack-request-timestamp"
WEBHOOK_SIGNATURE_HEADER = "x-rapport-signature"
WEBHOOK_TIMESTAMP_HEADER = "x-rapport-timestamp"
BAD_SIGNATURE = (
    "the {header} does not match the body: the request was not signed with this tenant's secret, the secret is not "
    "set (rapport ingest-secret set), or the body was changed"
)
_MAX_TIMESTAMP_DIGITS = 12
# Compared against when a tenant has no secret, so that answer costs the same HMAC as a wrong signature.
_NO_SECRET = secrets.token_hex(32)


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
    secret: str | None,
    timestamp: str | None,
    received: str | None,
    body: bytes,
    now: datetime,
    window: timedelta,
    timestamp_header: str,
    signature_header: str,
) -> None:
    """Raise SignatureError unless `received` is the signature of `body` at `timestamp`, within `window` of now.

    `secret` is None for a tenant that has none set. The headers and the window are checked first, as they tell a
    caller nothing about the tenant; then a tenant without a secret and a wrong signature get the same answer, after
    the same work, so the ingest routes cannot be used to learn which tenants exist.
    """
    if not received:
        raise SignatureError(f"the {signature_header} header is missing")
    stamp = (timestamp or "").strip()
    # ASCII digits only: str.isdigit() admits "²" and other digits int() refuses; 12 digits reach the year 33658.
    if not (stamp.isascii() and stamp.isdigit() and len(stamp) <= _MAX_TIMESTAMP_DIGITS):
        raise SignatureError(f"the {timestamp_header} header is missing or not a Unix time in seconds")
    skew = abs(now.timestamp() - int(stamp))
    if skew > window.total_seconds():
        raise SignatureError(
            f"the request was signed {int(skew)} s from now, outside the {int(window.total_seconds())} s window: "
            "a replay, or a sender whose clock is wrong"
        )
    expected = signature(version, secret if secret is not None else _NO_SECRET, stamp, body)
    # Constant time: comparing byte by byte would tell an attacker how much of a forged signature was right.
    matches = hmac.compare_digest(expected.encode(), received.strip().encode())
    if secret is None or not matches:
        raise SignatureError(BAD_SIGNATURE.format(header=signature_header))
