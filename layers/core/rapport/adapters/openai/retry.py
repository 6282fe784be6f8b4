"""Bounded retries for OpenAI calls: transient failures (429, 5xx, timeouts) back off with jitter, others fail fast."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

import openai

from rapport.errors import UpstreamError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")

    def delay(self, attempt: int, exc: openai.APIError) -> float:
        if isinstance(exc, openai.APIStatusError):
            retry_after = retry_after_seconds(exc.response.headers)
            if retry_after is not None:
                # The server knows when capacity returns; the cap keeps a request inside its caller's deadline.
                return min(retry_after, self.max_delay)
        # Exponential backoff with "equal jitter": the fixed half keeps delays growing, the random half spreads out
        # callers that failed together (the two extractions of one interaction hit the same rate limit at once).
        ceiling = min(self.base_delay * 2**attempt, self.max_delay)
        return ceiling / 2 + random.uniform(0, ceiling / 2)


def call_with_retries(call: Callable[[], T], *, what: str, policy: RetryPolicy, sleep: Callable[[float], None]) -> T:
    """`call()` until it succeeds, a non-transient error, or the retries run out (then UpstreamError)."""
    for attempt in range(policy.max_retries + 1):
        try:
            return call()
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            # APITimeoutError is an APIConnectionError: timeouts and dropped connections are both transient.
            transient = isinstance(exc, openai.APIConnectionError) or is_transient_status(exc.status_code)
            if not transient:
                raise UpstreamError(f"OpenAI {what} request refused: {describe(exc)}") from exc
            if attempt == policy.max_retries:
                raise UpstreamError(f"OpenAI {what} failed after {attempt + 1} attempts: {describe(exc)}") from exc
            sleep(policy.delay(attempt, exc))
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover


def is_transient_status(status: int) -> bool:
    return status == 429 or status >= 500


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
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


def describe(exc: openai.APIError) -> str:
    # Status or error kind only: the API shows this message to callers, and OpenAI's own text can name the
    # (masked) key or account. The full error stays on `__cause__` for the logs.
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}"
    return type(exc).__name__
