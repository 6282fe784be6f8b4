"""Builds the ingestion side (claims, the signed-request receiver, the bus consumer) over the process's adapters."""

from __future__ import annotations

from datetime import timedelta

from rapport.clock import Clock
from rapport.composition.adapters import build_tenant_secrets
from rapport.ingestion.consumer import InteractionConsumer
from rapport.ingestion.events import INTERACTION_RECEIVED, SOURCE_PREFIX
from rapport.ingestion.idempotency import INGESTED, RECEIVED, IdempotencyClaims
from rapport.ingestion.service import IngestionService
from rapport.ports.event_bus import EventBus
from rapport.ports.items import ItemStore
from rapport.services.interactions import InteractionService
from rapport.settings import Settings


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
