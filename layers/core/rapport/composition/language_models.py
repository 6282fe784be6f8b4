"""Chooses the language model the settings ask for: OpenAI when a key is configured (or asked for), else rules."""

from __future__ import annotations

from typing import assert_never

from rapport.adapters.openai.client import build_openai_client
from rapport.adapters.openai.language_model import OpenAiLanguageModel
from rapport.adapters.openai.retry import RetryPolicy
from rapport.composition.adapters import openai_key_source
from rapport.domain.rules.model import RulesLanguageModel
from rapport.domain.semantics.matcher import semantic_layer
from rapport.ports.embedder import Embedder
from rapport.ports.language_model import LanguageModel
from rapport.settings import LlmKind, Settings


def build_language_model(settings: Settings, embedder: Embedder | None = None) -> LanguageModel:
    """`auto` means OpenAI when an API key is configured and the rule-based model otherwise. `embedder`: the
    process's own, which the rule-based model's semantic layer uses when it has a calibration for it."""
    kind = settings.llm
    api_key = _api_key(settings)
    if kind is LlmKind.RULES:
        return build_rules_model(settings, embedder)
    if kind is LlmKind.OPENAI:
        if api_key is None:
            raise ValueError("RAPPORT_LLM=openai needs an API key: set OPENAI_API_KEY (or RAPPORT_OPENAI_API_KEY)")
        return _openai(settings, api_key)
    if kind is LlmKind.AUTO:
        return _openai(settings, api_key) if api_key is not None else build_rules_model(settings, embedder)
    assert_never(kind)


def build_rules_model(settings: Settings, embedder: Embedder | None = None) -> RulesLanguageModel:
    """With the semantic layer when the settings allow it and the embedder has a calibration (MiniLM); the
    patterns alone otherwise (the hashing embedder of the tests, OpenAI's in AWS)."""
    semantics = semantic_layer(embedder) if settings.semantic_layer else None
    return RulesLanguageModel(max_memories=settings.pipeline_max_candidates, semantics=semantics)


def _api_key(settings: Settings) -> str | None:
    # An exported-but-empty OPENAI_API_KEY means "no key", as for the embedder.
    if settings.openai_api_key is None:
        return None
    return settings.openai_api_key.get_secret_value().strip() or None


def _openai(settings: Settings, api_key: str) -> OpenAiLanguageModel:
    key = openai_key_source(settings, api_key)
    client = build_openai_client(key, settings.openai_base_url, settings.openai_timeout_seconds)
    return OpenAiLanguageModel(
        client,
        settings.llm_model,
        temperature=settings.llm_temperature,
        retry=RetryPolicy(max_retries=settings.openai_max_retries, max_delay=settings.openai_max_retry_delay_seconds),
    )
