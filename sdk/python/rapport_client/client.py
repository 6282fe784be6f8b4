"""The two clients, `Rapport` (blocking) and `AsyncRapport` (asyncio): the same surface over one runner each."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Self, TypeVar

import httpx

from rapport_client._base_url import normalize_base_url
from rapport_client._resources import Async, Surface, Sync
from rapport_client._retry import RetryPolicy
from rapport_client._runner import AsyncRunner, Connection, SyncRunner
from rapport_client.errors import RapportError
from rapport_client.models import ProcessResult, TurnRecorded, TurnResult

DEFAULT_TIMEOUT = 60.0  # seconds; above API Gateway's 29 s, so in AWS the gateway's answer arrives first

ReplyModel = Callable[[str, str], str]
AsyncReplyModel = Callable[[str, str], str | Awaitable[str]]


def _connection(
    base_url: str, api_key: str, max_retries: int | None, retry: RetryPolicy | None, agent_id: str | None
) -> Connection:
    if not isinstance(api_key, str) or not api_key.strip():
        raise ValueError("api_key is empty: pass the key the server printed, or one from `rapport keys create`")
    if agent_id is not None and (not isinstance(agent_id, str) or not agent_id.strip()):
        raise ValueError("agent_id is empty: name the assistant, or pass None for the tenant's default one")
    policy = retry or RetryPolicy()
    if max_retries is not None:
        policy = dataclasses.replace(policy, max_retries=max_retries)
    return Connection(normalize_base_url(base_url), api_key.strip(), policy, agent_id)


class Rapport(Surface[Sync]):
    """A blocking client. `base_url` is the server (`http://127.0.0.1:8080`, with or without `/v1`) or the stack's
    `ApiUrl` output; `max_retries` bounds the retries of one call (see `RetryPolicy` for the delays). Pass
    `http_client` to use your own `httpx.Client` (proxies, TLS, a mock transport); it is then yours to close.
    `agent_id` names the tenant's assistant this client speaks for (each keeps its own relationship with a person);
    a call's own `agent_id=` overrides it, and None is the tenant's default assistant."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        max_retries: int | None = None,
        retry: RetryPolicy | None = None,
        http_client: httpx.Client | None = None,
        agent_id: str | None = None,
    ) -> None:
        connection = _connection(base_url, api_key, max_retries, retry, agent_id)
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.Client(timeout=timeout)
        self._runner_impl = SyncRunner(connection, self._http)
        super().__init__(self._runner_impl)

    @property
    def base_url(self) -> str:
        return self._runner_impl.connection.base_url

    def turn(
        self,
        user_id: str,
        message: str,
        reply: ReplyModel | None = None,
        *,
        channel: str | None = None,
        session_id: str | None = None,
        agent_id: str | None = None,
    ) -> TurnResult:
        """One conversational turn: `process` the user's message; when the server's model replied, that is the
        reply; else `reply(system_prompt, message)` (your model) answers and the answer is recorded with
        `turns.reply`, so the exchange becomes history and memories either way."""
        processed = self.process(user_id, message, channel=channel, session_id=session_id, agent_id=agent_id)
        if processed.reply is not None:
            return _replied_by_server(processed, processed.reply)
        model, turn_id = _reply_model(reply), _awaited_turn(processed)
        text = _checked_reply(model(processed.context.system_prompt, message))
        return _replied_by_client(processed, text, self.turns.reply(user_id, turn_id, text))

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


class AsyncRapport(Surface[Async]):
    """The asyncio client: the same surface as `Rapport`, each call awaited, each listing an async iterator."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
        max_retries: int | None = None,
        retry: RetryPolicy | None = None,
        http_client: httpx.AsyncClient | None = None,
        agent_id: str | None = None,
    ) -> None:
        connection = _connection(base_url, api_key, max_retries, retry, agent_id)
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.AsyncClient(timeout=timeout)
        self._runner_impl = AsyncRunner(connection, self._http)
        super().__init__(self._runner_impl)

    @property
    def base_url(self) -> str:
        return self._runner_impl.connection.base_url

    async def turn(
        self,
        user_id: str,
        message: str,
        reply: AsyncReplyModel | None = None,
        *,
        channel: str | None = None,
        session_id: str | None = None,
        agent_id: str | None = None,
    ) -> TurnResult:
        """As `Rapport.turn`; `reply` may be a plain function or a coroutine function."""
        processed = await self.process(user_id, message, channel=channel, session_id=session_id, agent_id=agent_id)
        if processed.reply is not None:
            return _replied_by_server(processed, processed.reply)
        model, turn_id = _reply_model(reply), _awaited_turn(processed)
        answer = model(processed.context.system_prompt, message)
        text = _checked_reply(await answer if inspect.isawaitable(answer) else answer)
        return _replied_by_client(processed, text, await self.turns.reply(user_id, turn_id, text))

    async def close(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    aclose = close

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()


def _replied_by_server(processed: ProcessResult, reply: str) -> TurnResult:
    return TurnResult(reply=reply, replied_by="server", process=processed, interaction_id=processed.interaction_id)


M = TypeVar("M", ReplyModel, AsyncReplyModel)


def _reply_model(reply: M | None) -> M:
    if reply is None:
        raise ValueError("the server has no model to reply with: pass reply=(system_prompt, message) -> str")
    return reply


def _awaited_turn(processed: ProcessResult) -> str:
    """The turn waiting for the client's reply."""
    if not processed.turn_id:
        raise RapportError(
            "the server answered no reply and no turn_id, so a reply cannot be recorded (it predates /v1/turns)",
            error="turn_unsupported",
        )
    return processed.turn_id


def _checked_reply(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"the reply model must return a str, not {type(text).__name__}")
    return text


def _replied_by_client(processed: ProcessResult, text: str, recorded: TurnRecorded) -> TurnResult:
    return TurnResult(
        reply=text,
        replied_by="client",
        process=processed,
        interaction_id=recorded.interaction.id,
        interaction=recorded.interaction,
        recorded=recorded,
    )
