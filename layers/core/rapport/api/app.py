"""The HTTP API: one resolver factory, used by the Lambda handler and by the local server."""

from __future__ import annotations

from typing import TypeVar

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, CORSConfig

from rapport import __version__
from rapport.api.access import access_control
from rapport.api.bodies import one_object_per_body
from rapport.api.contract import PUBLIC, answers
from rapport.api.dependencies import use_caller
from rapport.api.errors import register_error_handlers
from rapport.api.explorer import register_explorer_routes
from rapport.api.idempotency import replayed_header
from rapport.api.identity import CallerOf, caller_from_authorizer
from rapport.api.openapi_document import DOCS_PATH, OPENAPI_PATH, register_openapi_routes
from rapport.api.resolver import ConcurrentRestResolver
from rapport.api.routers.agents import build_agents_router
from rapport.api.routers.associations import build_associations_router
from rapport.api.routers.filter_decisions import build_filter_decisions_router
from rapport.api.routers.governance import build_governance_router
from rapport.api.routers.ingest import INGEST_PATHS, build_ingest_router
from rapport.api.routers.interactions import build_interactions_router
from rapport.api.routers.keys import build_keys_router
from rapport.api.routers.knowledge import build_knowledge_router
from rapport.api.routers.memories import build_memories_router
from rapport.api.routers.people import build_people_router
from rapport.api.routers.privacy import build_privacy_router
from rapport.api.routers.relational import build_relational_router
from rapport.api.routers.sessions import build_sessions_router
from rapport.api.routers.turns import build_turns_router
from rapport.api.routers.users import build_users_router
from rapport.api.routers.webhooks import build_webhooks_router
from rapport.api.schemas import HealthOut
from rapport.api.tenant_binding import act_for_the_caller
from rapport.composition.services import Services
from rapport.explorer.site import EXPLORER_PREFIX
from rapport.ingestion.service import IngestionService

ResolverT = TypeVar("ResolverT", bound=ConcurrentRestResolver)

# The ingest routes are public to the key check only: each request is authenticated by its signature instead.
HEALTH_PATH = "/v1/health"
PUBLIC_PATHS = frozenset({HEALTH_PATH, OPENAPI_PATH, DOCS_PATH, *INGEST_PATHS})
_TITLE = "Rapport"
_DESCRIPTION = "Relational memory for AI assistants."
# What a browser may send and read cross-origin: the key, keyed writes, and the headers a client acts on.
CORS_ALLOWED_HEADERS = ("Authorization", "Content-Type", "Idempotency-Key", "X-Api-Key")
CORS_EXPOSED_HEADERS = ("Retry-After", "Idempotent-Replayed")
CORS_MAX_AGE_SECONDS = 600


def is_public_path(path: str) -> bool:
    """A route no key is needed for: health, the document, the signed ingest routes, the explorer's files."""
    return path in PUBLIC_PATHS or path == EXPLORER_PREFIX or path.startswith(EXPLORER_PREFIX + "/")


def configure(app: ResolverT, services: Services, caller_of: CallerOf) -> ResolverT:
    """Routers are built fresh for each resolver: a Router shared by two resolvers answers from the last one."""
    register_error_handlers(app)
    use_caller(app, caller_of)
    # The scope check answers before the body is read; the audit event it records carries the status the error
    # handlers above make of whatever the route raised.
    app.use_first(
        access_control(
            caller_of=caller_of,
            audit=services.audit,
            is_public=is_public_path,
            errors=lambda exc, route: app._call_exception_handler(exc, route),
        )
    )
    app.use(middlewares=[act_for_the_caller(caller_of), one_object_per_body(INGEST_PATHS), replayed_header])

    @app.get(
        HEALTH_PATH,
        tags=["health"],
        summary="Liveness; no authentication",
        operation_id="health_get",
        security=PUBLIC,
        responses=answers({200: "The service is up"}),
    )
    def health() -> HealthOut:
        return HealthOut(status="ok", version=__version__)

    app.include_router(
        build_memories_router(
            memories=services.memories,
            recall=services.recall,
            settings=services.settings,
            writes=services.keyed_writes,
        )
    )
    app.include_router(build_interactions_router(services.interactions, services.keyed_writes))
    app.include_router(build_filter_decisions_router(services.filter_decisions))
    app.include_router(build_privacy_router(services.privacy, services.audit))
    app.include_router(
        build_users_router(directory=services.users, export=services.user_export, importer=services.user_import)
    )
    app.include_router(build_keys_router(services.auth, services.clock))
    app.include_router(
        build_relational_router(
            processor=services.process,
            state=services.relational_state,
            profiles=services.profiles,
            clock=services.clock,
        )
    )
    app.include_router(build_turns_router(services.turns))
    app.include_router(build_agents_router(services.assistants))
    app.include_router(build_people_router(services.people))
    app.include_router(build_associations_router(services.graph.associations))
    app.include_router(build_knowledge_router(services.graph.knowledge))
    app.include_router(build_sessions_router(services.sessions))
    app.include_router(build_webhooks_router(services.webhooks.endpoints))
    app.include_router(
        build_governance_router(memories=services.memories, governance=services.governance, settings=services.settings)
    )
    register_openapi_routes(
        app,
        title=_TITLE,
        version=__version__,
        description=_DESCRIPTION,
        max_page_size=services.settings.max_page_size,
    )

    return app


def create_lambda_app(services: Services) -> APIGatewayRestResolver:
    """Every answer to an allowed browser origin carries its CORS headers: API Gateway answers only the preflight.
    The memory explorer is served here too, on the API's own origin and stage (docs/deploy.md)."""
    cors = cors_config(services.settings.cors_origin_list())
    app = configure(ConcurrentRestResolver(enable_validation=True, cors=cors), services, caller_from_authorizer)
    # Locally the gateway answers the explorer before the resolver; in AWS this function is the page's only host.
    register_explorer_routes(app)
    return app


def cors_config(origins: list[str]) -> CORSConfig | None:
    """The configured origins (RAPPORT_CORS_ORIGINS; `*` for any), or None: no origin is answered cross-origin."""
    if not origins:
        return None
    first, *others = origins
    return CORSConfig(
        allow_origin=first,
        extra_origins=others,
        allow_headers=list(CORS_ALLOWED_HEADERS),
        expose_headers=list(CORS_EXPOSED_HEADERS),
        max_age=CORS_MAX_AGE_SECONDS,
    )


def create_local_app(services: Services) -> APIGatewayRestResolver:
    """The Lambda function's resolver: the local gateway checks the key and hands it API Gateway's event, with the
    authorizer's context. Locally the signed routes live beside the others; in AWS they are a function of their own
    (below). The local gateway adds the CORS headers itself (it answers preflights before any key check)."""
    app = configure(ConcurrentRestResolver(enable_validation=True), services, caller_from_authorizer)
    app.include_router(build_ingest_router(services.ingestion))
    return app


def create_ingest_lambda_app(ingestion: IngestionService) -> APIGatewayRestResolver:
    """The webhooks function's app: only the signed ingest routes, so its role needs no memory or index access."""
    app = ConcurrentRestResolver(enable_validation=True)
    register_error_handlers(app)
    app.include_router(build_ingest_router(ingestion))
    return app
