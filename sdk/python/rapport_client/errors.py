"""The exceptions the client raises: one per kind of answer a caller handles differently, all under `RapportError`."""

from __future__ import annotations

from typing import Any

import httpx


class RapportError(Exception):
    """Any failure of a call. `status` is the HTTP status (None when no answer came), `error` the API's stable
    machine-readable code (e.g. `invalid_input`), `message` what to fix, `details` the API's extra data (per-field
    validation errors, a batch's per-item results)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error: str = "error",
        details: Any = None,
        response: httpx.Response | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error = error
        self.details = details
        self.response = response

    def __str__(self) -> str:
        if self.status is None:
            return f"{self.error}: {self.message}"
        return f"{self.status} {self.error}: {self.message}"


class RapportConnectionError(RapportError):
    """No answer: the connection failed or timed out, after every retry."""


class InvalidRequest(RapportError):
    """400: the request is wrong in a way its message explains (an empty content, an unknown memory type)."""


class Unauthorized(RapportError):
    """401: the API key is missing or unknown."""


class Forbidden(RapportError):
    """403: the key is known but lacks a scope the call needs (`error` is `forbidden`; the message names the
    scope), or API Gateway denied it. `required_scopes` and `missing_scopes` say which, when the API told."""

    @property
    def required_scopes(self) -> list[str]:
        return self._scopes("required_scopes")

    @property
    def missing_scopes(self) -> list[str]:
        return self._scopes("missing_scopes")

    def _scopes(self, name: str) -> list[str]:
        listed = self.details.get(name) if isinstance(self.details, dict) else None
        return [str(scope) for scope in listed] if isinstance(listed, list) else []


class NotFound(RapportError):
    """404: no such item for this tenant (another tenant's ids answer 404 too), or no such route."""


class Conflict(RapportError):
    """409: the request conflicts with the item's state, or the same Idempotency-Key is still being answered."""


class PayloadTooLarge(RapportError):
    """413: the body exceeds the API's limit."""


class UnprocessableEntity(RapportError):
    """422: the body or a parameter failed validation; `details` lists each field and why."""


class RateLimited(RapportError):
    """429: too many requests, after every retry; `retry_after` is the server's wait in seconds, when it gave one."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(RapportError):
    """5xx: the service or one of its dependencies failed; the API takes its writes back before answering so."""


_BY_STATUS: dict[int, type[RapportError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: UnprocessableEntity,
    429: RateLimited,
}


def error_of(response: httpx.Response, *, retry_after: float | None = None) -> RapportError:
    """The exception for an error answer. Rapport answers `{error, message, details?}`; API Gateway's own answers
    (throttling, a denied authorizer) carry only `message` or `Message`, and a proxy's may be no JSON at all."""
    code, message, details = _parse_body(response)
    kind = _BY_STATUS.get(response.status_code)
    if kind is None:
        kind = ServerError if response.status_code >= 500 else RapportError
    fields: dict[str, Any] = {"status": response.status_code, "error": code, "details": details, "response": response}
    if kind is RateLimited:
        return RateLimited(message, retry_after=retry_after, **fields)
    return kind(message, **fields)


def _parse_body(response: httpx.Response) -> tuple[str, str, Any]:
    fallback_code = response.reason_phrase.lower().replace(" ", "_") or "error"
    try:
        body = response.json()
    except ValueError:
        text = response.text.strip()
        return fallback_code, text[:500] or response.reason_phrase or f"HTTP {response.status_code}", None
    if not isinstance(body, dict):
        return fallback_code, str(body)[:500], None
    message = body.get("message") or body.get("Message") or response.reason_phrase or f"HTTP {response.status_code}"
    return str(body.get("error") or fallback_code), str(message), body.get("details")
