"""Builds the OpenAI client the embedder and the LLM adapter share, with the SDK's own retries switched off."""

from __future__ import annotations

from collections.abc import Callable

import openai

PUBLIC_API_URL = "https://api.openai.com/v1"


def build_openai_client(api_key: str | Callable[[], str], base_url: str | None, timeout: float) -> openai.OpenAI:
    """An OpenAI client whose requests time out after `timeout` seconds and are never retried by the SDK.

    The adapters run their own bounded retry policy; leaving the SDK's on as well would multiply the attempts
    (and the worst-case latency) by its retry count. `base_url` comes from the settings (which read
    OPENAI_BASE_URL); None means the public API, passed explicitly so the SDK does not consult the environment
    behind the settings' back. A callable `api_key` is asked before every request (a key that rotates).
    """
    if not api_key:
        raise ValueError("an OpenAI API key is required: set OPENAI_API_KEY (or RAPPORT_OPENAI_API_KEY)")
    return openai.OpenAI(api_key=api_key, base_url=base_url or PUBLIC_API_URL, timeout=timeout, max_retries=0)
