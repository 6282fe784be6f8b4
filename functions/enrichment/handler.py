"""Lambda entry point of enrichment: memories just stored in, PRECEDED_BY / SIMILAR_TO / pattern links out."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.adapters.aws.xray import lambda_tracer
from rapport.composition.functions import enricher
from rapport.graph.enrichment import EnrichmentRequest

SERVICE = "rapport-enrichment"

logger = Logger(service=SERVICE)
tracer = lambda_tracer(SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    # An EventBridge event carries the request as its `detail`; a direct invocation (or a Pipe) sends it bare.
    request = EnrichmentRequest.model_validate(event.get("detail", event))
    logger.append_keys(tenant_id=request.tenant_id)
    outcome = enricher().enrich(request.scope, request.memory_ids)
    metrics.add_metric(name="EnrichmentEdges", unit=MetricUnit.Count, value=outcome.edges())
    return outcome.model_dump()
