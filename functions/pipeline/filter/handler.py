"""Lambda entry point of the pipeline's constructive filter: candidates in, verdicts with reasons out."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.composition.services import services_from_environment
from rapport.domain.filtering import Verdict
from rapport.pipeline.constructive_filter import constructive_filter
from rapport.pipeline.models import PipelineState

SERVICE = "rapport-pipeline-filter"

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # results hold end users' memories
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = PipelineState.model_validate(event)
    logger.append_keys(interaction_id=state.interaction_id)
    outcome = constructive_filter(services_from_environment().pipeline.ctx, state)
    for verdict in Verdict:
        count = sum(1 for judged in outcome.judged if judged.verdict is verdict)
        metrics.add_metric(name=f"Candidates{verdict.value.capitalize()}", unit=MetricUnit.Count, value=count)
    return outcome.model_dump(mode="json")
