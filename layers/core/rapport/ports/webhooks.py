"""Ports of outbound webhooks: the transport that carries deliveries (a thread locally, SQS in AWS), the HTTP
client that makes one, the resolver that tells where a host points, and what use cases call to announce an event."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from rapport.domain.webhooks import DeliveryJob, OutboundEventType


class WebhookDispatch(Protocol):
    def enqueue(self, job: DeliveryJob, *, delay_seconds: float = 0.0) -> None:
        """Hand the job over to be delivered after `delay_seconds`, or raise (UpstreamError)."""


class WebhookSender(Protocol):
    def post(self, url: str, *, headers: Mapping[str, str], body: bytes, timeout_seconds: float) -> int:
        """POST once, following no redirect; the status code, or UpstreamError when no answer came (connection
        refused, TLS failure, timeout), with a message that names which."""


class AddressResolver(Protocol):
    def addresses(self, host: str) -> list[str]:
        """The IP addresses `host` resolves to now (an IP literal: itself), or InvalidInputError when it does not
        resolve."""


class OutboundEvents(Protocol):
    def emit(self, tenant_id: str, event_type: OutboundEventType, data: dict[str, Any]) -> None:
        """Announce an event to the tenant's subscribed endpoints. Never raises: what happened has happened."""
