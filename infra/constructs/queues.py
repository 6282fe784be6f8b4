"""Dead-letter queues: where what failed elsewhere waits, encrypted, TLS-only, for two weeks; and work queues'
consumers, whose failures reach them through the queue's redrive policy."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.nag import acknowledge_last_queue, acknowledge_no_dead_letter_queue


def dead_letter_queue(scope: Construct, construct_id: str, *, receives: str) -> sqs.Queue:
    """A queue holding failures of `receives` (metadata and ids, no memory content, so SQS-managed keys suffice)."""
    queue = sqs.Queue(
        scope,
        construct_id,
        encryption=sqs.QueueEncryption.SQS_MANAGED,
        enforce_ssl=True,
        retention_period=cdk.Duration.days(14),
    )
    cdk.Validations.of(queue).acknowledge(
        cdk.Acknowledgment(id="AwsSolutions-SQS3", reason=f"This queue is itself the dead-letter queue of {receives}.")
    )
    acknowledge_last_queue(queue, receives=receives)
    return queue


def drain(function: lambda_.Function, queue: sqs.Queue, *, batch_size: int, max_concurrency: int) -> None:
    """`function` takes `queue`'s messages in batches and names the ones that failed; those come back after the
    visibility timeout, and a message received `max_receive_count` times moves to the queue's dead-letter queue."""
    dead_letters = queue.dead_letter_queue
    if dead_letters is None:
        raise ValueError(f"{queue.node.path} has no dead-letter queue: a failing message would be retried forever")
    existing = {child.node.id for child in function.node.children}
    function.add_event_source(
        sources.SqsEventSource(
            queue, batch_size=batch_size, report_batch_item_failures=True, max_concurrency=max_concurrency
        )
    )
    (mapping,) = [
        child
        for child in function.node.children
        if child.node.id not in existing and isinstance(child, lambda_.EventSourceMapping)
    ]
    receives = dead_letters.max_receive_count
    cdk.Validations.of(mapping).acknowledge(
        cdk.Acknowledgment(
            id="Serverless-LambdaEventSourceMappingDestination",
            reason=(
                "Lambda offers on-failure destinations to stream and Kafka mappings, not to SQS ones: here the "
                f"queue's redrive policy moves a message received {receives} times to its dead-letter queue."
            ),
        )
    )
    acknowledge_no_dead_letter_queue(
        function,
        invoked_by=(
            "Its SQS event source mapping invokes it synchronously; a message that fails "
            f"{receives} times moves to the queue's dead-letter queue through the redrive policy"
        ),
    )
