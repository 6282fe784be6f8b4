"""The AWS ingestion path under moto: webhooks function -> EventBridge -> ingest function -> DynamoDB."""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest
from moto import mock_aws
from pydantic import SecretStr, ValidationError

from rapport.adapters.aws.secrets_manager import SecretsManagerTenantSecrets
from rapport.adapters.dynamodb.store import DynamoDbMemoryStore, create_table
from rapport.composition.functions import webhook_ingestion
from rapport.composition.services import services_from_environment
from rapport.domain.scope import Scope
from tests.integration.api_events import FakeLambdaContext, rest_event
from tests.integration.ingest_requests import (
    SLACK_SECRET,
    WEBHOOK_SECRET,
    slack_headers,
    slack_message,
    webhook_body,
    webhook_headers,
)

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore:No application metrics to publish")]

FUNCTIONS_DIR = Path(__file__).resolve().parents[2] / "functions"
REGION = "us-east-1"
TABLE = "rapport-ingest-test"
BUS = "rapport-ingest-bus"
PREFIX = "RapportTest/ingest"
TENANT = "acme"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"rapport_{name}_lambda_under_test", FUNCTIONS_DIR / name / "handler.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def as_delivered(message: dict[str, Any]) -> dict[str, Any]:
    """The EventBridge envelope a rule hands its target. Moto's copy lacks `account`, which EventBridge always sets."""
    return {"account": "123456789012", **json.loads(message["Body"])}


@dataclass
class Deployed:
    webhooks: ModuleType
    ingest: ModuleType
    sqs: Any
    queue_url: str
    store: DynamoDbMemoryStore

    def post(self, path: str, body: bytes, headers: dict[str, str], tenant: str | None = TENANT) -> tuple[int, Any]:
        url = f"{path}?tenant={tenant}" if tenant else path
        event = rest_event("POST", url, tenant=None, raw_body=body.decode(), headers=headers)
        response = self.webhooks.handler(event, FakeLambdaContext())
        return response["statusCode"], json.loads(response["body"])

    def deliver(self) -> list[Any]:
        """What EventBridge delivered, handed to the ingest function as its (asynchronous) invocation event."""
        results = []
        while True:
            messages = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10).get("Messages", [])
            if not messages:
                return results
            for message in messages:
                results.append(self.ingest.handler(as_delivered(message), FakeLambdaContext()))
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"])

    def interactions(self, user_id: str) -> list[Any]:
        return self.store.list_interactions(Scope(TENANT, user_id), limit=50).items


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Deployed]:
    for name, value in {
        "RAPPORT_STORE": "dynamodb",
        "RAPPORT_TABLE_NAME": TABLE,
        "AWS_REGION": REGION,
        "RAPPORT_EVENT_BUS_NAME": BUS,
        "RAPPORT_INGEST_SECRET_BACKEND": "secretsmanager",
        "RAPPORT_INGEST_SECRET_PREFIX": PREFIX,
        "RAPPORT_VECTOR_BACKEND": "embedded",
        "RAPPORT_EMBEDDER": "hashing",
        "RAPPORT_PIPELINE": "off",
        "RAPPORT_DATA_DIR": str(tmp_path / "data"),
        "POWERTOOLS_TRACE_DISABLED": "1",
    }.items():
        monkeypatch.setenv(name, value)
    webhook_ingestion.cache_clear()
    services_from_environment.cache_clear()
    with mock_aws():
        dynamodb = boto3.resource("dynamodb", region_name=REGION)
        create_table(dynamodb, TABLE)
        secrets = SecretsManagerTenantSecrets(PREFIX, region_name=REGION)
        secrets.put(TENANT, "slack", SecretStr(SLACK_SECRET))
        secrets.put(TENANT, "webhook", SecretStr(WEBHOOK_SECRET))
        events, sqs = boto3.client("events", region_name=REGION), boto3.client("sqs", region_name=REGION)
        events.create_event_bus(Name=BUS)
        queue_url = sqs.create_queue(QueueName="consumer")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        # The stack's rule, with a queue in place of the consumer function (moto runs no Lambda code)
        events.put_rule(
            Name="interactions",
            EventBusName=BUS,
            EventPattern=json.dumps(
                {"source": [{"prefix": "rapport.ingest"}], "detail-type": ["Interaction Received"]}
            ),
        )
        events.put_targets(Rule="interactions", EventBusName=BUS, Targets=[{"Id": "consumer", "Arn": arn}])
        yield Deployed(
            load("webhooks"), load("ingest"), sqs, queue_url, DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb)
        )
    webhook_ingestion.cache_clear()
    services_from_environment.cache_clear()


def test_slack_good_bad_stale_and_retried_events_ingest_exactly_one_interaction(deployed: Deployed) -> None:
    body, now = slack_message(), int(time.time())
    # A correctly signed message event is acknowledged at once and put on the bus
    assert deployed.post("/v1/ingest/slack", body, slack_headers(body, timestamp=now)) == (
        200,
        {"ok": True, "outcome": "accepted", "event_id": "slack:Ev08MFMKH6"},
    )
    # A bad signature and a stale one are refused with 401 and a message that says which
    status, bad = deployed.post("/v1/ingest/slack", body, slack_headers(body, timestamp=now, secret="forged"))
    assert status == 401 and "does not match" in bad["message"]
    status, stale = deployed.post("/v1/ingest/slack", body, slack_headers(body, timestamp=now - 600))
    assert status == 401 and "window" in stale["message"]
    # Slack's retry of the accepted event is acknowledged without a second ingest
    status, retried = deployed.post("/v1/ingest/slack", body, slack_headers(body, timestamp=now, retry=2))
    assert (status, retried["outcome"]) == (200, "duplicate")
    # When EventBridge delivers what was published
    assert [r["outcome"] for r in deployed.deliver()] == ["recorded"]
    # Then exactly one interaction was ingested
    (interaction,) = deployed.interactions("U061F7AUR")
    assert interaction.channel == "slack" and interaction.messages[0].content == "I just adopted a dog named Max"


def test_the_slack_url_verification_challenge_is_answered(deployed: Deployed) -> None:
    body = json.dumps({"token": "t", "challenge": "c-123", "type": "url_verification"}).encode()
    assert deployed.post("/v1/ingest/slack", body, slack_headers(body, timestamp=int(time.time()))) == (
        200,
        {"challenge": "c-123"},
    )
    assert deployed.deliver() == []


def test_webhook_good_bad_stale_replayed_and_malformed_requests_ingest_exactly_one(deployed: Deployed) -> None:
    body, now = webhook_body("msg-1001"), int(time.time())
    status, accepted = deployed.post("/v1/ingest/webhook", body, webhook_headers(body, timestamp=now))
    assert (status, accepted["outcome"]) == (202, "accepted")
    assert deployed.post("/v1/ingest/webhook", body, webhook_headers(body, timestamp=now, secret="x"))[0] == 401
    assert deployed.post("/v1/ingest/webhook", body, webhook_headers(body, timestamp=now - 301))[0] == 401
    assert deployed.post("/v1/ingest/webhook", body, webhook_headers(body, timestamp=now))[1]["outcome"] == "duplicate"
    malformed = b'{"idempotency_key": "msg-1002", "user_id": "dana"}'
    status, error = deployed.post("/v1/ingest/webhook", malformed, webhook_headers(malformed, timestamp=now))
    assert status == 400 and "messages" in error["message"]
    status, error = deployed.post("/v1/ingest/webhook", body, webhook_headers(body, timestamp=now), tenant=None)
    assert status == 400 and "tenant" in error["message"]

    assert [r["outcome"] for r in deployed.deliver()] == ["recorded"]
    assert len(deployed.interactions("dana")) == 1


def test_a_redelivered_event_is_recorded_once(deployed: Deployed) -> None:
    body = webhook_body("msg-2001")
    deployed.post("/v1/ingest/webhook", body, webhook_headers(body, timestamp=int(time.time())))
    (message,) = deployed.sqs.receive_message(QueueUrl=deployed.queue_url)["Messages"]
    envelope = as_delivered(message)
    outcomes = [deployed.ingest.handler(envelope, FakeLambdaContext())["outcome"] for _ in range(2)]
    assert outcomes == ["recorded", "duplicate"]
    assert len(deployed.interactions("dana")) == 1


def test_a_malformed_event_put_directly_on_the_bus_fails_the_invocation(deployed: Deployed) -> None:
    # A tenant's own producer puts an event with a typo; EventBridge delivers it; the consumer refuses it, so Lambda
    # retries and then hands it to the on-failure destination (the DLQ) instead of dropping it
    boto3.client("events", region_name=REGION).put_events(
        Entries=[
            {
                "EventBusName": BUS,
                "Source": "rapport.ingest.crm",
                "DetailType": "Interaction Received",
                "Detail": json.dumps({"event_id": "crm-1", "tenant_id": TENANT, "userid": "dana", "messages": []}),
            }
        ]
    )
    with pytest.raises(ValidationError):
        deployed.deliver()
    assert deployed.interactions("dana") == []
