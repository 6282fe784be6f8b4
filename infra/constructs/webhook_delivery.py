"""Outbound webhook deliveries: a queue of delivery jobs drained by one function, with a dead-letter queue (whose
depth, like the queue's oldest message, the Monitoring construct alarms on)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import aws_cdk as cdk
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.constructs.function import RapportFunction
from infra.constructs.queues import dead_letter_queue, drain

DELIVERY_TIMEOUT = cdk.Duration.seconds(60)  # ten jobs a batch, each bounded by RAPPORT_WEBHOOK_TIMEOUT_SECONDS
# SQS must hide a message for longer than a worker may hold it: AWS advises six times the function's timeout.
VISIBILITY_TIMEOUT = cdk.Duration.minutes(6)
MAX_RECEIVES = 3  # a job the function itself failed on (the store down) three times is parked
BATCH_SIZE = 10
# Deliveries in parallel at most: a burst of events must not take the account's concurrency, nor flood receivers.
DELIVERY_CONCURRENCY = 5

FunctionFactory = Callable[..., RapportFunction]


class WebhookDelivery(Construct):
    """`announcers` are the functions whose writes announce events (they send the first attempt of each job);
    the delivery function sends each retry back to the same queue with its backoff as the message delay."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        make_function: FunctionFactory,
        announcers: Sequence[RapportFunction],
    ) -> None:
        super().__init__(scope, construct_id)
        # Messages carry ids, counts and a user's hash, never memory content: SQS-managed encryption suffices.
        self.dead_letter_queue = dead_letter_queue(self, "DeadLetterQueue", receives="the webhook deliveries")
        self.queue = sqs.Queue(
            self,
            "Queue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=VISIBILITY_TIMEOUT,
            retention_period=cdk.Duration.days(1),  # the retry schedule ends well within a day
            dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=MAX_RECEIVES, queue=self.dead_letter_queue),
        )
        self.environment = {"RAPPORT_WEBHOOK_QUEUE_URL": self.queue.queue_url}
        # Outside any VPC, as every function of the stack: it reaches the internet, and no private address of the
        # account; the use case refuses private, loopback and link-local targets before each attempt anyway.
        self.function = make_function(
            "WebhookDeliveryFunction",
            entry="webhook_delivery",
            service_name="rapport-webhook-delivery",
            description="Rapport outbound webhooks: signs and delivers one event to one endpoint, retries with backoff",
            timeout=DELIVERY_TIMEOUT,
            table_access="write",  # reads the endpoints, writes the delivery log
            person_keys=False,  # tenant items only: no end user's content
            environment=self.environment,
        )
        self.queue.grant_send_messages(self.function.function)
        drain(self.function.function, self.queue, batch_size=BATCH_SIZE, max_concurrency=DELIVERY_CONCURRENCY)
        for announcer in announcers:
            announcer.add_environment(self.environment)
            self.queue.grant_send_messages(announcer.function)
