"""Ingestion: the custom event bus, its rules, and the dead-letter queue where nothing that arrives is lost."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.nag import acknowledge_last_queue
from rapport.graph.enrichment import ENRICHMENT_SOURCE, MEMORIES_STORED

# The same values as rapport.ingestion.events (copied, not imported): every ingestion source starts with this.
SOURCE_PREFIX = "rapport.ingest"
INTERACTION_RECEIVED = "Interaction Received"
# Graph enrichment (docs/graph.md): a writer announces stored memories (ids only), the enrichment function links them;
# the event's names are the core's (rapport.graph.enrichment), so the rule matches what the hooks publish.
# How long EventBridge (and Lambda's async queue) keep retrying a delivery before it goes to the DLQ.
MAX_EVENT_AGE = cdk.Duration.hours(6)
DLQ_RETENTION = cdk.Duration.days(14)


class Ingestion(Construct):
    """`rapport.ingest.*` / `Interaction Received` events go to the consumer (`deliver_to`). Events under that source
    with any other detail-type go straight to the DLQ, as does whatever the consumer fails on after its retries:
    a malformed event is kept for a person to look at, never dropped."""

    def __init__(self, scope: Construct, construct_id: str, *, retain_data: bool) -> None:
        super().__init__(scope, construct_id)
        # The DLQ holds end users' messages: its own KMS key, which EventBridge may use to deliver into it.
        self.key = kms.Key(
            self,
            "Key",
            description="Encrypts Rapport ingestion events that could not be processed (dead-letter queue)",
            enable_key_rotation=True,
            removal_policy=cdk.RemovalPolicy.RETAIN if retain_data else cdk.RemovalPolicy.DESTROY,
        )
        self.key.grant(iam.ServicePrincipal("events.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey")
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            encryption=sqs.QueueEncryption.KMS,
            encryption_master_key=self.key,
            enforce_ssl=True,
            retention_period=DLQ_RETENTION,
        )
        # No event archive: archived events would keep end users' messages beyond an erasure of their data.
        self.bus = events.EventBus(self, "Bus", description="Rapport ingestion: Interaction Received events")
        self.interaction_rule = events.Rule(
            self,
            "InteractionReceived",
            event_bus=self.bus,
            description="Interaction Received events from the signed ingest routes and tenants' own systems",
            event_pattern=events.EventPattern(
                source=events.Match.prefix(SOURCE_PREFIX), detail_type=[INTERACTION_RECEIVED]
            ),
        )
        # A rule that matches nothing drops the event silently; this one catches every other detail-type.
        self.unroutable_rule = events.Rule(
            self,
            "Unroutable",
            event_bus=self.bus,
            description="Ingestion events of an unknown detail-type: kept in the dead-letter queue",
            event_pattern=events.EventPattern(
                source=events.Match.prefix(SOURCE_PREFIX),
                detail_type=events.Match.anything_but(INTERACTION_RECEIVED),
            ),
            targets=[targets.SqsQueue(self.dead_letter_queue)],
        )
        cdk.Validations.of(self.dead_letter_queue).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-SQS3",
                reason="This queue is itself the dead-letter destination of the ingestion bus and its consumer.",
            )
        )
        acknowledge_last_queue(self.dead_letter_queue, receives="the ingestion bus, its consumer and the enricher")
        cdk.Validations.of(self.unroutable_rule).acknowledge(
            cdk.Acknowledgment(
                id="Serverless-EventBusDLQ",
                reason=(
                    "This rule's one target is the ingestion dead-letter queue itself: a delivery EventBridge "
                    "cannot make to it would fail into a second queue for the same reason (its policy or its key)."
                ),
            )
        )

    def deliver_to(self, consumer: lambda_.IFunction) -> None:
        """The consumer records each interaction; delivery and processing failures both end in the DLQ."""
        self.interaction_rule.add_target(self._lambda_target(consumer))

    def enrich_with(self, enricher: lambda_.IFunction) -> None:
        """Memories Stored events go to the enrichment function; failures end in the same dead-letter queue (a
        redrive sends the event's detail to the function again: enrichment is idempotent)."""
        events.Rule(
            self,
            "MemoriesStored",
            event_bus=self.bus,
            description="Memories Stored events from every writer of memories: link them (graph enrichment)",
            event_pattern=events.EventPattern(source=[ENRICHMENT_SOURCE], detail_type=[MEMORIES_STORED]),
            targets=[self._lambda_target(enricher)],
        )

    def _lambda_target(self, function: lambda_.IFunction) -> targets.LambdaFunction:
        """EventBridge retries a delivery for up to MAX_EVENT_AGE, then keeps the event in the dead-letter queue."""
        return targets.LambdaFunction(
            function, dead_letter_queue=self.dead_letter_queue, retry_attempts=8, max_event_age=MAX_EVENT_AGE
        )

    def grant_put(self, grantee: iam.IGrantable) -> None:
        self.bus.grant_put_events_to(grantee)
