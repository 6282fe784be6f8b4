"""The OpenAI embeddings adapter: batched requests, bounded retries with backoff, L2-normalised vectors."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import openai
from openai.types import CreateEmbeddingResponse

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
        self._max_retries = max_retries
        self._base_delay = base_delay
        self._max_delay = max_delay
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
        for attempt in range(self._max_retries + 1):
            try:
                if self._requested_dimensions is None:
                    return self._client.embeddings.create(model=self._model, input=batch)
                return self._client.embeddings.create(
                    model=self._model, input=batch, dimensions=self._requested_dimensions
                )
            except (openai.APIConnectionError, openai.APIStatusError) as exc:
                # APITimeoutError is an APIConnectionError: timeouts and dropped connections are both transient.
                transient = isinstance(exc, openai.APIConnectionError) or _is_transient_status(exc.status_code)
                if not transient:
                    raise UpstreamError(f"OpenAI embeddings request refused: {_describe(exc)}") from exc
                if attempt == self._max_retries:
                    raise UpstreamError(
                        f"OpenAI embeddings failed after {attempt + 1} attempts: {_describe(exc)}"
                    ) from exc
                self._sleep(self._delay(attempt, exc))
            except openai.OpenAIError as exc:
                # A response the SDK could not parse, or similar: retrying the same request would not change it.
                raise UpstreamError(f"OpenAI embeddings request failed: {type(exc).__name__}") from exc
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _delay(self, attempt: int, exc: openai.APIError) -> float:
        if isinstance(exc, openai.APIStatusError):
            retry_after = _retry_after_seconds(exc.response.headers)
            if retry_after is not None:
                # The server knows when capacity returns; the cap keeps a request inside its caller's deadline.
                return min(retry_after, self._max_delay)
        # Exponential backoff with "equal jitter": half fixed, half random. The fixed half keeps successive delays
        # growing; the random half spreads out concurrent callers that failed together.
        ceiling = min(self._base_delay * 2**attempt, self._max_delay)
        return ceiling / 2 + random.uniform(0, ceiling / 2)


def _is_transient_status(status: int) -> bool:
    return status == 429 or status >= 500


def _retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` (OpenAI's) or `Retry-After` (seconds or an HTTP date); None if absent."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def _describe(exc: openai.APIError) -> str:
    # Status or error kind only: the API shows this message to callers, and OpenAI's own text can name the
    # (masked) key or account. The full error stays on `__cause__` for the logs.
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}"
    return type(exc).__name__


def _normalised(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:
        return [float(v) for v in vector]
    return [float(v) / norm for v in vector]
