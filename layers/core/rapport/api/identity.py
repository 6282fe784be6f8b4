"""Who is calling: the tenant comes from the API key (via the authorizer), never from the request body."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent
from pydantic import BaseModel

from rapport.errors import UnauthorizedError

# Headers the local gateway sets after checking the key; it strips any a client sent, and Lambda never reads them.
LOCAL_TENANT_HEADER = "x-rapport-tenant"
LOCAL_PRINCIPAL_HEADER = "x-rapport-principal"


class Caller(BaseModel):
    tenant_id: str
    principal: str


CallerOf = Callable[[BaseProxyEvent], Caller]


def caller_from_authorizer(event: BaseProxyEvent) -> Caller:
    """API Gateway REST API: the Lambda authorizer put the tenant in the request context."""
    authorizer = (event.raw_event.get("requestContext") or {}).get("authorizer") or {}
    tenant_id = authorizer.get("tenant_id")
    if not tenant_id:
        raise UnauthorizedError("missing or unknown API key")
    return Caller(tenant_id=str(tenant_id), principal=str(authorizer.get("principalId") or "unknown"))


def caller_from_local_gateway(event: BaseProxyEvent) -> Caller:
    """The local server: its gateway checked the key and set these headers."""
    headers = {k.lower(): v for k, v in (event.headers or {}).items()}
    tenant_id = headers.get(LOCAL_TENANT_HEADER)
    if not tenant_id:
        raise UnauthorizedError("missing or unknown API key")
    return Caller(tenant_id=tenant_id, principal=headers.get(LOCAL_PRINCIPAL_HEADER, "unknown"))


def api_key_from_headers(headers: dict[str, str]) -> str | None:
    """`Authorization: Bearer <key>` or `x-api-key: <key>`."""
    lowered = {k.lower(): v for k, v in headers.items()}
    authorization = lowered.get("authorization", "")
    if authorization.lower().startswith("bearer "):
        return authorization[7:].strip() or None
    return lowered.get("x-api-key") or None
