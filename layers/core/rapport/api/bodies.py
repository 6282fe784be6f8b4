"""Request bodies are single JSON objects: an array sent to a route that takes one object is refused, rather than
validated as its first element with the rest silently dropped."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware

from rapport.api.errors import error_response


def one_object_per_body(skip_paths: frozenset[str]) -> Callable[[ApiGatewayResolver, NextMiddleware], Response]:
    """A middleware for every route but `skip_paths` (the signed ingest routes: their raw body is checked by its
    signature first)."""

    def middleware(app: ApiGatewayResolver, next_middleware: NextMiddleware) -> Response:
        event = app.current_event
        if event.body and event.path not in skip_paths and _is_array(event.body, bool(event.is_base64_encoded)):
            return error_response(
                400, "invalid_input", "the body must be one JSON object, not an array: send one request per item"
            )
        return next_middleware(app)

    return middleware


def _is_array(body: str, base64_encoded: bool) -> bool:
    """JSON text that starts with `[` is an array: no need to parse the body here as well as in the route."""
    try:
        head = base64.b64decode(body[:1024]) if base64_encoded else body[:1024].encode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return False  # not base64 after all: the route's validation answers for it
    return head.lstrip().startswith(b"[")
