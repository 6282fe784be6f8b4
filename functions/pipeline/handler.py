"""Lambda entry points of the ingestion pipeline's five tasks, one per function, all in this one module.

Each function names its entry point (`handler.record`, `handler.extract_user`…) and its own Powertools service
through POWERTOOLS_SERVICE_NAME, so logs, traces and metrics stay apart per step. No entry point puts its
response in a trace: the results hold end users' memories.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.adapters.aws.xray import lambda_tracer
from rapport.composition.functions import pipeline_steps
from rapport.domain.filtering import Verdict
from rapport.ports.pipeline import ExtractionResult, PipelineState
from rapport.tenancy import acting_for

logger = Logger()
tracer = lambda_tracer()
metrics = Metrics(namespace="Rapport")


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def record(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = _state(event)
    with acting_for(state.tenant_id):
        outcome = pipeline_steps().open_run(state.request())
    metrics.add_metric(name="RunsRepeated" if outcome.already_done else "RunsStarted", unit=MetricUnit.Count, value=1)
    return outcome.model_dump(mode="json")


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def extract_user(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = _state(event)
    with acting_for(state.tenant_id):
        result = pipeline_steps().extract.user(state)
    return _extracted(result)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def extract_relational(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = _state(event)
    with acting_for(state.tenant_id):
        result = pipeline_steps().extract.relational(state)
    return _extracted(result)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def constructive_filter(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = _state(event)
    with acting_for(state.tenant_id):
        outcome = pipeline_steps().constructive_filter(state)
    for verdict in Verdict:
        count = sum(1 for judged in outcome.judged if judged.verdict is verdict)
        metrics.add_metric(name=f"Candidates{verdict.value.capitalize()}", unit=MetricUnit.Count, value=count)
    return outcome.model_dump(mode="json")


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def store(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    state = _state(event)
    with acting_for(state.tenant_id):
        outcome = pipeline_steps().store(state)
    metrics.add_metric(name="MemoriesStored", unit=MetricUnit.Count, value=len(outcome.stored))
    metrics.add_metric(name="MemoriesReinforced", unit=MetricUnit.Count, value=len(outcome.reinforced))
    metrics.add_metric(name="MemoriesInvalidated", unit=MetricUnit.Count, value=len(outcome.invalidated))
    return outcome.model_dump(mode="json")


def _state(event: dict[str, Any]) -> PipelineState:
    """The task's input; each task acts for its tenant (`acting_for`), so the store signs as that tenant."""
    state = PipelineState.model_validate(event)
    logger.append_keys(interaction_id=state.interaction_id)
    return state


def _extracted(result: ExtractionResult) -> dict[str, Any]:
    metrics.add_metric(name="Candidates", unit=MetricUnit.Count, value=len(result.candidates))
    if result.fallback_reason:
        logger.warning("the rule-based model stood in", extra={"reason": result.fallback_reason})
        metrics.add_metric(name="ModelFallbacks", unit=MetricUnit.Count, value=1)
    return result.model_dump(mode="json")
