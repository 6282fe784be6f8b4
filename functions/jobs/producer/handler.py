"""Lambda entry point of a scheduled governance job: starts the run's fan-out with one message on the work queue."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.adapters.aws.xray import lambda_tracer
from rapport.clock import SystemClock
from rapport.composition.functions import jobs_work_queue
from rapport.jobs.fanout import ScheduledRun, start_run

SERVICE = "rapport-jobs-producer"

logger = Logger(service=SERVICE)
tracer = lambda_tracer(SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
@event_parser(model=ScheduledRun)
def handler(event: ScheduledRun, context: LambdaContext) -> dict[str, Any]:
    as_of = event.now or SystemClock().now()
    first = start_run(jobs_work_queue(), event.job, as_of, event.tenant_id)
    logger.info("governance run started", extra={"job": event.job.value, "run_id": first.run_id, "as_of": str(as_of)})
    return first.model_dump(mode="json")
