"""When a call is tried again, and after how long: exponential backoff with jitter, or the server's Retry-After."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

# Throttling and the gateway's "try again" answers; a 500 is not among them: it means the request itself failed
# (the API took its writes back), and sending it again would most likely fail the same way.
RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})
# A duplicate of a keyed write that is still being answered: the original's answer is worth waiting for.
IN_PROGRESS_ERROR = "request_in_progress"


@dataclass(frozen=True)
class RetryPolicy:
    """`max_retries` retries after the first attempt (0: none). Waits double from `initial_delay` up to `max_delay`,
    each drawn between half and all of that (jitter, so clients throttled together do not return together). A
    server's Retry-After is honoured as given, unless it asks for more than `max_retry_after` seconds: then the
    call fails at once (`RateLimited.retry_after` says how long), rather than blocking the caller that long."""

    max_retries: int = 2
    initial_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        if self.initial_delay < 0 or self.max_delay < 0 or self.max_retry_after < 0:
            raise ValueError("retry delays must be 0 or more")

    def backoff(self, retry: int) -> float:
        """The wait before retry number `retry` (0 for the first)."""
        cap = min(self.max_delay, self.initial_delay * (2**retry))
        return self.rng.uniform(cap / 2, cap)

    def delay_after_response(self, retry: int, response: httpx.Response, now: datetime | None = None) -> float | None:
        """Seconds to wait before sending again, or None: the answer stands (success, a final error, retries spent,
        or a Retry-After longer than the caller would wait)."""
        if retry >= self.max_retries or not is_retryable(response):
            return None
        wait = retry_after_seconds(response, now)
        if wait is None:
            return self.backoff(retry)
        return wait if wait <= self.max_retry_after else None

    def delay_after_error(self, retry: int) -> float | None:
        """Seconds to wait after a connection failure or a timeout, or None when the retries are spent."""
        return None if retry >= self.max_retries else self.backoff(retry)


def is_retryable(response: httpx.Response) -> bool:
    if response.status_code in RETRYABLE_STATUSES:
        return True
    if response.status_code == 409:
        try:
            body = response.json()
        except ValueError:
            return False
        return isinstance(body, dict) and body.get("error") == IN_PROGRESS_ERROR
    return False


def retry_after_seconds(response: httpx.Response, now: datetime | None = None) -> float | None:
    """Retry-After as seconds: either delta-seconds (`120`) or an HTTP date (`Wed, 21 Oct 2026 07:28:00 GMT`);
    None when absent or unreadable. A date in the past means now (0)."""
    value = response.headers.get("retry-after")
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


# Failures where the request may not have reached the server, or its answer was lost: safe to send again, since
# every write carries its Idempotency-Key. An unsupported scheme or a bad proxy setting fails the same way each time.
RETRYABLE_ERRORS: tuple[type[httpx.TransportError], ...] = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
)
