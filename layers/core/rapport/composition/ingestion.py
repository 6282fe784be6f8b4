"""Builds the ingestion side (the signed-request receiver, the bus consumer) over the process's adapters; both key
their writes by the platform's event id with the one idempotency scheme (services/idempotency.py)."""

from __future__ import annotations

from datetime import timedelta

from rapport.clock import Clock
from rapport.composition.adapters import build_idempotency_records, build_tenant_secrets
from rapport.ingestion.consumer import InteractionConsumer
from rapport.ingestion.events import INTERACTION_RECEIVED, SOURCE_PREFIX
from rapport.ingestion.rate_limit import TenantRateLimit
from rapport.ingestion.service import IngestionService
from rapport.ports.event_bus import EventBus
from rapport.ports.items import ItemStore
from rapport.ports.store import MemoryStore
from rapport.services.idempotency import IdempotentRequests
from rapport.services.keyed_writes import KeyedWrites
from rapport.settings import Settings


def _remembered_for(settings: Settings) -> timedelta:
    return timedelta(hours=settings.ingest_idempotency_hours)


def build_ingestion(
    settings: Settings, *, store: MemoryStore, items: ItemStore, clock: Clock, bus: EventBus
) -> IngestionService:
    return IngestionService(
        secrets=build_tenant_secrets(settings, items, clock),
        once=IdempotentRequests(build_idempotency_records(store, items), settings, clock),
        bus=bus,
        clock=clock,
        replay_window=timedelta(seconds=settings.ingest_replay_window_seconds),
        remembered_for=_remembered_for(settings),
        rate_limit=TenantRateLimit(
            items,
            clock,
            limit=settings.ingest_rate_limit,
            window=timedelta(seconds=settings.ingest_rate_window_seconds),
        ),
    )


def build_consumer(settings: Settings, *, writes: KeyedWrites) -> InteractionConsumer:
    return InteractionConsumer(writes, remembered_for=_remembered_for(settings))


def subscribe_in_process(bus: EventBus, consumer: InteractionConsumer) -> None:
    """Locally the bus's one rule is the consumer, as the stack's rule is in AWS when no state machine is deployed."""
    from rapport.adapters.local.in_process_bus import InProcessBus

    if isinstance(bus, InProcessBus):
        bus.subscribe(source_prefix=SOURCE_PREFIX, detail_type=INTERACTION_RECEIVED, subscriber=consumer.handle_detail)
