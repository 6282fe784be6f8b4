"""Outbound webhooks as the domain sees them: event types, what an event and a delivery are, and the pure rules
(retry schedule, which URLs and addresses an endpoint may have)."""

from __future__ import annotations

import ipaddress
from datetime import datetime
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from rapport.errors import InvalidInputError


class OutboundEventType(StrEnum):
    MEMORY_STORED = "memory.stored"
    INTERACTION_PROCESSED = "interaction.processed"
    USER_ERASED = "user.erased"


class OutboundEvent(BaseModel):
    """One event, as every endpoint subscribed to its type receives it. `data` holds ids and counts only: a
    memory's text never leaves the service this way (a receiver that wants it reads it with its API key)."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="The `webhook-id`: the same on every attempt and every endpoint, for deduplication.")
    type: OutboundEventType
    tenant_id: str
    occurred_at: datetime
    data: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        """The body, in Standard Webhooks' recommended shape (`type`, `timestamp`, `data`); the tenant is the
        endpoint's owner, so it is not repeated."""
        return {"type": self.type.value, "timestamp": self.occurred_at.isoformat(), "data": self.data}


class DeliveryJob(BaseModel):
    """What the transport carries: one event for one endpoint, at one attempt (1-based)."""

    model_config = ConfigDict(frozen=True)

    endpoint_id: str
    event: OutboundEvent
    attempt: int = Field(1, ge=1)


class WebhookEndpoint(BaseModel):
    """A tenant's registered receiver. The secret signs every delivery; it is shown once, at registration."""

    model_config = ConfigDict(frozen=True)

    id: str
    tenant_id: str
    url: str
    event_types: list[OutboundEventType]
    secret: str = Field(repr=False)
    created_at: datetime


class DeliveryAttempt(BaseModel):
    """One line of the delivery log: which event, which attempt, what the receiver answered. No payload."""

    model_config = ConfigDict(frozen=True)

    event_id: str
    event_type: OutboundEventType
    attempt: int
    status_code: int | None = None
    error: str | None = None
    delivered: bool
    at: datetime


def retry_delay(attempt: int, *, base_seconds: float, max_seconds: float) -> float:
    """Seconds to wait after failed attempt `attempt` (1-based): base, 2x, 4x, ... capped. Exponential, so a
    receiver that is down for an hour is not hammered, and capped so the last attempts still come within a day."""
    return float(min(max_seconds, base_seconds * 2 ** (attempt - 1)))


_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
MAX_URL_LENGTH = 2048


def check_endpoint_url(url: str, *, allow_local_http: bool) -> str:
    """The host of an acceptable endpoint URL, or InvalidInputError: https with a host and no credentials; http
    only to this machine and only where `allow_local_http` says so (development and tests)."""
    if len(url) > MAX_URL_LENGTH:
        raise InvalidInputError(f"url: at most {MAX_URL_LENGTH} characters")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number in range
    except ValueError as exc:
        raise InvalidInputError(f"url: not a URL ({exc})") from exc
    if not host:
        raise InvalidInputError("url: must be an absolute URL with a host, like https://hooks.example.com/rapport")
    if parts.username is not None or parts.password is not None:
        raise InvalidInputError("url: must not carry credentials; the signature authenticates the request")
    if parts.scheme == "https":
        return host
    if parts.scheme == "http" and allow_local_http and host in _LOOPBACK_NAMES:
        return host
    if parts.scheme == "http" and host in _LOOPBACK_NAMES:
        raise InvalidInputError(
            "url: http is accepted only for localhost, and only where RAPPORT_WEBHOOK_ALLOW_LOCAL_HTTP=true"
        )
    raise InvalidInputError("url: must be https (deliveries carry a signature, and a receiver must be reachable)")


def forbidden_address(address: str, *, allow_loopback: bool) -> str | None:
    """Why a resolved address may not be delivered to (None: it may). Private, loopback, link-local (the instance
    metadata service at 169.254.169.254), shared, multicast, reserved and unspecified addresses would let a
    tenant make the service call into its own network (SSRF)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address!r} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return None if allow_loopback else f"{ip} is a loopback address"
    if ip.is_link_local:
        return f"{ip} is a link-local address"
    if ip.is_private or ip in ipaddress.ip_network("100.64.0.0/10"):
        return f"{ip} is a private address"
    if ip.is_multicast or ip.is_reserved or ip.is_unspecified or not ip.is_global:
        return f"{ip} is not a public address"
    return None
