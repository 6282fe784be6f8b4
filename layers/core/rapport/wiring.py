"""Wiring: builds the adapters the settings ask for and the services over them, once per process (cold start)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import cast

from pydantic import SecretStr

from rapport.clock import Clock, SystemClock
from rapport.ports.embedder import Embedder
from rapport.ports.items import ItemStore
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import VectorIndex
from rapport.services.auth import ApiKeyAuthenticator
from rapport.services.interactions import InteractionService
from rapport.services.memories import MemoryService
from rapport.services.privacy import PrivacyService
from rapport.settings import Settings, StoreBackend, VectorBackend


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


def build_store(settings: Settings) -> MemoryStore:
    if settings.store is StoreBackend.DYNAMODB:
        from rapport.adapters.dynamodb_store import DynamoDbMemoryStore

        return DynamoDbMemoryStore(settings.table_name, region_name=settings.aws_region)
    from rapport.adapters.sqlite_store import SqliteMemoryStore

    return SqliteMemoryStore(settings.sqlite_path)


def build_index(settings: Settings, dimensions: int) -> VectorIndex:
    if settings.vector_backend is VectorBackend.OPENSEARCH:
        from rapport.adapters.opensearch_index import OpenSearchVectorIndex, build_opensearch_client

        if not settings.opensearch_url:
            raise ValueError("RAPPORT_VECTOR_BACKEND=opensearch needs RAPPORT_OPENSEARCH_URL")
        client = build_opensearch_client(
            settings.opensearch_url,
            region=settings.aws_region,
            service=settings.opensearch_service,
            sigv4=settings.opensearch_sigv4,
        )
        return OpenSearchVectorIndex(client, settings.opensearch_index, dimensions)
    from rapport.adapters.embedded_index import EmbeddedVectorIndex

    return EmbeddedVectorIndex(settings.embedded_index_path, dimensions)


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
) -> Services:
    """Any adapter passed in is used as is (tests, tools); the rest are built from the settings."""
    from rapport.adapters.embedders.factory import build_embedder

    settings = resolve_secrets(settings)
    clock = clock or SystemClock()
    store = store or build_store(settings)
    # Both store adapters also implement ItemStore on the same table/file; a test may pass its own.
    items = items or cast(ItemStore, store)
    embedder = embedder or build_embedder(settings)
    index = index or build_index(settings, embedder.dimensions)
    memories = MemoryService(store, index, embedder, settings, clock)
    return Services(
        settings=settings,
        clock=clock,
        store=store,
        items=items,
        index=index,
        embedder=embedder,
        memories=memories,
        interactions=InteractionService(store, memories, settings, clock),
        privacy=PrivacyService(store, index, settings, clock),
        auth=ApiKeyAuthenticator(store, clock),
    )


@functools.cache
def services_from_environment() -> Services:
    """The process-wide services of a Lambda container, built on first use, never at import."""
    return build_services(Settings())
