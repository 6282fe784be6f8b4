"""The REST resolver both the Lambda function and the local server run, made safe to answer several requests at once.

Powertools keeps the request being answered (its event, Lambda context and routing context) in attributes of the
resolver, and `resolve` writes the event into a class attribute shared by every resolver of the process: right in
Lambda, where a process answers one request at a time, but two requests of the local server's thread pool would read
each other's event, tenant included. Here each request's state lives in a context variable of the thread answering
it, and each route's middleware chain is built once before the first request (Powertools builds it lazily on a
route's first call, and two threads building it at once would wrap the route in its middlewares twice).

This is the same design as Powertools' own `HttpResolverLocal` (per-request state in a ContextVar), applied to the
synchronous REST resolver instead of its asyncio one, whose validation middleware blocks an executor worker while
waiting for another.

Bodies are read stricter than Powertools reads them: as UTF-8 JSON or refused (a form or multipart body is a 415,
`api/bodies.py`), and parsed by `rapport.strict_json` (standard JSON within bounds), so no body reaches a route as
something it cannot store or answer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, cast

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.api_gateway import MiddlewareFrame
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport import strict_json
from rapport.api.bodies import JsonOnlyRequestValidation


@dataclass
class _RequestState:
    event: BaseProxyEvent | None = None
    lambda_context: Any = None
    context: dict = field(default_factory=dict)


class ConcurrentRestResolver(APIGatewayRestResolver):
    def __init__(self, **kwargs: Any) -> None:
        self._startup_state = _RequestState()
        self._request_state: ContextVar[_RequestState | None] = ContextVar("rapport_request", default=None)
        self._stacks_built = False
        self._build_lock = threading.Lock()
        self._first_middlewares: list[Callable[[Any, NextMiddleware], Response]] = []
        kwargs.setdefault("json_body_deserializer", strict_json.loads)
        super().__init__(**kwargs)
        if hasattr(self, "_request_validation_middleware"):  # enable_validation: the first middleware of a route
            self._request_validation_middleware = JsonOnlyRequestValidation()

    def use_first(self, middleware: Callable[[Any, NextMiddleware], Response]) -> None:
        """A middleware of every route that runs before request validation (Powertools runs its own first): for a
        check that must answer before the body is read, such as whether the caller may call the route at all."""
        self._first_middlewares.append(middleware)

    @property
    def _state(self) -> _RequestState:
        return self._request_state.get() or self._startup_state

    @property  # type: ignore[override]
    def current_event(self) -> BaseProxyEvent:
        event = self._state.event
        if event is None:
            raise RuntimeError("no request is being resolved")
        return event

    @current_event.setter
    def current_event(self, value: BaseProxyEvent) -> None:
        self._state.event = value

    @property  # type: ignore[override]
    def lambda_context(self) -> LambdaContext:
        return cast(LambdaContext, self._state.lambda_context)

    @lambda_context.setter
    def lambda_context(self, value: LambdaContext) -> None:
        self._state.lambda_context = value

    @property  # type: ignore[override]
    def context(self) -> dict:
        return self._state.context

    @context.setter
    def context(self, value: dict) -> None:
        self._state.context = value

    def resolve(self, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:  # type: ignore[override]
        self._build_middleware_stacks()
        state = _RequestState(
            event=self._to_proxy_event(event),
            lambda_context=context,
            # What routers added to the context when they were included, as Powertools merges it at startup.
            context=self._startup_state.context.copy(),
        )
        token = self._request_state.set(state)
        try:
            return self._build_response(self._resolve())
        finally:
            self._request_state.reset(token)

    def _build_middleware_stacks(self) -> None:
        if self._stacks_built:
            return
        with self._build_lock:
            if self._stacks_built:
                return
            for route in self._static_routes + self._dynamic_routes:
                if not route._middleware_stack_built:
                    route._build_middleware_stack(router_middlewares=self._router_middlewares, app=self)
                    for middleware in reversed(self._first_middlewares):
                        route._middleware_stack = MiddlewareFrame(middleware, route._middleware_stack)
            self._stacks_built = True
