"""Wiring: builds the adapters the settings ask for and the services over them, once per process (cold start)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, cast

from pydantic import SecretStr

from rapport.clock import Clock, SystemClock
from rapport.composition.graph import GraphServices, build_graph_hooks, build_graph_services
from rapport.composition.ingestion import build_consumer, build_event_bus, build_ingestion, subscribe_in_process
from rapport.ingestion.consumer import InteractionConsumer
from rapport.ingestion.service import IngestionService
from rapport.jobs.governance import GovernanceJobs
from rapport.pipeline.runner import PipelineRunner
from rapport.ports.embedder import Embedder
from rapport.ports.event_bus import EventBus
from rapport.ports.items import ItemStore
from rapport.ports.language_model import LanguageModel
from rapport.ports.pipeline import PipelineTrigger
from rapport.ports.signals import SignalDetector
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import VectorIndex
from rapport.services.auth import ApiKeyAuthenticator
from rapport.services.edges import EdgeRepository
from rapport.services.filter_decisions import FilterDecisionService
from rapport.services.interactions import InteractionService
from rapport.services.memories import MemoryGraph, MemoryService
from rapport.services.people import PeopleService
from rapport.services.privacy import PrivacyService
from rapport.services.process import ProcessService
from rapport.services.profiles import ProfileService
from rapport.services.relational_state import RelationalStateService
from rapport.services.sessions import SessionService
from rapport.services.signals import SignalService
from rapport.settings import EmbedderKind, PipelineMode, Settings, StoreBackend, VectorBackend


@dataclass
class Services:
    settings: Settings
    clock: Clock
    store: MemoryStore
    items: ItemStore
    index: VectorIndex
    embedder: Embedder
    memories: MemoryService
    interactions: InteractionService
    privacy: PrivacyService
    auth: ApiKeyAuthenticator
    # relational state, signals, /v1/process and people (issue 4)
    language_model: LanguageModel | None
    signals: SignalService
    relational_state: RelationalStateService
    profiles: ProfileService
    people: PeopleService
    process: ProcessService
    # chat-platform ingestion (issue 5): signed routes -> bus -> consumer (the in-process bus calls it directly)
    bus: EventBus
    ingestion: IngestionService
    consumer: InteractionConsumer
    # ingestion pipeline (issue 3): the steps, where they run, the edges and filter decisions they write
    edges: EdgeRepository
    filter_decisions: FilterDecisionService
    pipeline: PipelineRunner
    pipeline_trigger: PipelineTrigger | None
    # relationships, enrichment, recall expansion, shared knowledge (issue 7)
    graph: GraphServices
    # working memory and the governance jobs: decay, compression, consolidation, tiers, retention (issue 8)
    sessions: SessionService
    governance: GovernanceJobs


def build_store(settings: Settings) -> MemoryStore:
    if settings.store is StoreBackend.DYNAMODB:
        from rapport.adapters.dynamodb.store import DynamoDbMemoryStore

        return DynamoDbMemoryStore(settings.table_name, region_name=settings.aws_region)
    from rapport.adapters.local.sqlite_store import SqliteMemoryStore

    return SqliteMemoryStore(settings.sqlite_path)


def build_index(settings: Settings, dimensions: int) -> VectorIndex:
    if settings.vector_backend is VectorBackend.OPENSEARCH:
        from rapport.adapters.opensearch.index import OpenSearchVectorIndex, build_opensearch_client

        if not settings.opensearch_url:
            raise ValueError("RAPPORT_VECTOR_BACKEND=opensearch needs RAPPORT_OPENSEARCH_URL")
        client = build_opensearch_client(
            settings.opensearch_url,
            region=settings.aws_region,
            service=settings.opensearch_service,
            sigv4=settings.opensearch_sigv4,
        )
        return OpenSearchVectorIndex(client, settings.opensearch_index, dimensions)
    from rapport.adapters.local.embedded_index import EmbeddedVectorIndex

    return EmbeddedVectorIndex(settings.embedded_index_path, dimensions)


def index_dimensions(settings: Settings) -> int:
    """The embedding width the settings imply, without building the embedder (no model load, no API key): what the
    indexer Lambda and `rapport reindex` need to open the index."""
    if settings.embedder is EmbedderKind.HASHING:
        return settings.hashing_dimensions
    if settings.embedder is EmbedderKind.MINILM or (
        settings.embedder is EmbedderKind.AUTO
        and settings.openai_api_key is None
        and not settings.openai_api_key_secret_arn
    ):
        from rapport.adapters.local.minilm import MiniLmEmbedder

        return MiniLmEmbedder().dimensions  # constructing it loads nothing
    return settings.embedding_dimensions


def resolve_secrets(settings: Settings) -> Settings:
    """Fetch the OpenAI key from Secrets Manager when only its ARN is configured (the AWS deployment)."""
    if settings.openai_api_key is not None or not settings.openai_api_key_secret_arn:
        return settings
    from aws_lambda_powertools.utilities.parameters import get_secret

    key = get_secret(settings.openai_api_key_secret_arn, max_age=3600)
    return settings.model_copy(update={"openai_api_key": SecretStr(str(key))})


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
) -> Services:
    """Any adapter passed in is used as is (tests, tools); the rest are built from the settings."""
    from rapport.composition.embedders import build_embedder

    settings = resolve_secrets(settings)
    clock = clock or SystemClock()
    store = store or build_store(settings)
    # Both store adapters also implement ItemStore on the same table/file; a test may pass its own.
    items = items or cast(ItemStore, store)
    embedder = embedder or build_embedder(settings)
    index = index or build_index(settings, embedder.dimensions)
    bus = bus or build_event_bus(settings)
    graph_hooks = build_graph_hooks(settings, clock, store, items, index, bus)
    memories = MemoryService(store, index, embedder, settings, clock, graph=graph_hooks)
    language_model = language_model or _language_model(settings)
    interactions = InteractionService(store, memories, settings, clock)
    pipeline = _pipeline_services(
        settings, clock, store, items, index, embedder, memories, language_model, graph=graph_hooks
    )
    interactions.set_pipeline(pipeline["pipeline_trigger"])
    relational = _relational_services(settings, clock, items, memories, interactions, language_model)
    consumer = build_consumer(settings, items=items, clock=clock, interactions=interactions)
    subscribe_in_process(bus, consumer)
    return Services(
        settings=settings,
        clock=clock,
        store=store,
        items=items,
        index=index,
        embedder=embedder,
        memories=memories,
        interactions=interactions,
        privacy=PrivacyService(store, index, settings, clock),
        auth=ApiKeyAuthenticator(store, clock),
        language_model=language_model,
        **relational,
        bus=bus,
        ingestion=build_ingestion(settings, items=items, clock=clock, bus=bus),
        consumer=consumer,
        **pipeline,
        graph=build_graph_services(settings, clock, items, memories, graph_hooks),
        **_governance_services(settings, clock, store, items, index, memories, interactions, language_model),
    )


def _governance_services(
    settings: Settings,
    clock: Clock,
    store: MemoryStore,
    items: ItemStore,
    index: VectorIndex,
    memories: MemoryService,
    interactions: InteractionService,
    language_model: LanguageModel | None,
) -> dict[str, Any]:
    """After each recorded interaction: the session's working memory, then the plan's retention cap (issue 8)."""
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
    interactions.add_listener(sessions.on_interaction)
    interactions.add_listener(governance.after_interaction)
    return {"sessions": sessions, "governance": governance}


def _language_model(settings: Settings) -> LanguageModel:
    from rapport.composition.language_models import build_language_model

    return build_language_model(settings)


def _pipeline_services(
    settings: Settings,
    clock: Clock,
    store: MemoryStore,
    items: ItemStore,
    index: VectorIndex,
    embedder: Embedder,
    memories: MemoryService,
    language_model: LanguageModel,
    *,
    graph: MemoryGraph | None,
) -> dict[str, Any]:
    """The pipeline's steps over this process's adapters, and the trigger the settings ask for. The rule-based
    model stands in when the configured model's answers do not validate."""
    from rapport.composition.language_models import build_rules_model
    from rapport.pipeline.context import PipelineContext
    from rapport.pipeline.runs import PipelineRunRepository
    from rapport.services.filter_decisions import FilterDecisionRepository

    edges = EdgeRepository(items)
    decisions = FilterDecisionRepository(items)
    ctx = PipelineContext(
        settings=settings,
        clock=clock,
        store=store,
        items=items,
        index=index,
        embedder=embedder,
        memories=memories,
        edges=edges,
        decisions=decisions,
        runs=PipelineRunRepository(items, clock),
        model=language_model,
        fallback=None if language_model.name == "rules" else build_rules_model(settings),
        graph=graph,
    )
    runner = PipelineRunner(ctx)
    trigger: PipelineTrigger | None = None
    if settings.pipeline is PipelineMode.LOCAL:
        from rapport.pipeline.in_process import InProcessPipeline

        trigger = InProcessPipeline(runner)
    elif settings.pipeline is PipelineMode.STEP_FUNCTIONS:
        from rapport.adapters.aws.step_functions import StepFunctionsPipeline

        if not settings.pipeline_state_machine_arn:
            raise ValueError("RAPPORT_PIPELINE=step_functions needs RAPPORT_PIPELINE_STATE_MACHINE_ARN")
        trigger = StepFunctionsPipeline(settings.pipeline_state_machine_arn, region_name=settings.aws_region)
    return {
        "edges": edges,
        "filter_decisions": FilterDecisionService(decisions, store, memories, edges, settings, clock),
        "pipeline": runner,
        "pipeline_trigger": trigger,
    }


def _signal_detector(language_model: LanguageModel | None) -> SignalDetector:
    """The language model reads signals when a real one is configured; the rule-based one has no rules for
    them, so VADER and the signal rules answer instead."""
    from rapport.adapters.local.vader import RuleSignalDetector
    from rapport.services.model_signals import LanguageModelSignalDetector

    if language_model is None or language_model.name == "rules":
        return RuleSignalDetector()
    return LanguageModelSignalDetector(language_model)


def _relational_services(
    settings: Settings,
    clock: Clock,
    items: ItemStore,
    memories: MemoryService,
    interactions: InteractionService,
    language_model: LanguageModel | None,
) -> dict[str, Any]:
    """Signals are written on each interaction before it is stored; state, profile and people follow each
    recorded interaction, whichever route recorded it."""
    from rapport.adapters.local.vader import VaderSentimentScorer

    signals = SignalService(_signal_detector(language_model))
    state = RelationalStateService(items, settings, clock)
    profiles = ProfileService(items, settings, clock)
    people = PeopleService(items, VaderSentimentScorer(), settings, clock)
    interactions.add_enricher(signals.enrich)
    for listener in (state.record_interaction, profiles.record_interaction, people.record_interaction):
        interactions.add_listener(listener)
    process = ProcessService(
        memories=memories,
        interactions=interactions,
        signals=signals,
        state=state,
        profiles=profiles,
        people=people,
        language_model=language_model,
        settings=settings,
        clock=clock,
    )
    return {"signals": signals, "relational_state": state, "profiles": profiles, "people": people, "process": process}


@functools.cache
def services_from_environment() -> Services:
    """The process-wide services of a Lambda container, built on first use, never at import."""
    return build_services(Settings())
