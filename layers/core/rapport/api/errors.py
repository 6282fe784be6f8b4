"""The one place where errors become HTTP responses: domain exceptions and validation errors to 4xx/5xx."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.depends import DependencyResolutionError
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)

from rapport.errors import (
    ConflictError,
    ForbiddenError,
    IdempotencyKeyReusedError,
    InvalidInputError,
    NotFoundError,
    RapportError,
    RateLimitedError,
    RequestInProgressError,
    StorageError,
    UnauthorizedError,
    UpstreamError,
)

logger = Logger(service="rapport-api", child=True)

_STATUS: list[tuple[type[RapportError], int, str]] = [
    (NotFoundError, 404, "not_found"),
    (InvalidInputError, 400, "invalid_input"),
    (IdempotencyKeyReusedError, 422, "idempotency_key_reused"),
    (RequestInProgressError, 409, "request_in_progress"),  # before ConflictError, which it is a kind of
    (ConflictError, 409, "conflict"),
    (UnauthorizedError, 401, "unauthorized"),
    (ForbiddenError, 403, "forbidden"),
    (RateLimitedError, 429, "rate_limited"),
    (UpstreamError, 502, "upstream_unavailable"),
    (StorageError, 503, "storage_unavailable"),
]


def error_response(status: int, code: str, message: str, details: Any = None) -> Response:
    body: dict[str, Any] = {"error": code, "message": message}
    if details is not None:
        body["details"] = details
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body)


def _describe(error: dict[str, Any]) -> str:
    location = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
    return f"{location}: {error.get('msg', 'invalid')}"


def register_error_handlers(app: ApiGatewayResolver) -> None:
    @app.exception_handler(RequestValidationError)
    def on_validation_error(exc: RequestValidationError) -> Response:
        errors = list(exc.errors())
        if any(tuple(e.get("loc", ()))[:1] == ("response",) for e in errors):
            # Powertools raises this error for a route's answer too: that is our bug, never the client's 422.
            logger.error("a response broke its declared model", extra={"errors": errors[:5]})
            return error_response(500, "internal_error", "an internal error occurred")
        invalid = next((e for e in errors if e.get("type") == "json_invalid"), None)
        if invalid is not None:
            reason = (invalid.get("ctx") or {}).get("error")
            message = (
                f"the request body is not valid JSON: {reason}" if reason else "the request body is not valid JSON"
            )
            return error_response(400, "malformed_json", message)
        details = [{"field": ".".join(map(str, e.get("loc", ()))), "message": e.get("msg")} for e in errors]
        message = "; ".join(_describe(e) for e in errors[:5])
        return error_response(422, "validation_error", message, details)

    @app.exception_handler(RequestUnsupportedContentType)
    def on_unsupported_content_type(exc: RequestUnsupportedContentType) -> Response:
        reason = next((e.get("msg") for e in exc.errors() if e.get("msg")), None)
        detail = f" ({reason})" if reason else ""
        return error_response(
            415, "unsupported_media_type", f"the body must be JSON{detail}: send 'Content-Type: application/json'"
        )

    @app.exception_handler(RapportError)
    def on_domain_error(exc: RapportError) -> Response:
        return _domain_error(exc)

    @app.exception_handler(DependencyResolutionError)
    def on_dependency_error(exc: DependencyResolutionError) -> Response:
        # Powertools wraps what a dependency raised (an unknown key, a bad user id): answer for the original.
        cause = exc.__cause__
        if isinstance(cause, RapportError):
            return _domain_error(cause)
        logger.exception("dependency failed")
        return error_response(500, "internal_error", "an internal error occurred")

    @app.exception_handler(Exception)
    def on_unexpected(exc: Exception) -> Response:
        # Every use case takes its writes back before an unexpected error leaves it; the client may retry.
        logger.exception("unexpected error")
        return error_response(500, "internal_error", "an internal error occurred; nothing was stored, try again")

    @app.not_found
    def on_not_found(_: Exception) -> Response:
        event = app.current_event
        allowed = methods_allowed(app, event.path)
        if allowed:
            response = error_response(
                405,
                "method_not_allowed",
                f"{event.http_method} is not a method of {event.path}; it answers {', '.join(allowed)}",
            )
            response.headers["Allow"] = ", ".join(allowed)
            return response
        return error_response(404, "route_not_found", "no such route; see /v1/docs for the API")


def methods_allowed(app: ApiGatewayResolver, path: str) -> list[str]:
    """The methods some route of `app` answers at `path`: a request with another one is a 405 naming them, where
    Powertools would answer 404 as if the path did not exist."""
    stripped = app._remove_prefix(path)
    routes = app._static_routes + app._dynamic_routes
    return sorted({route.method for route in routes if route.rule.match(stripped)})


def _domain_error(exc: RapportError) -> Response:
    for kind, status, code in _STATUS:
        if isinstance(exc, kind):
            if status >= 500:
                logger.exception("dependency failure")
            # A domain error may carry data for the client (e.g. the valid relation types) beside its message.
            response = error_response(status, code, str(exc), getattr(exc, "details", None))
            if isinstance(exc, RequestInProgressError | RateLimitedError):
                response.headers["Retry-After"] = str(exc.retry_after_seconds)
            return response
    logger.exception("unmapped domain error")
    return error_response(500, "internal_error", "an internal error occurred")
