"""Request signatures of the ingest routes: Standard Webhooks, Slack's v0 scheme and Rapport's deprecated v1 scheme."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime, timedelta

from standardwebhooks import Webhook

from rapport.errors import UnauthorizedError

SLACK_SIGNATURE_HEADER = "x-slack-signature"
SLACK_TIMESTAMP_HEADER = "x-slack-request-timestamp"
# Rapport's own scheme, kept for the senders that use it during its deprecation (docs/deploy.md).
WEBHOOK_SIGNATURE_HEADER = "x-rapport-signature"
WEBHOOK_TIMESTAMP_HEADER = "x-rapport-timestamp"
# Standard Webhooks (https://www.standardwebhooks.com), which senders have libraries for.
STANDARD_ID_HEADER = "webhook-id"
STANDARD_TIMESTAMP_HEADER = "webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"
STANDARD_SECRET_PREFIX = "whsec_"  # noqa: S105 - the prefix of a secret, not one
_MAX_MESSAGE_ID = 200
BAD_SIGNATURE = (
    "the {header} does not match the body: the request was not signed with this tenant's secret, the secret is not "
    "set (rapport ingest-secret set), or the body was changed"
)
_MAX_TIMESTAMP_DIGITS = 12
# Compared against when a tenant has no secret, so that answer costs the same HMAC as a wrong signature.
_NO_SECRET = secrets.token_hex(32)
_NO_STANDARD_SECRET = secrets.token_bytes(32)


class SignatureError(UnauthorizedError):
    """The request is not signed by the tenant's secret, or was signed too long ago: nothing was ingested."""


def _check_timestamp(timestamp: str | None, now: datetime, window: timedelta, timestamp_header: str) -> str:
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
    return stamp


def standard_signer(secret: str) -> Webhook:
    """The `standardwebhooks` signer of a `whsec_<base64>` secret. A secret set without the prefix (one made for
    the v1 scheme) signs with its own bytes, so a tenant can move a sender to Standard Webhooks without a new one."""
    if secret.startswith(STANDARD_SECRET_PREFIX):
        try:
            return Webhook(secret)
        except ValueError:  # not base64 after the prefix: no sender's library can sign with it either
            pass
    return Webhook(secret.encode())


def verify_standard_webhook(
    *, secret: str | None, headers: dict[str, str], body: bytes, now: datetime, window: timedelta
) -> str:
    """The `webhook-id` of a request signed the Standard Webhooks way, or SignatureError.

    The library computes the signature (`Webhook.sign`), while the clock and the window are ours, so the replay
    rule is the one the other schemes follow and tests can move time. `webhook-signature` may list several
    space-separated `v1,<base64>` values (a sender rotating its secret); any one that matches passes. As with v1, a
    tenant without a secret costs the same HMAC as a wrong signature and gets the same answer.
    """
    received = headers.get(STANDARD_SIGNATURE_HEADER)
    if not received:
        raise SignatureError(f"the {STANDARD_SIGNATURE_HEADER} header is missing")
    message_id = (headers.get(STANDARD_ID_HEADER) or "").strip()
    if not message_id or len(message_id) > _MAX_MESSAGE_ID or not message_id.isascii():
        raise SignatureError(f"the {STANDARD_ID_HEADER} header is missing or longer than {_MAX_MESSAGE_ID} characters")
    stamp = _check_timestamp(headers.get(STANDARD_TIMESTAMP_HEADER), now, window, STANDARD_TIMESTAMP_HEADER)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SignatureError("the body is not UTF-8, which a Standard Webhooks signature is over") from exc
    signer = standard_signer(secret) if secret is not None else Webhook(_NO_STANDARD_SECRET)
    expected = signer.sign(message_id, datetime.fromtimestamp(int(stamp), tz=UTC), text).encode()
    offered = [part.strip().encode() for part in received.split(" ") if part.strip().startswith("v1,")]
    # Every offered value is compared, in constant time each, so the time taken says nothing about which matched.
    matches = [hmac.compare_digest(expected, value) for value in offered]
    if secret is None or not any(matches):
        raise SignatureError(BAD_SIGNATURE.format(header=STANDARD_SIGNATURE_HEADER))
    return message_id


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
    stamp = _check_timestamp(timestamp, now, window, timestamp_header)
    expected = signature(version, secret if secret is not None else _NO_SECRET, stamp, body)
    # Constant time: comparing byte by byte would tell an attacker how much of a forged signature was right.
    matches = hmac.compare_digest(expected.encode(), received.strip().encode())
    if secret is None or not matches:
        raise SignatureError(BAD_SIGNATURE.format(header=signature_header))
