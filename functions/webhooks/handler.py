"""Lambda entry point of the signed ingest routes (Slack, generic webhook): verify, deduplicate, put on the bus."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.adapters.aws.xray import lambda_tracer

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver

SERVICE = "rapport-webhooks"

logger = Logger(service=SERVICE)
tracer = lambda_tracer(SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)


@cache
def _app() -> APIGatewayRestResolver:
    """Built on the first event: the store (for idempotency claims), tenant secrets and the bus, nothing more."""
    from rapport.api.app import create_ingest_lambda_app
    from rapport.composition.functions import webhook_ingestion

    return create_ingest_lambda_app(webhook_ingestion())


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@tracer.capture_lambda_handler(capture_response=False)  # bodies are end users' messages
@metrics.log_metrics(capture_cold_start_metric=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _app().resolve(event, context)
