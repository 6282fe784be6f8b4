"""Lambda entry point of the pipeline's record step: checks the interaction is in the history and opens the run."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.composition.services import services_from_environment
from rapport.pipeline.models import PipelineState
from rapport.pipeline.opening import record

SERVICE = "rapport-pipeline-record"

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # results name end users' memories
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = PipelineState.model_validate(event)
    logger.append_keys(interaction_id=state.interaction_id)
    outcome = record(services_from_environment().pipeline.ctx, state.request())
    metrics.add_metric(name="RunsRepeated" if outcome.already_done else "RunsStarted", unit=MetricUnit.Count, value=1)
    return outcome.model_dump(mode="json")
