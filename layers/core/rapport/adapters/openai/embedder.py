"""The OpenAI embeddings adapter: batched requests, bounded retries with backoff, L2-normalised vectors."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import openai
from openai.types import CreateEmbeddingResponse

from rapport.adapters.openai.retry import RetryPolicy, call_with_retries
from rapport.errors import UpstreamError

# Native sizes, needed only when `dimensions` is None (the model's full width, e.g. for ada-002 which cannot shorten).
_NATIVE_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
# The API accepts at most 2048 inputs per request.
_MAX_BATCH_SIZE = 2048


class OpenAiEmbedder:
    """Embeds through `client.embeddings.create`; the client must be built with `max_retries=0` (this owns retries)."""

    def __init__(
        self,
        client: openai.OpenAI,
        model: str = "text-embedding-3-small",
        dimensions: int | None = 1536,
        batch_size: int = 256,
        max_retries: int = 4,
        base_delay: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        max_delay: float = 8.0,
    ) -> None:
        if dimensions is None and model not in _NATIVE_DIMENSIONS:
            raise ValueError(f"dimensions must be given for model {model!r}: its native size is not known here")
        if not 1 <= batch_size <= _MAX_BATCH_SIZE:
            raise ValueError(f"batch_size must be between 1 and {_MAX_BATCH_SIZE}, got {batch_size}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self._client = client
        self._model = model
        self._requested_dimensions = dimensions
        self._dimensions = dimensions if dimensions is not None else _NATIVE_DIMENSIONS[model]
        self._batch_size = batch_size
        self._policy = RetryPolicy(max_retries=max_retries, base_delay=base_delay, max_delay=max_delay)
        self._sleep = sleep

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def name(self) -> str:
        # The width is part of the identity: a 3-small vector cut to 512 is not comparable with a 1536 one.
        return f"openai:{self._model}:{self._dimensions}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(self._embed_batch(texts[start : start + self._batch_size]))
        return vectors

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        response = self._create_with_retries(batch)
        # The API documents `index` as the input position; order by it rather than trusting the list order.
        data = sorted(response.data, key=lambda item: item.index)
        if [item.index for item in data] != list(range(len(batch))):
            raise UpstreamError(
                f"OpenAI returned embeddings for indexes {[item.index for item in data]} for {len(batch)} inputs"
            )
        vectors = []
        for item in data:
            if len(item.embedding) != self._dimensions:
                raise UpstreamError(
                    f"OpenAI returned a {len(item.embedding)}-dimensional vector, expected {self._dimensions}"
                )
            vectors.append(_normalised(item.embedding))
        return vectors

    def _create_with_retries(self, batch: list[str]) -> CreateEmbeddingResponse:
        def create() -> CreateEmbeddingResponse:
            if self._requested_dimensions is None:
                return self._client.embeddings.create(model=self._model, input=batch)
            return self._client.embeddings.create(model=self._model, input=batch, dimensions=self._requested_dimensions)

        try:
            return call_with_retries(create, what="embeddings", policy=self._policy, sleep=self._sleep)
        except openai.OpenAIError as exc:
            # A response the SDK could not parse, or similar: retrying the same request would not change it.
            raise UpstreamError(f"OpenAI embeddings request failed: {type(exc).__name__}") from exc


def _normalised(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:
        return [float(v) for v in vector]
    return [float(v) / norm for v in vector]
