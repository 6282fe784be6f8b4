"""Lambda entry point of the governance workers: each SQS message is a page to fan out or one end user's job."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.adapters.aws.xray import lambda_tracer
from rapport.composition.functions import jobs_fan_out
from rapport.jobs.fanout import WorkItem
from rapport.jobs.report import JobReport

SERVICE = "rapport-jobs-worker"
NAMESPACE = "Rapport"

logger = Logger(service=SERVICE)
tracer = lambda_tracer(SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)
processor = BatchProcessor(event_type=EventType.SQS)
_reports: list[JobReport] = []


def record_handler(record: SQSRecord) -> None:
    _reports.append(jobs_fan_out().handle(WorkItem.model_validate_json(record.body)))


def _publish(report: JobReport) -> None:
    """Per job (a dimension), the counts of this batch; and the one summary line."""
    for name, value in report.metrics().items():
        if value:
            with single_metric(name=name, unit=MetricUnit.Count, value=value, namespace=NAMESPACE) as metric:
                metric.add_dimension(name="job", value=report.job.value)
    if report.users or report.failed_users:
        logger.info("governance batch finished", extra=report.summary())


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    # A failed record is reported back alone: SQS redelivers that user's message (then parks it in the
    # dead-letter queue), and the batch's other users are not redone.
    _reports.clear()
    response = process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
    by_job: dict[str, JobReport] = {}
    for report in _reports:
        by_job[report.job] = by_job[report.job].merge(report) if report.job in by_job else report
    for report in by_job.values():
        _publish(report)
    return response
