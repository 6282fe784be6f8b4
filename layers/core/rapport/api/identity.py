"""Who is calling: the tenant comes from the API key (via the authorizer), never from the request body."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent
from pydantic import BaseModel

from rapport.domain.access import LEGACY_SCOPES, ApiScope, scopes_from_text
from rapport.errors import UnauthorizedError


class Caller(BaseModel):
    tenant_id: str
    principal: str  # the key's id (a prefix of its hash): who, in logs and the audit trail
    scopes: frozenset[ApiScope]


CallerOf = Callable[[BaseProxyEvent], Caller]

# The authorizer context's key for the key's scopes, space separated (a context value must be a string).
SCOPES_CONTEXT = "scopes"


def caller_from_authorizer(event: BaseProxyEvent) -> Caller:
    """API Gateway REST API (and the local gateway, which builds the same event): the authorizer put the tenant in
    the request context."""
    authorizer = (event.raw_event.get("requestContext") or {}).get("authorizer") or {}
    tenant_id = authorizer.get("tenant_id")
    if not tenant_id:
        raise UnauthorizedError("missing or unknown API key")
    # Without `scopes` the context is an authorizer result cached from before keys had scopes (API Gateway keeps one
    # up to its TTL across a deployment): it stands for a key of that time, which could do everything.
    scopes = authorizer.get(SCOPES_CONTEXT)
    return Caller(
        tenant_id=str(tenant_id),
        principal=str(authorizer.get("principalId") or "unknown"),
        scopes=LEGACY_SCOPES if scopes is None else scopes_from_text(str(scopes)),
    )


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
