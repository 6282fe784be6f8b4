"""Index sync: the table's stream drives the indexer function, which keeps the vector index in step with the table."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from constructs import Construct

from infra.constructs.function import RapportFunction
from infra.constructs.queues import dead_letter_queue
from infra.nag import acknowledge_no_dead_letter_queue

# Memory items only: edges, interactions, state and claims never reach the function (nor cost an invocation).
MEMORY_SORT_KEY_PREFIX = "MEM#"
BATCH_SIZE = 100
RETRY_ATTEMPTS = 5
MAX_RECORD_AGE = cdk.Duration.hours(24)


class IndexSync(Construct):
    """Stream records of memories in batches, partial-batch failure reporting (the handler names the records that
    failed), bisecting on error, and an on-failure queue that receives the pointers of what still fails."""

    def __init__(
        self, scope: Construct, construct_id: str, *, function: RapportFunction, table: dynamodb.ITable
    ) -> None:
        super().__init__(scope, construct_id)
        # The on-failure destination receives the batch's metadata (shard, sequence numbers), never the items.
        self.failure_queue = dead_letter_queue(
            self, "FailureQueue", receives="the index sync (its on-failure destination)"
        )
        function.function.add_event_source(
            sources.DynamoEventSource(
                table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=BATCH_SIZE,
                bisect_batch_on_error=True,
                report_batch_item_failures=True,
                retry_attempts=RETRY_ATTEMPTS,
                max_record_age=MAX_RECORD_AGE,
                on_failure=sources.SqsDlq(self.failure_queue),
                filters=[
                    lambda_.FilterCriteria.filter(
                        {"dynamodb": {"Keys": {"sk": {"S": lambda_.FilterRule.begins_with(MEMORY_SORT_KEY_PREFIX)}}}}
                    )
                ],
            )
        )
        acknowledge_no_dead_letter_queue(
            function.function,
            invoked_by=(
                "The table's stream invokes it synchronously through its event source mapping; a batch that still "
                "fails after the mapping's retries has its pointers sent to the mapping's on-failure queue"
            ),
        )
