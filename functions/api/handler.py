"""Lambda entry point of the REST API: builds the core's app once per cold start, then resolves each event."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.adapters.aws.xray import lambda_tracer

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver

SERVICE = "rapport-api"

logger = Logger(service=SERVICE)
tracer = lambda_tracer(SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)


@cache
def _app() -> APIGatewayRestResolver:
    """Built on the first event, not at import: the routers come with the wiring, which reads settings and creates
    network clients."""
    from rapport.api.app import create_lambda_app
    from rapport.composition.functions import api_services

    return create_lambda_app(api_services())


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@tracer.capture_lambda_handler(capture_response=False)  # responses hold end users' memories: keep them out of X-Ray
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _app().resolve(event, context)
