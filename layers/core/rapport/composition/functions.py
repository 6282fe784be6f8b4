"""One cached factory per Lambda function profile: each builds, on the function's first event (never at import), only
what that function uses, so a function's cold start creates no client it does not need."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, cast

# Each factory imports what it builds: a handler imports this module at init, and one function's adapters (boto3,
# opensearch-py, openai) or use cases must not weigh on another's cold start.
if TYPE_CHECKING:
    from rapport.composition.services import Services
    from rapport.graph.enrichment import Enricher
    from rapport.ingestion.consumer import InteractionConsumer
    from rapport.ingestion.service import IngestionService
    from rapport.jobs.fanout import FanOut
    from rapport.pipeline.redrive import PipelineStarter, Redrive
    from rapport.pipeline.runner import PipelineRunner
    from rapport.ports.work_queue import WorkQueue
    from rapport.sealing import Keyring
    from rapport.services.auth import ApiKeyAuthenticator
    from rapport.services.index_sync import IndexSync
    from rapport.services.webhook_deliveries import WebhookEvents
    from rapport.settings import Settings


def settings_from_environment(**overrides: object) -> Settings:
    """The settings of this process, read from its environment (each factory below is cached itself); a command
    line's options override what the environment says."""
    from rapport.settings import Settings

    return Settings(**overrides)  # type: ignore[arg-type]


def api_services() -> Services:
    """The REST API function: every use case."""
    from rapport.composition.services import services_from_environment

    return services_from_environment()


@functools.cache
def authenticator() -> ApiKeyAuthenticator:
    """The authorizer sits on every uncached request's path: the store only, no embedder or index client."""
    from rapport.composition.adapters import build_store
    from rapport.services.auth import ApiKeyAuthenticator

    return ApiKeyAuthenticator(build_store(settings_from_environment()))


@functools.cache
def webhook_ingestion() -> IngestionService:
    """The webhooks function: store (for claims), tenant secrets and the bus; no embedder, index or model clients."""
    from rapport.clock import SystemClock
    from rapport.composition.adapters import build_event_bus, build_store
    from rapport.composition.ingestion import build_ingestion
    from rapport.ports.items import ItemStore

    settings = settings_from_environment()
    store = build_store(settings)
    items = cast(ItemStore, store)
    return build_ingestion(settings, store=store, items=items, clock=SystemClock(), bus=build_event_bus(settings))


@functools.cache
def webhook_events() -> WebhookEvents:
    """The webhook delivery function: the store (endpoints, the log) and the queue its retries go back to."""
    from rapport.clock import SystemClock
    from rapport.composition.adapters import build_store
    from rapport.composition.webhooks import build_webhooks
    from rapport.ports.items import ItemStore

    settings = settings_from_environment()
    return build_webhooks(settings, items=cast(ItemStore, build_store(settings)), clock=SystemClock()).events


def interaction_consumer() -> InteractionConsumer:
    """The bus consumer records interactions: the whole write path."""
    from rapport.composition.services import services_from_environment

    return services_from_environment().consumer


def pipeline_steps() -> PipelineRunner:
    """The pipeline's step functions: the steps over the process-wide store and memory service."""
    from rapport.composition.services import services_from_environment

    return services_from_environment().pipeline


@functools.cache
def pipeline_starter() -> PipelineStarter:
    """The stream starter: Step Functions and the dead-letter queue only (no store, index or model clients)."""
    from rapport.adapters.aws.sqs_dead_letters import SqsDeadLetters
    from rapport.adapters.aws.step_functions import StepFunctionsPipeline
    from rapport.pipeline.redrive import PipelineStarter

    settings = settings_from_environment()
    if not settings.pipeline_state_machine_arn or not settings.pipeline_dead_letter_queue_url:
        raise ValueError(
            "the pipeline starter needs RAPPORT_PIPELINE_STATE_MACHINE_ARN and RAPPORT_PIPELINE_DEAD_LETTER_QUEUE_URL"
        )
    return PipelineStarter(
        StepFunctionsPipeline(settings.pipeline_state_machine_arn, region_name=settings.aws_region),
        SqsDeadLetters(settings.pipeline_dead_letter_queue_url, region_name=settings.aws_region),
    )


def redrive(**overrides: object) -> Redrive:
    """`rapport dlq replay`. In AWS (a state machine and its queue named): the SQS letters, re-driven through Step
    Functions, with no store, index or model client. Locally: the store's failed-run items, run in this process."""
    from rapport.composition.services import services_from_environment
    from rapport.pipeline.redrive import Redrive, StartedByTheTable

    settings = settings_from_environment(**overrides)
    if settings.pipeline_state_machine_arn and settings.pipeline_dead_letter_queue_url:
        from rapport.adapters.aws.sqs_dead_letters import SqsDeadLetters
        from rapport.adapters.aws.step_functions import StepFunctionsPipeline

        return Redrive(
            SqsDeadLetters(settings.pipeline_dead_letter_queue_url, region_name=settings.aws_region),
            StepFunctionsPipeline(settings.pipeline_state_machine_arn, region_name=settings.aws_region),
        )
    services = services_from_environment() if not overrides else _local_services(settings)
    if services.pipeline_trigger is None or isinstance(services.pipeline_trigger, StartedByTheTable):
        raise ValueError("nothing can run the pipeline here: set RAPPORT_PIPELINE=local, or name the state machine")
    return Redrive(services.dead_letters, services.pipeline_trigger)


def _local_services(settings: Settings) -> Services:
    from rapport.composition.services import build_services

    return build_services(settings)


def enricher() -> Enricher:
    from rapport.composition.services import services_from_environment

    return services_from_environment().graph.enricher


@functools.cache
def stream_keyring() -> Keyring | None:
    """What opens the sealed content of the table's stream records (the indexer): the store's own keys."""
    from rapport.composition.adapters import person_keyring

    return person_keyring(settings_from_environment())


@functools.cache
def index_sync() -> IndexSync:
    """The index sync: the index, and the store to read a memory's vector from (no embedder or model clients)."""
    from rapport.composition.adapters import build_index, build_store, index_dimensions
    from rapport.services.index_sync import IndexSync

    settings = settings_from_environment()
    return IndexSync(build_index(settings, index_dimensions(settings)), build_store(settings))


@functools.cache
def jobs_work_queue() -> WorkQueue:
    """The jobs producer's only dependency: no store, index or model clients."""
    from rapport.composition.adapters import build_work_queue

    return build_work_queue(settings_from_environment())


@functools.cache
def jobs_fan_out() -> FanOut:
    from rapport.composition.adapters import build_work_queue
    from rapport.composition.services import services_from_environment
    from rapport.jobs.fanout import FanOut

    services = services_from_environment()
    return FanOut(
        services.store,
        services.governance,
        build_work_queue(services.settings),
        page_size=services.settings.governance.fanout_page_size,
    )
