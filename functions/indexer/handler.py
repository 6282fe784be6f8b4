"""Lambda entry point of the index sync: stream records of memories in, index writes out, failures per record."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.adapters.aws.xray import lambda_tracer
from rapport.composition.functions import index_sync, stream_keyring

SERVICE = "rapport-indexer"

logger = Logger(service=SERVICE)
tracer = lambda_tracer(SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)
processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


def record_handler(record: DynamoDBRecord) -> None:
    # The table's adapter (and boto3 with it) loads with the first record, as the clients it reads with do.
    from rapport.adapters.dynamodb.stream import memory_change

    stream, event_name = record.dynamodb, record.event_name
    if stream is None or event_name is None:
        raise ValueError(f"stream record {record.event_id} has no dynamodb section or event name")
    # The images carry the person's content sealed; the store's keys open them (a person erased since: a removal).
    change = memory_change(event_name.name, stream.keys, stream.new_image, stream.old_image, stream_keyring())
    if index_sync().apply(change):
        metrics.add_metric(name="IndexWrites", unit=MetricUnit.Count, value=1)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)  # responses name memories of end users
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    # A failed record is reported by its sequence number; Lambda retries from there, then hands what still fails
    # to the on-failure queue, so one poison record neither blocks the shard nor drops its neighbours.
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
