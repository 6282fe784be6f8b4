"""Executing a `Call` over HTTP, with retries: the request is built once (so its Idempotency-Key is the same on
every attempt), sent, and sent again while the retry policy says so. The decisions live in `Attempts`; the sync
and async runners differ only in how they send and how they wait."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import httpx

from rapport_client._calls import Call, Page
from rapport_client._retry import RETRYABLE_ERRORS, RetryPolicy, retry_after_seconds
from rapport_client._version import __version__
from rapport_client.errors import RapportConnectionError, error_of

T = TypeVar("T")

IDEMPOTENCY_HEADER = "Idempotency-Key"


@dataclass(frozen=True)
class Connection:
    """What every request of one client shares."""

    base_url: str
    api_key: str
    retry: RetryPolicy
    agent_id: str | None = None  # the assistant a call names when it names none itself (None: the server's default)

    def build(self, http: httpx.Client | httpx.AsyncClient, call: Call[Any]) -> httpx.Request:
        call = call.for_agent(self.agent_id)
        headers = {
            "Authorization": f"Bearer {self.api_key}",
            "Accept": "application/json",
            "User-Agent": f"rapport-client-python/{__version__}",
        }
        if call.is_write:
            headers[IDEMPOTENCY_HEADER] = call.idempotency_key or str(uuid.uuid4())
        if call.content is not None:
            headers["Content-Type"] = call.content_type or "application/octet-stream"
            return http.build_request(
                call.method, self.base_url + call.path, params=call.query(), content=call.content, headers=headers
            )
        return http.build_request(
            call.method, self.base_url + call.path, params=call.query(), json=call.body, headers=headers
        )


class Attempts:
    """The retry decisions of one call: after each answer or failure, either the seconds to wait before the next
    attempt, or the end (the answer parsed, or the exception raised)."""

    def __init__(self, connection: Connection, call: Call[Any], request: httpx.Request) -> None:
        self.policy = connection.retry
        self.call = call
        self.request = request
        self.retries = 0

    def after_response(self, response: httpx.Response) -> float | None:
        """The wait before sending again, or None: `answer(response)` is final."""
        delay = self.policy.delay_after_response(self.retries, response)
        if delay is not None:
            self.retries += 1
        return delay

    def after_error(self, exc: httpx.TransportError) -> float:
        """The wait before sending again; raises `RapportConnectionError` when the failure is final."""
        delay = self.policy.delay_after_error(self.retries) if isinstance(exc, RETRYABLE_ERRORS) else None
        if delay is None:
            tries = f" after {self.retries + 1} attempts" if self.retries else ""
            raise RapportConnectionError(
                f"{self.request.method} {self.request.url} got no answer{tries}: {type(exc).__name__}: {exc}",
                error="connection_error",
            ) from exc
        self.retries += 1
        return delay

    def answer(self, response: httpx.Response) -> Any:
        call = self.call
        if response.is_success or (call.absent_means_done and self.retries > 0 and response.status_code == 404):
            return call.parse(response)
        raise error_of(response, retry_after=retry_after_seconds(response))


class SyncRunner:
    def __init__(self, connection: Connection, http: httpx.Client) -> None:
        self.connection = connection
        self.http = http
        self.sleep: Callable[[float], None] = time.sleep

    def call(self, call: Call[T]) -> T:
        request = self.connection.build(self.http, call)
        attempts = Attempts(self.connection, call, request)
        while True:
            try:
                response = self.http.send(request)
            except httpx.TransportError as exc:
                self.sleep(attempts.after_error(exc))
                continue
            delay = attempts.after_response(response)
            if delay is None:
                return cast(T, attempts.answer(response))
            response.close()
            self.sleep(delay)

    def iterate(self, build: Callable[..., Call[Page[T]]], args: Any, kwargs: dict[str, Any]) -> Iterator[T]:
        # A generator: nothing is fetched until the first item is asked for, and each page only when reached.
        while True:
            current = self.call(build(*args, **kwargs))
            yield from current.items
            if not current.next_cursor:
                return
            kwargs = {**kwargs, "cursor": current.next_cursor}


class AsyncRunner:
    def __init__(self, connection: Connection, http: httpx.AsyncClient) -> None:
        self.connection = connection
        self.http = http
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    async def call(self, call: Call[T]) -> T:
        request = self.connection.build(self.http, call)
        attempts = Attempts(self.connection, call, request)
        while True:
            try:
                response = await self.http.send(request)
            except httpx.TransportError as exc:
                await self.sleep(attempts.after_error(exc))
                continue
            delay = attempts.after_response(response)
            if delay is None:
                return cast(T, attempts.answer(response))
            await response.aclose()
            await self.sleep(delay)

    async def iterate(self, build: Callable[..., Call[Page[T]]], args: Any, kwargs: dict[str, Any]) -> AsyncIterator[T]:
        while True:
            current = await self.call(build(*args, **kwargs))
            for item in current.items:
                yield item
            if not current.next_cursor:
                return
            kwargs = {**kwargs, "cursor": current.next_cursor}
