"""The service graph of one process, built once (per cold start in Lambda): every use case with its collaborators."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import cast

from rapport.clock import Clock, SystemClock
from rapport.composition.adapters import (
    build_event_bus,
    build_idempotency_records,
    build_index,
    build_language_model,
    build_signal_detector,
    build_store,
    resolve_secrets,
)
from rapport.composition.graph import GraphServices, build_graph_hooks, build_graph_services
from rapport.composition.ingestion import build_consumer, build_ingestion, subscribe_in_process
from rapport.composition.pipeline import build_pipeline, sentences_ahead
from rapport.composition.webhooks import WebhookServices, build_webhooks
from rapport.ingestion.consumer import InteractionConsumer
from rapport.ingestion.service import IngestionService
from rapport.jobs.governance import GovernanceJobs
from rapport.pipeline.in_process import InProcessPipeline
from rapport.pipeline.runner import PipelineRunner
from rapport.ports.dead_letters import DeadLetters
from rapport.ports.embedder import Embedder
from rapport.ports.event_bus import EventBus
from rapport.ports.items import ItemStore
from rapport.ports.language_model import LanguageModel
from rapport.ports.pipeline import PipelineTrigger, RunsInFlight
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import VectorIndex
from rapport.services.assistants import AssistantDirectory
from rapport.services.audit import AuditTrail
from rapport.services.auth import ApiKeyAuthenticator
from rapport.services.edges import EdgeRepository
from rapport.services.filter_decisions import FilterDecisionService
from rapport.services.idempotency import IdempotentRequests
from rapport.services.interactions import InteractionService
from rapport.services.keyed_writes import KeyedWrites
from rapport.services.memories import MemoryService
from rapport.services.people import PeopleService
from rapport.services.privacy import PrivacyService
from rapport.services.process import ProcessService
from rapport.services.profiles import ProfileRepository, ProfileService
from rapport.services.recall import Recall
from rapport.services.relational_state import RelationalStateService
from rapport.services.sessions import SessionService
from rapport.services.signals import SignalService
from rapport.services.turns import TurnService
from rapport.services.user_directory import UserDirectory
from rapport.services.user_export import UserExport
from rapport.services.user_import import UserImport
from rapport.settings import Settings


@dataclass(frozen=True)
class Services:
    """What the routers, the CLI and the Lambda functions use; built by `build_services` only."""

    settings: Settings
    clock: Clock
    store: MemoryStore
    items: ItemStore
    index: VectorIndex
    embedder: Embedder
    language_model: LanguageModel
    bus: EventBus
    memories: MemoryService
    recall: Recall
    interactions: InteractionService
    privacy: PrivacyService
    audit: AuditTrail
    auth: ApiKeyAuthenticator
    signals: SignalService
    relational_state: RelationalStateService
    profiles: ProfileService
    people: PeopleService
    process: ProcessService
    turns: TurnService
    ingestion: IngestionService
    consumer: InteractionConsumer
    edges: EdgeRepository
    filter_decisions: FilterDecisionService
    pipeline: PipelineRunner
    pipeline_trigger: PipelineTrigger | None
    graph: GraphServices
    sessions: SessionService
    governance: GovernanceJobs
    idempotency: IdempotentRequests
    dead_letters: DeadLetters
    keyed_writes: KeyedWrites
    webhooks: WebhookServices
    users: UserDirectory
    user_export: UserExport
    user_import: UserImport
    assistants: AssistantDirectory


def _in_flight(trigger: PipelineTrigger | None) -> RunsInFlight | None:
    """The trigger's runs in this process, when it keeps any (the in-process one); Step Functions' are elsewhere."""
    return trigger if isinstance(trigger, InProcessPipeline) else None


def build_services(
    settings: Settings,
    *,
    clock: Clock | None = None,
    store: MemoryStore | None = None,
    index: VectorIndex | None = None,
    embedder: Embedder | None = None,
    items: ItemStore | None = None,
    language_model: LanguageModel | None = None,
    bus: EventBus | None = None,
    pipeline_trigger: PipelineTrigger | None = None,
) -> Services:
    """Any adapter passed in is used as is (tests, tools); the rest are built from the settings. Read top to bottom:
    adapters, the memory writer, what follows an interaction, the pipeline, then the use cases over them."""
    from rapport.adapters.local.vader import VaderSentimentScorer
    from rapport.composition.embedders import build_embedder

    settings = resolve_secrets(settings)
    clock = clock or SystemClock()
    store = store or build_store(settings)
    # Both store adapters also implement ItemStore on the same table or file; a test may pass its own.
    items = items or cast(ItemStore, store)
    embedder = embedder or build_embedder(settings)
    index = index or build_index(settings, embedder.dimensions)
    bus = bus or build_event_bus(settings)
    language_model = language_model or build_language_model(settings, embedder)

    graph_built = build_graph_hooks(settings, clock, store, items, index, bus)
    graph_hooks = graph_built.hooks
    webhooks = build_webhooks(settings, items=items, clock=clock)
    assistants = AssistantDirectory(items, index, clock)
    memories = MemoryService(
        store, index, embedder, settings, clock, graph=graph_hooks, events=webhooks.events, assistants=assistants
    )
    recall = Recall(store, index, embedder, settings, clock, graph=graph_hooks)

    signals = SignalService(build_signal_detector(language_model))
    state = RelationalStateService(items, settings, clock, assistants=assistants)
    profiles = ProfileService(items, settings, clock)
    people = PeopleService(items, VaderSentimentScorer(), settings, clock)
    sessions = SessionService(items, settings, clock)
    governance = GovernanceJobs(
        store=store,
        items=items,
        memories=memories,
        index=index,
        sessions=sessions,
        settings=settings,
        clock=clock,
        language_model=language_model,
    )
    pipeline = build_pipeline(
        settings=settings,
        clock=clock,
        store=store,
        items=items,
        index=index,
        embedder=embedder,
        memories=memories,
        language_model=language_model,
        events=webhooks.events,
    )
    interactions = InteractionService(
        store=store,
        items=items,  # must be the store's own: the followers' writes are committed with the history item
        memories=memories,
        signals=signals,
        followers=[state, profiles, people],
        derived=[sessions, governance],
        pipeline=pipeline_trigger or pipeline.trigger,
        runs=pipeline.runs,
        settings=settings,
        clock=clock,
        dead_letters=pipeline.dead_letters,
        ahead=sentences_ahead(settings, language_model) if pipeline_trigger is None else None,
    )
    turns = TurnService(items=items, interactions=interactions, settings=settings, clock=clock)
    # Every keyed write (the API's routes, the ingest paths) goes through one Powertools Idempotency scheme.
    idempotency = IdempotentRequests(build_idempotency_records(store, items), settings, clock)
    keyed_writes = KeyedWrites(once=idempotency, interactions=interactions, memories=memories, store=store)
    process = ProcessService(
        memories=memories,
        recall=recall,
        interactions=interactions,
        turns=turns,
        once=idempotency,
        signals=signals,
        state=state,
        profiles=profiles,
        people=people,
        language_model=language_model,
        settings=settings,
        clock=clock,
    )
    consumer = build_consumer(settings, writes=keyed_writes)
    subscribe_in_process(bus, consumer)
    return Services(
        settings=settings,
        clock=clock,
        store=store,
        items=items,
        index=index,
        embedder=embedder,
        language_model=language_model,
        bus=bus,
        memories=memories,
        recall=recall,
        interactions=interactions,
        privacy=PrivacyService(
            store,
            index,
            settings,
            clock,
            events=webhooks.events,
            in_flight=_in_flight(pipeline_trigger or pipeline.trigger),
        ),
        audit=AuditTrail(store, settings, clock),
        auth=ApiKeyAuthenticator(store, clock, record_use=True),
        signals=signals,
        relational_state=state,
        profiles=profiles,
        people=people,
        process=process,
        turns=turns,
        ingestion=build_ingestion(settings, store=store, items=items, clock=clock, bus=bus),
        consumer=consumer,
        edges=pipeline.edges,
        filter_decisions=pipeline.filter_decisions,
        pipeline=pipeline.runner,
        pipeline_trigger=pipeline_trigger or pipeline.trigger,
        graph=build_graph_services(settings, clock, items, memories, graph_built),
        sessions=sessions,
        governance=governance,
        idempotency=idempotency,
        dead_letters=pipeline.dead_letters,
        keyed_writes=keyed_writes,
        webhooks=webhooks,
        users=UserDirectory(store, ProfileRepository(items), settings),
        user_export=UserExport(store, items, clock),
        user_import=UserImport(store, items, memories, settings, clock),
        assistants=assistants,
    )


@functools.cache
def services_from_environment() -> Services:
    """The process-wide services of a Lambda container, built on first use, never at import."""
    return build_services(Settings())
