"""The one dependency every end-user route takes: who is calling (the tenant of their key) and which end user of that
tenant the path names, checked once. Each resolver says how its caller is known (the authorizer in AWS, the local
gateway's headers) by overriding `current_caller`."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Request
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.depends import Depends
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.identity import Caller, CallerOf
from rapport.api.schemas import AGENT_ID_DESCRIPTION
from rapport.domain.scope import Scope
from rapport.errors import InvalidInputError, UnauthorizedError


def current_caller(request: Request) -> Caller:
    """Overridden by every resolver (`use_caller`); a resolver that forgot to says nobody is authenticated."""
    raise UnauthorizedError("missing or unknown API key")


def use_caller(app: ApiGatewayResolver, caller_of: CallerOf) -> None:
    def caller(request: Request) -> Caller:
        return caller_of(request.resolved_event)

    app.dependency_overrides[current_caller] = caller


def tenant_of(caller: Annotated[Caller, Depends(current_caller)]) -> str:
    return caller.tenant_id


def user_scope(request: Request, caller: Annotated[Caller, Depends(current_caller)]) -> Scope:
    """The path's end user, as the assistant `?agent_id=` names sees them (none: the default assistant)."""
    user_id = request.path_parameters.get("user_id")
    if user_id is None:
        raise InvalidInputError("this route names no end user")
    return Scope.of(caller.tenant_id, str(user_id), (request.query_parameters or {}).get(AGENT_QUERY))


def with_agent(scope: Scope, agent_id: str | None) -> Scope:
    """The scope a write's body names the assistant of (`agent_id`), which must agree with the query's if both do."""
    if agent_id is None:
        return scope
    named = Scope.of(scope.tenant_id, scope.user_id, agent_id)
    if not scope.is_default_agent and named.agent_id != scope.agent_id:
        raise InvalidInputError(
            f"agent_id {agent_id!r} in the body and {scope.agent_id!r} in the query differ: send one of them"
        )
    return named


AGENT_QUERY = "agent_id"


# What a route declares: `scope: UserScope` (an end user's route), `tenant_id: TenantId` (a tenant's route),
# `caller: CurrentCaller` (who, for the audit trail).
UserScope = Annotated[Scope, Depends(user_scope)]
# What a route that reads or writes one assistant's part of a relationship declares beside `scope: UserScope`, so the
# document lists the parameter (`UserScope` itself reads it); its pattern is added with the user id's.
AgentId = Annotated[str | None, Query(alias=AGENT_QUERY, description=AGENT_ID_DESCRIPTION)]
TenantId = Annotated[str, Depends(tenant_of)]
CurrentCaller = Annotated[Caller, Depends(current_caller)]
