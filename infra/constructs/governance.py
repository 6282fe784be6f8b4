"""Governance jobs: the producer the schedules invoke, the work queue of per-user messages, the workers draining it."""

from __future__ import annotations

from collections.abc import Callable

import aws_cdk as cdk
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.constructs.function import RapportFunction
from infra.constructs.queues import dead_letter_queue, drain
from infra.constructs.schedules import ScheduledJob

WORKER_TIMEOUT = cdk.Duration.minutes(5)
# SQS must hide a message for longer than a worker may hold it: AWS advises six times the function's timeout.
VISIBILITY_TIMEOUT = cdk.Duration.minutes(30)
PRODUCER_RETRIES = 2  # a run that fails three times is parked; the next schedule runs the job again
MAX_RECEIVES = 3  # then the user's message is parked in the dead-letter queue; the rest of the run goes on
BATCH_SIZE = 10
# Workers in parallel at most: bounds the load one run puts on the table, the index and OpenAI, without reserving
# any of the account's concurrency.
WORKER_CONCURRENCY = 10

# (job, when, what) in UTC. Decay runs before compression, which reads the decayed strengths; retention runs first
# at night; consolidation once a week. The hours are apart so a run usually finishes before the next starts (a
# user held by one job is retried by the other after the visibility timeout).
JOBS: list[tuple[str, dict[str, str], str]] = [
    ("retention", {"hour": "1", "minute": "0"}, "nightly: plan caps on history, short-term and working tiers"),
    ("decay", {"hour": "2", "minute": "0"}, "daily: writes each memory's decayed strength down"),
    ("compress", {"hour": "3", "minute": "0"}, "daily: summarizes weak, old memories into compact ones"),
    ("consolidate", {"hour": "4", "minute": "0", "week_day": "SUN"}, "weekly: merges clusters of similar memories"),
]

FunctionFactory = Callable[..., RapportFunction]


class GovernanceJobs(Construct):
    """`make_function` is the stack's factory (its layer, table, grants and defaults); `scheduled_jobs` is what the
    stack hands to its Schedules construct."""

    def __init__(self, scope: Construct, construct_id: str, *, make_function: FunctionFactory) -> None:
        super().__init__(scope, construct_id)
        # Messages name a tenant and an end user but hold no content: SQS-managed encryption suffices.
        self.dead_letter_queue = dead_letter_queue(self, "DeadLetterQueue", receives="the governance work")
        self.queue = sqs.Queue(
            self,
            "WorkQueue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=VISIBILITY_TIMEOUT,
            retention_period=cdk.Duration.days(4),
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=MAX_RECEIVES, queue=self.dead_letter_queue),
        )
        environment = {"RAPPORT_GOVERNANCE_JOB_QUEUE_URL": self.queue.queue_url}
        self.producer = make_function(
            "JobsProducerFunction",
            entry="jobs/producer",
            service_name="rapport-jobs-producer",
            description="Rapport governance jobs: starts a scheduled run's fan-out",
            timeout=cdk.Duration.seconds(30),
            environment=environment,
            # EventBridge Scheduler invokes it asynchronously, and the schedule's DLQ keeps only the invocations it
            # could not make: a run that started and then failed is parked here, not left to the logs alone.
            on_failure=destinations.SqsDestination(self.dead_letter_queue),
            retry_attempts=PRODUCER_RETRIES,
        )
        self.worker = make_function(
            "JobsWorkerFunction",
            entry="jobs/worker",
            service_name="rapport-jobs-worker",
            description="Rapport governance jobs: fans a run out page by page and runs each end user's job",
            memory_size=1024,
            timeout=WORKER_TIMEOUT,
            table_access="write",
            searches=True,  # archiving updates the index; compact and consolidated memories are embedded
            environment=environment,
        )
        self.queue.grant_send_messages(self.producer.function)
        self.queue.grant_send_messages(self.worker.function)  # each page enqueues its users and the next page
        drain(self.worker.function, self.queue, batch_size=BATCH_SIZE, max_concurrency=WORKER_CONCURRENCY)

    @property
    def scheduled_jobs(self) -> list[ScheduledJob]:
        return [
            ScheduledJob(
                name=name,
                function=self.producer.function,
                schedule=scheduler.ScheduleExpression.cron(**when),
                description=f"Rapport {name} job, {description}",
            )
            for name, when, description in JOBS
        ]
