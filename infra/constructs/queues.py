"""Dead-letter queues: where what failed elsewhere waits, encrypted, TLS-only, for two weeks."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_sqs as sqs
from constructs import Construct


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
    return queue
