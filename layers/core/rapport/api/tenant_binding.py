"""Every authenticated request acts for its caller's tenant below the application too (`rapport.tenancy`): the
stores then sign as that tenant's session and refuse any key of another tenant, whatever a route passes them."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver, Response

from rapport.api.identity import CallerOf
from rapport.errors import UnauthorizedError
from rapport.tenancy import acting_for

Middleware = Callable[[ApiGatewayResolver, Callable[[ApiGatewayResolver], Response]], Response]


def act_for_the_caller(caller_of: CallerOf) -> Middleware:
    """The tenant comes from the authorizer's context (or the local gateway's), the one source routes read it from.
    A request without one (health, the documents, the signed ingest routes) acts for no tenant, so in AWS it can
    reach no tenant's items."""

    def middleware(app: ApiGatewayResolver, next_middleware: Callable[[ApiGatewayResolver], Response]) -> Response:
        try:
            tenant_id = caller_of(app.current_event).tenant_id
        except UnauthorizedError:
            return next_middleware(app)
        with acting_for(tenant_id):
            return next_middleware(app)

    return middleware
