"""Outbound events: announce one to the tenant's subscribed endpoints, and deliver it, signed the Standard Webhooks
way, retried with exponential backoff a bounded number of times, every attempt written to the delivery log. The
same use case runs locally (a background thread carries the jobs) and in AWS (an SQS queue and a function)."""

from __future__ import annotations

import json
import logging
from datetime import datetime
from enum import StrEnum
from typing import Any

from standardwebhooks import Webhook

from rapport import __version__
from rapport.clock import Clock
from rapport.domain.webhooks import DeliveryAttempt, DeliveryJob, OutboundEvent, OutboundEventType, retry_delay
from rapport.errors import InvalidInputError, UpstreamError
from rapport.ids import new_id
from rapport.ports.webhooks import AddressResolver, WebhookDispatch, WebhookSender
from rapport.services.webhooks import WebhookRepository, check_destination
from rapport.settings import Settings

logger = logging.getLogger(__name__)
_ERROR_CHARS = 300  # what a receiver or a socket said, trimmed: the log is for people, not for bodies


class DeliveryOutcome(StrEnum):
    DELIVERED = "delivered"
    RETRYING = "retrying"  # failed; the next attempt is queued
    GAVE_UP = "gave_up"  # failed on the last attempt, or can never succeed (the address is refused)
    DROPPED = "dropped"  # the endpoint was deleted, or no longer wants this type: nothing sent


class WebhookEvents:
    """The `OutboundEvents` port for the use cases, and the delivery step the transport calls."""

    def __init__(
        self,
        *,
        repository: WebhookRepository,
        dispatch: WebhookDispatch,
        sender: WebhookSender,
        resolver: AddressResolver,
        settings: Settings,
        clock: Clock,
    ) -> None:
        self._repository = repository
        self._dispatch = dispatch
        self._sender = sender
        self._resolver = resolver
        self._settings = settings
        self._clock = clock

    def emit(self, tenant_id: str, event_type: OutboundEventType, data: dict[str, Any]) -> None:
        """One job per subscribed endpoint, all with the same event id. A failure to read the endpoints or to queue
        is logged, never raised: the memory is stored, the user erased, whatever the receiver hears of it."""
        try:
            endpoints = [e for e in self._repository.subscribed(tenant_id) if event_type in e.event_types]
            if not endpoints:
                return
            event = OutboundEvent(
                id=f"evt_{new_id()}", type=event_type, tenant_id=tenant_id, occurred_at=self._clock.now(), data=data
            )
            for endpoint in endpoints:
                self._dispatch.enqueue(DeliveryJob(endpoint_id=endpoint.id, event=event))
        except Exception:
            logger.warning(
                "webhook event not queued", extra={"tenant_id": tenant_id, "type": event_type.value}, exc_info=True
            )

    def deliver(self, job: DeliveryJob) -> DeliveryOutcome:
        """One attempt. Raises only when the store cannot be read or written, so the transport retries the job."""
        event = job.event
        endpoint = self._repository.get(event.tenant_id, job.endpoint_id)
        if endpoint is None or event.type not in endpoint.event_types:
            return DeliveryOutcome.DROPPED
        now = self._clock.now()
        status: int | None = None
        error: str | None = None
        try:
            check_destination(endpoint.url, self._resolver, allow_local_http=self._settings.webhook_allow_local_http)
        except InvalidInputError as exc:
            self._log(job, now, status=None, error=str(exc)[:_ERROR_CHARS], delivered=False)
            return DeliveryOutcome.GAVE_UP  # the same address would be refused on every attempt
        body = json.dumps(event.payload(), separators=(",", ":")).encode()
        headers = {
            "content-type": "application/json",
            "user-agent": f"Rapport-Webhooks/{__version__}",
            "webhook-id": event.id,
            "webhook-timestamp": str(int(now.timestamp())),
            "webhook-signature": Webhook(endpoint.secret).sign(event.id, now, body.decode()),
        }
        try:
            status = self._sender.post(
                endpoint.url, headers=headers, body=body, timeout_seconds=self._settings.webhook_timeout_seconds
            )
        except UpstreamError as exc:
            error = str(exc)[:_ERROR_CHARS]
        delivered = status is not None and 200 <= status < 300
        if status is not None and not delivered:
            error = f"the endpoint answered {status}"
        self._log(job, now, status=status, error=error, delivered=delivered)
        if delivered:
            return DeliveryOutcome.DELIVERED
        if job.attempt >= self._settings.webhook_max_attempts:
            logger.warning(
                "webhook delivery gave up",
                extra={"tenant_id": event.tenant_id, "endpoint_id": job.endpoint_id, "event_id": event.id},
            )
            return DeliveryOutcome.GAVE_UP
        delay = retry_delay(
            job.attempt,
            base_seconds=self._settings.webhook_retry_base_seconds,
            max_seconds=self._settings.webhook_retry_max_seconds,
        )
        self._dispatch.enqueue(job.model_copy(update={"attempt": job.attempt + 1}), delay_seconds=delay)
        return DeliveryOutcome.RETRYING

    def _log(self, job: DeliveryJob, at: datetime, *, status: int | None, error: str | None, delivered: bool) -> None:
        attempt = DeliveryAttempt(
            event_id=job.event.id,
            event_type=job.event.type,
            attempt=job.attempt,
            status_code=status,
            error=error,
            delivered=delivered,
            at=at,
        )
        self._repository.log(job.event.tenant_id, job.endpoint_id, attempt)
