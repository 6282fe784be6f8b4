"""The one dependency every end-user route takes: who is calling (the tenant of their key) and which end user of that
tenant the path names, checked once. Each resolver says how its caller is known (the authorizer in AWS, the local
gateway's headers) by overriding `current_caller`."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Request
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.depends import Depends

from rapport.api.identity import Caller, CallerOf
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
    user_id = request.path_parameters.get("user_id")
    if user_id is None:
        raise InvalidInputError("this route names no end user")
    return Scope.of(caller.tenant_id, str(user_id))


# What a route declares: `scope: UserScope` (an end user's route), `tenant_id: TenantId` (a tenant's route),
# `caller: CurrentCaller` (who, for the audit trail).
UserScope = Annotated[Scope, Depends(user_scope)]
TenantId = Annotated[str, Depends(tenant_of)]
CurrentCaller = Annotated[Caller, Depends(current_caller)]
