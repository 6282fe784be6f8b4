"""Lambda entry point of the pipeline starter: new history items off the table's stream in, executions started.

The interaction's write is the outbox: the table keeps the record in its stream until this function has taken it,
so a start that the API never made (it timed out, it crashed) is made here. A start that fails is parked in the
pipeline's dead-letter queue (`rapport dlq replay`); only a queue that refuses the letter fails the record, which
the stream then delivers again.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.adapters.aws.xray import lambda_tracer
from rapport.composition.functions import pipeline_starter
from rapport.ports.pipeline import PipelineStatus

SERVICE = "rapport-pipeline-starter"

logger = Logger(service=SERVICE)
tracer = lambda_tracer(SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)
processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


def record_handler(record: DynamoDBRecord) -> None:
    # The table's adapter (and boto3 with it) loads with the first record, as the clients it reads with do.
    from rapport.adapters.dynamodb.stream import interaction_recorded

    stream, event_name = record.dynamodb, record.event_name
    if stream is None or event_name is None:
        raise ValueError(f"stream record {record.event_id} has no dynamodb section or event name")
    request = interaction_recorded(event_name.name, stream.keys or {}, stream.new_image)
    if request is None:
        return
    run = pipeline_starter().start(request)
    failed = run.status is PipelineStatus.FAILED
    metrics.add_metric(name="PipelineStartsParked" if failed else "PipelinesStarted", unit=MetricUnit.Count, value=1)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
