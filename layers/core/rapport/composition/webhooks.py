"""Builds outbound webhooks: the endpoints' use case, and the event use case over its transport (SQS when a queue
is named, as in AWS; else a background thread of this process)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from rapport.clock import Clock
from rapport.ports.items import ItemStore
from rapport.ports.webhooks import WebhookDispatch
from rapport.services.webhook_deliveries import WebhookEvents
from rapport.services.webhooks import WebhookEndpoints, WebhookRepository
from rapport.settings import Settings


@dataclass(frozen=True)
class WebhookServices:
    endpoints: WebhookEndpoints
    events: WebhookEvents
    dispatch: WebhookDispatch


def build_webhooks(settings: Settings, *, items: ItemStore, clock: Clock) -> WebhookServices:
    from rapport.adapters.http.webhook_sender import HttpxWebhookSender, SystemAddressResolver

    repository = WebhookRepository(
        items,
        clock,
        log_kept_for=timedelta(days=settings.webhook_delivery_log_days),
        cached_for=timedelta(seconds=settings.webhook_endpoint_cache_seconds),
        max_endpoints=settings.webhook_max_endpoints,
    )
    resolver = SystemAddressResolver()
    dispatch = build_webhook_dispatch(settings)
    events = WebhookEvents(
        repository=repository,
        dispatch=dispatch,
        sender=HttpxWebhookSender(),
        resolver=resolver,
        settings=settings,
        clock=clock,
    )
    from rapport.adapters.local.webhook_thread import ThreadWebhookDispatch

    if isinstance(dispatch, ThreadWebhookDispatch):
        dispatch.bind(events.deliver)
    return WebhookServices(
        endpoints=WebhookEndpoints(repository, resolver, settings, clock), events=events, dispatch=dispatch
    )


def build_webhook_dispatch(settings: Settings) -> WebhookDispatch:
    if settings.webhook_queue_url:
        from rapport.adapters.aws.sqs_webhooks import SqsWebhookDispatch

        return SqsWebhookDispatch(settings.webhook_queue_url, region_name=settings.aws_region)
    from rapport.adapters.local.webhook_thread import ThreadWebhookDispatch

    return ThreadWebhookDispatch()
