"""Lambda entry point of the pipeline's store step: embeds, de-duplicates, links and writes what the filter kept."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.composition.services import services_from_environment
from rapport.pipeline.models import PipelineState
from rapport.pipeline.store import store

SERVICE = "rapport-pipeline-store"

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = PipelineState.model_validate(event)
    logger.append_keys(interaction_id=state.interaction_id)
    outcome = store(services_from_environment().pipeline.ctx, state)
    metrics.add_metric(name="MemoriesStored", unit=MetricUnit.Count, value=len(outcome.stored))
    metrics.add_metric(name="MemoriesReinforced", unit=MetricUnit.Count, value=len(outcome.reinforced))
    metrics.add_metric(name="MemoriesInvalidated", unit=MetricUnit.Count, value=len(outcome.invalidated))
    return outcome.model_dump(mode="json")
