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


def api_key_from_headers(headers: dict[str, str]) -> str | None:
    """`Authorization: Bearer <key>` or `x-api-key: <key>`."""
    lowered = {k.lower(): v for k, v in headers.items()}
    authorization = lowered.get("authorization", "")
    if authorization.lower().startswith("bearer "):
        return authorization[7:].strip() or None
    return lowered.get("x-api-key") or None
