"""Lambda entry point of outbound webhook deliveries: each SQS message is one event for one endpoint, one attempt."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.adapters.aws.xray import lambda_tracer
from rapport.composition.functions import webhook_events
from rapport.domain.webhooks import DeliveryJob

SERVICE = "rapport-webhook-delivery"

logger = Logger(service=SERVICE)
tracer = lambda_tracer(SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)
processor = BatchProcessor(event_type=EventType.SQS)


def record_handler(record: SQSRecord) -> None:
    # A failed attempt is not an error here: the use case logs it and queues the next one with its backoff. Only a
    # store that cannot be read or written raises, so SQS redelivers the message (then the dead-letter queue).
    job = DeliveryJob.model_validate_json(record.body)
    outcome = webhook_events().deliver(job)
    metrics.add_metric(name=f"Webhook{outcome.value.title().replace('_', '')}", unit=MetricUnit.Count, value=1)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
