"""Lambda entry point of the pipeline's user extraction (one branch of the Parallel state)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.composition.services import services_from_environment
from rapport.pipeline.extract import extract_user
from rapport.pipeline.models import PipelineState

SERVICE = "rapport-pipeline-extract-user"

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # results hold end users' memories
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = PipelineState.model_validate(event)
    logger.append_keys(interaction_id=state.interaction_id)
    result = extract_user(services_from_environment().pipeline.ctx, state)
    metrics.add_metric(name="Candidates", unit=MetricUnit.Count, value=len(result.candidates))
    if result.fallback_reason:
        logger.warning("the rule-based model stood in", extra={"reason": result.fallback_reason})
        metrics.add_metric(name="ModelFallbacks", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
