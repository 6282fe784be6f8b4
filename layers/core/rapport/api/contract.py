"""The HTTP contract every route declares: the one error body, the security schemes, and the responses of a route
(`answers`). `openapi_document.py` serves the document they make."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aws_lambda_powertools.event_handler.openapi.models import APIKey, APIKeyIn, HTTPBearer, SecurityScheme
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel, Field

JSON = "application/json"
NDJSON = "application/x-ndjson"


class ErrorOut(BaseModel):
    """Every error answer, whoever gives it (a route, validation, the local gateway): branch on `error`, show
    `message`."""

    error: str = Field(
        description="A stable code: invalid_input, malformed_json, validation_error, unauthorized, forbidden, "
        "not_found, route_not_found, method_not_allowed, conflict, payload_too_large, unsupported_media_type, "
        "rate_limited, internal_error, upstream_unavailable, storage_unavailable; from the local server's transport "
        "also bad_request and request_timeout.",
        examples=["invalid_input"],
    )
    message: str = Field(
        description="What went wrong and what to fix, for a person.",
        examples=["limit must be between 1 and 100; got 0"],
    )
    details: Any | None = Field(
        None,
        description="Data beside the message, when there is some: the fields that failed validation "
        "(`[{field, message}]`), a batch's per-memory results, the valid relation types.",
    )


BEARER = "bearer"
API_KEY = "apiKey"
SECURITY_SCHEMES: dict[str, SecurityScheme] = {
    BEARER: HTTPBearer(description="`Authorization: Bearer <key>`. The key decides the tenant."),
    API_KEY: APIKey(
        name="x-api-key",
        in_=APIKeyIn.header,
        description="`x-api-key: <key>`, for clients that cannot set Authorization. In AWS the authorizer caches "
        "on the Authorization header, so prefer the bearer scheme there.",
    ),
}
# Either scheme will do. Every operation needs one unless it declares `security=PUBLIC`, as the API Gateway stack
# puts every method behind the authorizer unless it opts out.
AUTHENTICATED: list[dict[str, list[str]]] = [{BEARER: []}, {API_KEY: []}]
PUBLIC: list[dict[str, list[str]]] = [{}]

ERROR_DESCRIPTIONS = {
    400: "Invalid input, or a body that is not standard UTF-8 JSON (`invalid_input`, `malformed_json`): the message "
    "says what to fix. No NaN or Infinity, numbers of at most 100 digits, nesting at most 64 deep, no lone "
    "surrogate escapes.",
    401: "Missing or unknown API key (`unauthorized`); on the signed routes, a missing or wrong signature.",
    403: "The key lacks a scope this operation needs (`forbidden`): the message names it, `details` lists "
    "`required_scopes` and `missing_scopes`. Issue a key with it (`rapport keys create --scope …`).",
    404: "No such item for this tenant and end user (`not_found`): another tenant's id answers the same.",
    409: "The item changed concurrently while being written (`conflict`): retry the request.",
    413: "The body exceeds 1 MiB (`payload_too_large`).",
    415: "The body is not JSON (`unsupported_media_type`): send `Content-Type: application/json`.",
    422: "A field is missing, of the wrong type or unknown (`validation_error`): `details` lists each "
    "`{field, message}`.",
    429: "The tenant sent more signed requests than its limit in the current window (`rate_limited`): retry after "
    "`Retry-After` seconds.",
    500: "An internal error (`internal_error`); nothing was stored, the request can be retried.",
    502: "An outside service (embeddings, the language model, the pipeline) failed after retries "
    "(`upstream_unavailable`): retry later.",
    503: "The store or the index is unavailable (`storage_unavailable`): retry later.",
}

# The error statuses a route declares, beside the 500 every route may answer (`answers` adds it).
READ = (400, 401, 404, 422, 503)
WRITE = (*READ, 409)
WITH_BODY = (*WRITE, 413, 415)
UPSTREAM = (502,)


def answers(
    success: Mapping[int, str], *, errors: Iterable[int] = (), model: Any = None, media_type: str = JSON
) -> dict[int, OpenAPIResponse]:
    """A route's `responses=`: each success status with what it means, then its error statuses, each answering
    `ErrorOut`. A success body is the route's return annotation (validated as it leaves), or `model` (a model or a
    union of them) for a route whose body a `Response` carries unvalidated; a 204 has none. With `media_type`
    `application/x-ndjson` the success body is lines, each one `model`."""
    responses: dict[int, OpenAPIResponse] = {}
    for status, description in success.items():
        if status == 204:
            responses[status] = {"description": description, "content": {}}
        elif model is not None:
            responses[status] = {"description": description, "content": {media_type: {"model": model}}}
        else:
            responses[status] = {"description": description}
    for status in sorted({*errors, 500}):
        responses[status] = {"description": ERROR_DESCRIPTIONS[status], "content": {JSON: {"model": ErrorOut}}}
    return responses
