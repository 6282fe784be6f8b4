"""Who is calling: the tenant comes from the API key (via the authorizer), never from the request body."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent
from pydantic import BaseModel

from rapport.errors import UnauthorizedError


class Caller(BaseModel):
    tenant_id: str
    principal: str


CallerOf = Callable[[BaseProxyEvent], Caller]


def caller_from_authorizer(event: BaseProxyEvent) -> Caller:
    """API Gateway REST API (and the local gateway, which builds the same event): the authorizer put the tenant in
    the request context."""
    authorizer = (event.raw_event.get("requestContext") or {}).get("authorizer") or {}
    tenant_id = authorizer.get("tenant_id")
    if not tenant_id:
        raise UnauthorizedError("missing or unknown API key")
    return Caller(tenant_id=str(tenant_id), principal=str(authorizer.get("principalId") or "unknown"))


# The one header the AWS authorizer reads, and so the one its result is cached on (infra/constructs/api.py): a
# cache keyed on one header while the key came from another would hand one caller's tenant to the next.
AUTHORIZATION_HEADER = "Authorization"


def bearer_key_from_headers(headers: dict[str, str]) -> str | None:
    """`Authorization: Bearer <key>` only: what the AWS authorizer accepts."""
    lowered = {k.lower(): v for k, v in headers.items()}
    authorization = lowered.get(AUTHORIZATION_HEADER.lower(), "")
    if authorization.lower().startswith("bearer "):
        return authorization[7:].strip() or None
    return None


def api_key_from_headers(headers: dict[str, str]) -> str | None:
    """`Authorization: Bearer <key>`, or (the local server, which caches nothing) `x-api-key: <key>`."""
    lowered = {k.lower(): v for k, v in headers.items()}
    return bearer_key_from_headers(headers) or lowered.get("x-api-key") or None
