"""Builds the ingestion side (bus, tenant secrets, claims, receiver, consumer) from the settings, once per process."""

from __future__ import annotations

import functools
from datetime import timedelta
from typing import cast

from rapport.clock import Clock, SystemClock
from rapport.ingestion.consumer import InteractionConsumer
from rapport.ingestion.events import INTERACTION_RECEIVED, SOURCE_PREFIX
from rapport.ingestion.idempotency import INGESTED, RECEIVED, IdempotencyClaims
from rapport.ingestion.service import IngestionService
from rapport.ports.event_bus import EventBus
from rapport.ports.items import ItemStore
from rapport.ports.tenant_secrets import TenantSecrets
from rapport.services.interactions import InteractionService
from rapport.settings import IngestSecretBackend, Settings


def build_event_bus(settings: Settings) -> EventBus:
    """EventBridge when a bus is named (AWS), else the in-process dispatcher (the local server, tests)."""
    if settings.event_bus_name:
        from rapport.adapters.aws.eventbridge import EventBridgeBus

        return EventBridgeBus(settings.event_bus_name, region_name=settings.aws_region)
    from rapport.adapters.local.in_process_bus import InProcessBus

    return InProcessBus()


def build_tenant_secrets(settings: Settings, items: ItemStore, clock: Clock) -> TenantSecrets:
    if settings.ingest_secret_backend is IngestSecretBackend.SECRETS_MANAGER:
        from rapport.adapters.aws.secrets_manager import SecretsManagerTenantSecrets

        return SecretsManagerTenantSecrets(settings.ingest_secret_prefix, region_name=settings.aws_region)
    from rapport.ingestion.stored_secrets import ItemStoreTenantSecrets

    return ItemStoreTenantSecrets(items, clock)


def _claims(settings: Settings, items: ItemStore, clock: Clock, kind: str) -> IdempotencyClaims:
    return IdempotencyClaims(items, clock, kind=kind, ttl=timedelta(hours=settings.ingest_idempotency_hours))


def build_ingestion(settings: Settings, *, items: ItemStore, clock: Clock, bus: EventBus) -> IngestionService:
    return IngestionService(
        secrets=build_tenant_secrets(settings, items, clock),
        claims=_claims(settings, items, clock, RECEIVED),
        bus=bus,
        clock=clock,
        replay_window=timedelta(seconds=settings.ingest_replay_window_seconds),
    )


def build_consumer(
    settings: Settings, *, items: ItemStore, clock: Clock, interactions: InteractionService
) -> InteractionConsumer:
    return InteractionConsumer(interactions, _claims(settings, items, clock, INGESTED))


def subscribe_in_process(bus: EventBus, consumer: InteractionConsumer) -> None:
    """Locally the bus's one rule is the consumer, as the stack's rule is in AWS when no state machine is deployed."""
    from rapport.adapters.local.in_process_bus import InProcessBus

    if isinstance(bus, InProcessBus):
        bus.subscribe(source_prefix=SOURCE_PREFIX, detail_type=INTERACTION_RECEIVED, subscriber=consumer.handle_detail)


@functools.cache
def ingestion_from_environment() -> IngestionService:
    """The webhooks Lambda: store (for claims), tenant secrets and the bus; no embedder, index or model clients."""
    from rapport.composition.services import build_store

    settings = Settings()
    clock = SystemClock()
    items = cast(ItemStore, build_store(settings))
    return build_ingestion(settings, items=items, clock=clock, bus=build_event_bus(settings))
