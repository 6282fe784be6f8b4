"""The HTTP API: one resolver factory, used by the Lambda handler and by the local server."""

from __future__ import annotations

from typing import TypeVar

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.http_resolver import HttpResolverLocal

from rapport import __version__
from rapport.api.errors import register_error_handlers
from rapport.api.identity import CallerOf, caller_from_authorizer, caller_from_local_gateway
from rapport.api.routers.interactions import build_interactions_router
from rapport.api.routers.memories import build_memories_router
from rapport.api.routers.privacy import build_privacy_router
from rapport.wiring import Services

ResolverT = TypeVar("ResolverT", bound=ApiGatewayResolver)

PUBLIC_PATHS = frozenset({"/v1/health", "/v1/openapi.json", "/v1/docs"})
_TITLE = "Rapport"
_DESCRIPTION = "Relational memory for AI assistants."


def configure(app: ResolverT, services: Services, caller_of: CallerOf) -> ResolverT:
    """Routers are built fresh for each resolver: a Router shared by two resolvers answers from the last one."""
    register_error_handlers(app)

    @app.get("/v1/health", tags=["health"], summary="Liveness; no authentication")
    def health() -> dict:
        return {"status": "ok", "version": __version__}

    app.include_router(build_memories_router(services, caller_of))
    app.include_router(build_interactions_router(services, caller_of))
    app.include_router(build_privacy_router(services, caller_of))
    app.enable_swagger(path="/v1/docs", title=_TITLE, version=__version__, description=_DESCRIPTION)

    @app.get("/v1/openapi.json", include_in_schema=False)
    def openapi():  # a Response: powertools cannot build a schema for its annotation
        schema = app.get_openapi_json_schema(title=_TITLE, version=__version__, description=_DESCRIPTION)
        return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=schema)

    return app


def create_lambda_app(services: Services) -> APIGatewayRestResolver:
    return configure(APIGatewayRestResolver(enable_validation=True), services, caller_from_authorizer)


def create_local_app(services: Services) -> HttpResolverLocal:
    return configure(HttpResolverLocal(enable_validation=True), services, caller_from_local_gateway)
