"""What a request body must be before any route reads it: JSON by its media type, UTF-8 text, and one object.

Powertools' request validation reads a body by its `Content-Type`: JSON, a form, or multipart (whose parser raises
an unwrapped error for a missing boundary), and decodes a base64 body as UTF-8 without handling bytes that are not.
No route here takes a form, so `JsonOnlyRequestValidation` (the resolver's validation middleware) refuses any
other media type with a 415 before parsing, and bytes that are not UTF-8 are malformed JSON (RFC 8259 JSON is
UTF-8), a 400. The rest of the parse is `rapport.strict_json`. An array sent to a route that takes one object is
refused by `one_object_per_body`, rather than validated as its first element with the rest silently dropped.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware
from aws_lambda_powertools.event_handler.middlewares.openapi_validation import OpenAPIRequestValidationMiddleware
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)

from rapport.api.errors import error_response

JSON = "application/json"
_SNIFFED = 1024


class JsonOnlyRequestValidation(OpenAPIRequestValidationMiddleware):
    """Powertools' request validation, reading a body only as UTF-8 JSON."""

    def _get_body(self, app: Any) -> dict[str, Any]:
        event = app.current_event
        # A body without a Content-Type is read as JSON, as Powertools does.
        media_type = (event.headers.get("content-type") or JSON).split(";")[0].strip().lower()
        if media_type != JSON:
            raise RequestUnsupportedContentType(
                "Unsupported content type",
                errors=[{"type": "unsupported_content_type", "loc": ("body",), "msg": f"not {media_type or 'empty'}"}],
            )
        if event.is_base64_encoded and event.body:
            try:
                base64.b64decode(event.body, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError) as exc:
                raise _malformed("the body is not UTF-8 text") from exc
        return super()._get_body(app)


def _malformed(reason: str) -> RequestValidationError:
    """The error Powertools raises for a body that does not parse, which `errors.py` answers as 400."""
    return RequestValidationError(
        [
            {
                "type": "json_invalid",
                "loc": ("body", 0),
                "msg": "JSON decode error",
                "input": {},
                "ctx": {"error": reason},
            }
        ]
    )


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
        head = base64.b64decode(body[:_SNIFFED]) if base64_encoded else body[:_SNIFFED].encode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return False  # not base64 after all: the route's validation answers for it
    return head.lstrip().startswith(b"[")
