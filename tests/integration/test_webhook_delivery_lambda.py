"""Outbound webhooks on the AWS path under moto: a write in the API's process queues the job on SQS, the delivery
function delivers it to a local receiver, and a failed attempt goes back to the queue with its backoff as delay."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from standardwebhooks import Webhook

from rapport.adapters.dynamodb.store import create_table
from rapport.composition.functions import webhook_events
from rapport.composition.services import Services, services_from_environment
from rapport.domain.models import Domain
from rapport.domain.scope import Scope
from rapport.domain.webhooks import OutboundEventType
from rapport.services.memories import NewMemory
from tests.integration.api_events import FakeLambdaContext
from tests.integration.test_ingest_lambdas import load
from tests.webhook_receiver import Receiver

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore:No application metrics to publish")]

REGION = "us-east-1"
TABLE = "rapport-webhooks-test"
TENANT = "acme"


def sqs_event(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": {},
                "messageAttributes": {},
                "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": f"arn:aws:sqs:{REGION}:123456789012:deliveries",
                "awsRegion": REGION,
            }
            for m in messages
        ]
    }


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Any, str]]:
    with mock_aws():
        sqs = boto3.client("sqs", region_name=REGION)
        queue_url = sqs.create_queue(QueueName="deliveries")["QueueUrl"]
        for name, value in {
            "RAPPORT_STORE": "dynamodb",
            "RAPPORT_TABLE_NAME": TABLE,
            "AWS_REGION": REGION,
            "RAPPORT_VECTOR_BACKEND": "embedded",
            "RAPPORT_EMBEDDER": "hashing",
            "RAPPORT_HASHING_DIMENSIONS": "64",
            "RAPPORT_PIPELINE": "off",
            "RAPPORT_DATA_DIR": str(tmp_path / "data"),
            "RAPPORT_WEBHOOK_QUEUE_URL": queue_url,
            "RAPPORT_WEBHOOK_ALLOW_LOCAL_HTTP": "true",
            "RAPPORT_WEBHOOK_RETRY_BASE_SECONDS": "1",
            "POWERTOOLS_TRACE_DISABLED": "1",
        }.items():
            monkeypatch.setenv(name, value)
        webhook_events.cache_clear()
        services_from_environment.cache_clear()
        create_table(boto3.resource("dynamodb", region_name=REGION), TABLE)
        yield sqs, queue_url
    webhook_events.cache_clear()
    services_from_environment.cache_clear()


def queued(sqs: Any, queue_url: str) -> list[dict[str, Any]]:
    return sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])


def test_a_stored_memory_is_queued_delivered_and_retried_through_sqs(aws: tuple[Any, str]) -> None:
    sqs, queue_url = aws
    receiver = Receiver([500])
    try:
        # Given an endpoint registered through the API's services (the DynamoDB store, the SQS transport)
        api: Services = services_from_environment()
        endpoint = api.webhooks.endpoints.register(TENANT, receiver.url, [OutboundEventType.MEMORY_STORED])
        # When a memory is stored, one job is queued and nothing is sent yet
        api.memories.remember(Scope(TENANT, "dana"), NewMemory(content="Dana sails", domain=Domain.USER))
        (job,) = queued(sqs, queue_url)
        assert receiver.requests == [] and "Dana sails" not in job["Body"]
        # When the delivery function takes it and the endpoint answers 500
        delivery = load("webhook_delivery")
        assert delivery.handler(sqs_event([job]), FakeLambdaContext()) == {"batchItemFailures": []}
        assert len(receiver.wait_for(1)) == 1
        # Then the retry is back on the queue, delayed by the backoff
        assert queued(sqs, queue_url) == []
        time.sleep(1.2)
        (retry,) = queued(sqs, queue_url)
        assert '"attempt":2' in retry["Body"]
        delivery.handler(sqs_event([retry]), FakeLambdaContext())
        (_, (headers, body)) = receiver.wait_for(2)
        assert Webhook(endpoint.secret).verify(body, headers)["type"] == "memory.stored"
        log = api.webhooks.endpoints.deliveries(TENANT, endpoint.id, limit=10, cursor=None).items
        assert [(a.attempt, a.status_code) for a in log] == [(2, 200), (1, 500)]
        assert queued(sqs, queue_url) == []
    finally:
        receiver.close()
