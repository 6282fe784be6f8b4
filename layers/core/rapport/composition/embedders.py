"""Chooses and builds the embedder the settings ask for; nothing here loads a model or calls the network."""

from __future__ import annotations

from typing import assert_never

from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.adapters.local.minilm import MiniLmEmbedder
from rapport.adapters.openai.client import build_openai_client
from rapport.adapters.openai.embedder import OpenAiEmbedder
from rapport.composition.adapters import openai_key_source
from rapport.ports.embedder import Embedder
from rapport.settings import EmbedderKind, Settings


def build_embedder(settings: Settings) -> Embedder:
    """`auto` means OpenAI when an API key is configured and the local MiniLM model otherwise."""
    kind = settings.embedder
    api_key = _api_key(settings)
    if kind is EmbedderKind.HASHING:
        return HashingEmbedder(settings.hashing_dimensions)
    if kind is EmbedderKind.MINILM:
        return MiniLmEmbedder(precision=settings.embedding_precision)
    if kind is EmbedderKind.OPENAI:
        if api_key is None:
            raise ValueError("RAPPORT_EMBEDDER=openai needs an API key: set OPENAI_API_KEY (or RAPPORT_OPENAI_API_KEY)")
        return _openai_embedder(settings, api_key)
    if kind is EmbedderKind.AUTO:
        if api_key is not None:
            return _openai_embedder(settings, api_key)
        return MiniLmEmbedder(precision=settings.embedding_precision)
    assert_never(kind)


def _api_key(settings: Settings) -> str | None:
    # An exported-but-empty OPENAI_API_KEY is common in shells and CI; it means "no key", not "a key that is ''".
    if settings.openai_api_key is None:
        return None
    key = settings.openai_api_key.get_secret_value().strip()
    return key or None


def _openai_embedder(settings: Settings, api_key: str) -> OpenAiEmbedder:
    key = openai_key_source(settings, api_key)
    client = build_openai_client(key, settings.openai_base_url, settings.openai_timeout_seconds)
    return OpenAiEmbedder(
        client,
        model=settings.embedding_model,
        dimensions=settings.embedding_dimensions,
        max_retries=settings.openai_max_retries,
        max_delay=settings.openai_max_retry_delay_seconds,
    )
