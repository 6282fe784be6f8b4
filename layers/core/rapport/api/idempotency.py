"""The HTTP side of keyed requests, for every write route: the `Idempotency-Key` header in, `Idempotent-Replayed` out.

A route hands `keyed(router, route, body)` to its use case and `replayed(router, answer)` back; the middleware
(installed once, in api/app.py) puts the header on the response. A replay answers with the original status and body
(read back from the store) and `Idempotent-Replayed: true`; a keyed request's first answer carries
`Idempotent-Replayed: false`; an unkeyed one no header. The errors (422 idempotency_key_reused, 409
request_in_progress with Retry-After) are mapped with the others, in api/errors.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver, Router

from rapport.services.idempotency import IDEMPOTENCY_HEADER, KeyedRequest, RemainingTime
from rapport.services.keyed_writes import Keyed

REPLAYED_HEADER = "Idempotent-Replayed"
_CONTEXT_KEY = "idempotent_replayed"


def keyed(router: Router, route: str, body: Any) -> KeyedRequest | None:
    """The request's key with what it asked (the body as parsed), or None when the client sent no key."""
    key = router.current_event.get_header_value(IDEMPOTENCY_HEADER, case_sensitive=False)
    if key is None:
        return None
    request = body.model_dump(mode="json") if callable(getattr(body, "model_dump", None)) else body
    return KeyedRequest(route=route, key=key, request=request)


def deadline(router: Router) -> RemainingTime | None:
    """The Lambda context, whose remaining time bounds how long a first attempt blocks its key (None locally)."""
    context = router.lambda_context
    return context if callable(getattr(context, "get_remaining_time_in_millis", None)) else None


def replayed(router: Router, answer: Keyed) -> Any:
    """Note for the middleware whether this answer is a replay, and hand the use case's value on."""
    if answer.replayed is not None:
        router.append_context(**{_CONTEXT_KEY: answer.replayed})
    return answer.value


def replayed_header(app: ApiGatewayResolver, next_middleware: Callable[[ApiGatewayResolver], Response]) -> Response:
    response = next_middleware(app)
    flag = app.context.get(_CONTEXT_KEY)
    if flag is not None:
        response.headers[REPLAYED_HEADER] = "true" if flag else "false"
    return response
