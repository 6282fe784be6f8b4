"""Builds the adapters the settings ask for: each builder names the outside system it talks to, and none of them
opens a connection (clients are created on first use)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

from rapport.settings import EmbedderKind, IngestSecretBackend, PipelineMode, Settings, StoreBackend, VectorBackend

if TYPE_CHECKING:
    # Annotations only: a function that builds the store alone (the authorizer) must not import every port, nor
    # Powertools' idempotency (and boto3) through the idempotency port.
    from opensearchpy import OpenSearch

    from rapport.adapters.aws.cached_secret import CachedSecret
    from rapport.adapters.aws.tenant_credentials import TenantCredentials
    from rapport.clock import Clock
    from rapport.ports.dead_letters import DeadLetters
    from rapport.ports.embedder import Embedder
    from rapport.ports.event_bus import EventBus
    from rapport.ports.idempotency import IdempotencyRecords
    from rapport.ports.items import ItemStore
    from rapport.ports.language_model import LanguageModel
    from rapport.ports.pipeline import PipelineTrigger
    from rapport.ports.signals import SignalDetector
    from rapport.ports.store import MemoryStore
    from rapport.ports.tenant_secrets import TenantSecrets
    from rapport.ports.vector_index import VectorIndex
    from rapport.ports.work_queue import WorkQueue
    from rapport.sealing import Keyring


@functools.cache
def _tenant_credentials(role_arn: str, region: str | None) -> TenantCredentials:
    from rapport.adapters.aws.tenant_credentials import TenantCredentials

    return TenantCredentials(role_arn, region_name=region)


def tenant_credentials(settings: Settings) -> TenantCredentials | None:
    """The tenant access role's sessions when the deployment names the role (AWS); one per process, so the store
    and the index share each tenant's session. None locally: there the fences are the adapters' own checks."""
    if not settings.tenant_access_role_arn:
        return None
    return _tenant_credentials(settings.tenant_access_role_arn, settings.aws_region)


def build_store(settings: Settings) -> MemoryStore:
    """DynamoDB in AWS, SQLite locally; both also implement `ItemStore` on the same table or file."""
    if settings.store is StoreBackend.DYNAMODB:
        from rapport.adapters.dynamodb.store import DynamoDbMemoryStore

        return DynamoDbMemoryStore(
            settings.table_name,
            region_name=settings.aws_region,
            tenant_credentials=tenant_credentials(settings),
            keyring=person_keyring(settings),
        )
    from rapport.adapters.local.sqlite_store import SqliteMemoryStore

    return SqliteMemoryStore(settings.sqlite_path, keyring=person_keyring(settings))


def person_keyring(settings: Settings) -> Keyring | None:
    """The per-person data keys the store seals with: the keys table and KMS in AWS, a key directory locally; None
    when the settings turn them off (or, in AWS, name no keys table). One per process and place, so an erasure
    forgets the person's key for every store of the process at once."""
    if not settings.person_keys:
        return None
    if settings.store is StoreBackend.DYNAMODB:
        if not settings.person_keys_table or not settings.person_keys_kms_key_id:
            return None
        return _aws_keyring(
            settings.person_keys_table,
            settings.person_keys_kms_key_id,
            settings.aws_region,
            settings.tenant_access_role_arn,
            settings.person_key_cache_seconds,
        )
    return _local_keyring(settings.person_keys_dir.resolve(), settings.person_key_cache_seconds)


@functools.cache
def _local_keyring(directory: Path, ttl_seconds: float) -> Keyring:
    from rapport.adapters.local.person_keys import LocalPersonKeys
    from rapport.sealing import Keyring

    return Keyring(LocalPersonKeys(directory), ttl_seconds=ttl_seconds)


@functools.cache
def _aws_keyring(table: str, kms_key_id: str, region: str | None, role_arn: str | None, ttl: float) -> Keyring:
    from rapport.adapters.aws.kms_data_keys import KmsDataKeys
    from rapport.adapters.dynamodb.person_keys import DynamoDbPersonKeys
    from rapport.sealing import Keyring

    credentials = _tenant_credentials(role_arn, region) if role_arn else None
    data_keys = KmsDataKeys(kms_key_id, region_name=region, tenant_credentials=credentials)
    keys = DynamoDbPersonKeys(table, data_keys, region_name=region, tenant_credentials=credentials)
    return Keyring(keys, ttl_seconds=ttl)


def build_idempotency_records(store: MemoryStore, items: ItemStore) -> IdempotencyRecords:
    """Powertools' DynamoDB layer on the table in AWS (records beside the user's items); over the item store
    otherwise, so the local server runs the same Powertools code path."""
    from rapport.adapters.dynamodb.store import DynamoDbMemoryStore

    if isinstance(store, DynamoDbMemoryStore) and store is items:
        from rapport.adapters.dynamodb.idempotency import DynamoDbIdempotencyRecords

        return DynamoDbIdempotencyRecords(store.table_name, connect=lambda: store.client)
    from rapport.services.idempotency_items import ItemStoreIdempotencyRecords

    return ItemStoreIdempotencyRecords(items)


def build_index(settings: Settings, dimensions: int) -> VectorIndex:
    if settings.vector_backend is VectorBackend.OPENSEARCH:
        from rapport.adapters.opensearch.index import OpenSearchVectorIndex, build_opensearch_client

        if not settings.opensearch_url:
            raise ValueError("RAPPORT_VECTOR_BACKEND=opensearch needs RAPPORT_OPENSEARCH_URL")
        client = build_opensearch_client(
            settings.opensearch_url,
            region=settings.aws_region,
            sigv4=settings.opensearch_sigv4,
        )
        return OpenSearchVectorIndex(
            client, settings.opensearch_index, dimensions, tenant_client=_tenant_index_client(settings)
        )
    from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
    from rapport.adapters.local.thread_pools import size_thread_pools

    size_thread_pools()  # the embedded index searches with numpy's BLAS in this process
    return EmbeddedVectorIndex(settings.embedded_index_path, dimensions)


def _tenant_index_client(settings: Settings) -> OpenSearch | None:
    """A client signing as the tenant being served, for reads through the tenant's alias (docs/security.md); none
    for an unsigned cluster, which has no IAM to fence the alias with."""
    credentials = tenant_credentials(settings)
    if credentials is None or not settings.opensearch_sigv4:
        return None
    from rapport.adapters.aws.tenant_credentials import BoundTenantSigning
    from rapport.adapters.opensearch.index import build_opensearch_client

    assert settings.opensearch_url is not None
    return build_opensearch_client(
        settings.opensearch_url,
        region=settings.aws_region,
        credentials=BoundTenantSigning(credentials),
    )


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


class SecretsManagerKey(SecretStr):
    """The OpenAI key as read at cold start, with the secret it came from: clients re-read it as it rotates."""

    def __init__(self, value: str, source: CachedSecret) -> None:
        super().__init__(value)
        self.source = source


def resolve_secrets(settings: Settings) -> Settings:
    """Fetch the OpenAI key from Secrets Manager when only its ARN is configured (the AWS deployment). The value read
    now decides which models are built; the clients then read the current one through `openai_key_source`."""
    if settings.openai_api_key is not None or not settings.openai_api_key_secret_arn:
        return settings
    from rapport.adapters.aws.cached_secret import CachedSecret

    source = CachedSecret(settings.openai_api_key_secret_arn)
    return settings.model_copy(update={"openai_api_key": SecretsManagerKey(source(), source)})


def openai_key_source(settings: Settings, api_key: str) -> str | Callable[[], str]:
    """What the OpenAI client authenticates with: the secret's current value (cached, re-read every few minutes) when
    the key came from Secrets Manager, else the configured key as is."""
    key = settings.openai_api_key
    return key.source if isinstance(key, SecretsManagerKey) else api_key


def build_language_model(settings: Settings, embedder: Embedder | None = None) -> LanguageModel:
    from rapport.composition.language_models import build_language_model as build

    return build(settings, embedder)


def build_fallback_model(
    settings: Settings, model: LanguageModel, embedder: Embedder | None = None
) -> LanguageModel | None:
    """The rule-based model stands in when the configured model's answers do not validate; none for the rules."""
    from rapport.composition.language_models import build_rules_model

    return None if model.name == "rules" else build_rules_model(settings, embedder)


def build_signal_detector(language_model: LanguageModel) -> SignalDetector:
    """The language model reads signals when a real one is configured; the rule-based one has no rules for them, so
    VADER and the signal rules answer instead (and stand in when the model fails)."""
    from rapport.adapters.local.vader import RuleSignalDetector
    from rapport.domain.rules.model import RulesLanguageModel
    from rapport.services.model_signals import LanguageModelSignalDetector

    if language_model.name == "rules":
        # With the semantic layer, its emotion probe reads what the signal rules find no cue of.
        semantics = language_model.semantics if isinstance(language_model, RulesLanguageModel) else None
        return RuleSignalDetector(semantics=semantics)
    return LanguageModelSignalDetector(language_model, RuleSignalDetector())


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


def build_work_queue(settings: Settings) -> WorkQueue:
    if not settings.governance.job_queue_url:
        raise ValueError("the jobs need RAPPORT_GOVERNANCE_JOB_QUEUE_URL: the SQS queue their per-user work goes to")
    from rapport.adapters.aws.sqs import SqsWorkQueue

    return SqsWorkQueue(settings.governance.job_queue_url, region_name=settings.aws_region)


def build_dead_letters(settings: Settings, *, store: MemoryStore, items: ItemStore, clock: Clock) -> DeadLetters:
    """The pipeline's SQS dead-letter queue when one is named (AWS); else the store's failed-run items."""
    if settings.pipeline_dead_letter_queue_url:
        from rapport.adapters.aws.sqs_dead_letters import SqsDeadLetters

        return SqsDeadLetters(settings.pipeline_dead_letter_queue_url, region_name=settings.aws_region)
    from rapport.pipeline.failed_runs import FailedRuns

    return FailedRuns(items, store.list_tenants, clock)


def build_step_functions_trigger(settings: Settings) -> PipelineTrigger | None:
    """The AWS pipeline trigger when the settings ask for Step Functions; None otherwise (the local runner is built
    with the pipeline's steps, or no pipeline runs)."""
    if settings.pipeline is not PipelineMode.STEP_FUNCTIONS:
        return None
    from rapport.adapters.aws.step_functions import StepFunctionsPipeline

    if not settings.pipeline_state_machine_arn:
        raise ValueError("RAPPORT_PIPELINE=step_functions needs RAPPORT_PIPELINE_STATE_MACHINE_ARN")
    return StepFunctionsPipeline(settings.pipeline_state_machine_arn, region_name=settings.aws_region)
