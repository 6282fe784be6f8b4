"""The ingestion path in process (receiver, in-process bus, consumer, store) and its AWS adapters under moto."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws
from pydantic import SecretStr

from rapport.adapters.aws.eventbridge import EventBridgeBus
from rapport.adapters.aws.secrets_manager import SecretsManagerTenantSecrets
from rapport.adapters.local.in_process_bus import InProcessBus
from rapport.clock import FixedClock
from rapport.composition.services import Services
from rapport.domain.scope import Scope
from rapport.errors import InvalidInputError, UpstreamError
from rapport.ingestion.events import INTERACTION_RECEIVED, InteractionReceived, ReceivedMessage
from rapport.ingestion.service import Outcome
from rapport.ingestion.signatures import SignatureError
from rapport.ports.event_bus import BusEvent
from rapport.ports.items import ItemQuery, ItemScope
from tests.integration.ingest_requests import (
    SLACK_SECRET,
    TENANT,
    now,
    slack_headers,
    slack_message,
    webhook_body,
    webhook_headers,
    with_ingest_secrets,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def ingest(services: Services) -> Services:
    return with_ingest_secrets(services)


def interactions(services: Services, user_id: str) -> list[Any]:
    return services.store.list_interactions(Scope(TENANT, user_id), limit=50).items


def test_slack_good_bad_stale_and_retried_requests_ingest_exactly_one_interaction(ingest: Services) -> None:
    body = slack_message()
    # Given a correctly signed message event
    accepted = ingest.ingestion.receive_slack(TENANT, slack_headers(body, timestamp=now(ingest)), body)
    assert accepted.outcome is Outcome.ACCEPTED and accepted.event_id == "slack:Ev08MFMKH6"
    # When the same body arrives signed with another secret, or signed six minutes ago
    with pytest.raises(SignatureError, match="does not match"):
        ingest.ingestion.receive_slack(TENANT, slack_headers(body, timestamp=now(ingest), secret="wrong"), body)
    with pytest.raises(SignatureError, match="window"):
        ingest.ingestion.receive_slack(TENANT, slack_headers(body, timestamp=now(ingest) - 360), body)
    # And Slack retries it (a fresh signature, the same event id)
    retried = ingest.ingestion.receive_slack(TENANT, slack_headers(body, timestamp=now(ingest), retry=1), body)
    assert retried.outcome is Outcome.DUPLICATE
    # Then exactly one interaction is stored, for the Slack user, on the slack channel
    (stored,) = interactions(ingest, "U061F7AUR")
    assert stored.channel == "slack" and stored.session_id == "C0LAN2Q65"
    assert stored.messages[0].content == "I just adopted a dog named Max"
    assert stored.metadata["ingest_event_id"] == "slack:Ev08MFMKH6"


def test_the_url_verification_challenge_is_answered_only_when_signed(ingest: Services) -> None:
    body = json.dumps(
        {"token": "t", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", "type": "url_verification"}
    ).encode()
    answered = ingest.ingestion.receive_slack(TENANT, slack_headers(body, timestamp=now(ingest)), body)
    assert answered.outcome is Outcome.CHALLENGE
    assert answered.challenge == "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
    with pytest.raises(SignatureError):
        ingest.ingestion.receive_slack(TENANT, {"X-Slack-Request-Timestamp": str(now(ingest))}, body)


def test_a_tenant_without_a_secret_or_without_a_tenant_parameter_is_refused(ingest: Services) -> None:
    body = slack_message()
    with pytest.raises(SignatureError, match="does not match"):
        ingest.ingestion.receive_slack("other", slack_headers(body, timestamp=now(ingest)), body)
    with pytest.raises(InvalidInputError, match="tenant"):
        ingest.ingestion.receive_slack(None, slack_headers(body, timestamp=now(ingest)), body)
    with pytest.raises(InvalidInputError, match="tenant"):
        ingest.ingestion.receive_slack("a/b", slack_headers(body, timestamp=now(ingest)), body)
    assert interactions(ingest, "U061F7AUR") == []


def test_webhook_good_bad_stale_and_replayed_requests_ingest_exactly_one_interaction(ingest: Services) -> None:
    body = webhook_body("msg-1001")
    assert ingest.ingestion.receive_webhook(TENANT, webhook_headers(body, timestamp=now(ingest)), body).outcome is (
        Outcome.ACCEPTED
    )
    with pytest.raises(SignatureError):
        ingest.ingestion.receive_webhook(
            TENANT, webhook_headers(body, timestamp=now(ingest), secret=SLACK_SECRET), body
        )
    with pytest.raises(SignatureError, match="window"):
        ingest.ingestion.receive_webhook(TENANT, webhook_headers(body, timestamp=now(ingest) + 400), body)
    # A replay inside the window is signed correctly: the idempotency key stops it
    replay = ingest.ingestion.receive_webhook(TENANT, webhook_headers(body, timestamp=now(ingest)), body)
    assert replay.outcome is Outcome.DUPLICATE
    (stored,) = interactions(ingest, "dana")
    assert stored.channel == "discord" and [m.role.value for m in stored.messages] == ["user", "assistant"]


def test_a_malformed_but_signed_webhook_is_invalid_input_and_ingests_nothing(ingest: Services) -> None:
    body = b'{"user_id": "dana"}'
    with pytest.raises(InvalidInputError, match="idempotency_key"):
        ingest.ingestion.receive_webhook(TENANT, webhook_headers(body, timestamp=now(ingest)), body)
    assert interactions(ingest, "dana") == []


def test_a_failed_publish_releases_the_claim_so_the_senders_retry_gets_through(ingest: Services) -> None:
    class DownBus:
        def publish(self, event: BusEvent) -> None:
            raise UpstreamError("EventBridge PutEvents failed: EndpointConnectionError")

    body = webhook_body("msg-down")
    receiver = ingest.ingestion
    real_bus = receiver._bus
    receiver._bus = DownBus()
    with pytest.raises(UpstreamError):
        receiver.receive_webhook(TENANT, webhook_headers(body, timestamp=now(ingest)), body)
    receiver._bus = real_bus
    assert receiver.receive_webhook(TENANT, webhook_headers(body, timestamp=now(ingest)), body).outcome is (
        Outcome.ACCEPTED
    )
    assert len(interactions(ingest, "dana")) == 1


def test_the_consumer_records_a_redelivered_event_once(ingest: Services) -> None:
    event = InteractionReceived(
        event_id="crm:4711",
        tenant_id=TENANT,
        user_id="lee",
        messages=[ReceivedMessage(role="user", content="Please call me Lee")],
        channel="crm",
    )
    assert ingest.consumer.handle(event) is not None
    assert ingest.consumer.handle(event) is None  # EventBridge delivers at least once
    assert len(interactions(ingest, "lee")) == 1


def test_a_consumer_failure_releases_its_claim(ingest: Services, clock: FixedClock) -> None:
    event = InteractionReceived(
        event_id="crm:4712",
        tenant_id=TENANT,
        user_id="lee",
        messages=[ReceivedMessage(role="user", content="x" * (ingest.settings.max_message_chars + 1))],
    )
    with pytest.raises(InvalidInputError):
        ingest.consumer.handle(event)
    fixed = event.model_copy(update={"messages": [ReceivedMessage(role="user", content="short now")]})
    assert ingest.consumer.handle(fixed) is not None


def test_event_ids_are_remembered_for_their_ttl_without_content(ingest: Services) -> None:
    event = InteractionReceived(
        event_id="crm:ttl", tenant_id=TENANT, user_id="lee", messages=[ReceivedMessage(role="user", content="hi")]
    )
    assert ingest.consumer.handle(event) is not None and ingest.consumer.handle(event) is None
    records = ingest.items.list_items(ItemScope(tenant_id=TENANT, user_id="lee"), ItemQuery(kind="IDEMPOTENCY")).items
    assert records
    # Powertools dates its records by the wall clock: 48 hours from now
    expected = datetime.now(UTC) + timedelta(hours=48)
    assert all(r.expires_at is not None and abs((r.expires_at - expected).total_seconds()) < 60 for r in records)
    assert all("hi" not in json.dumps(r.body) for r in records)


def test_the_in_process_bus_refuses_an_event_nobody_subscribed_to() -> None:
    bus = InProcessBus()
    with pytest.raises(LookupError, match="no subscriber"):
        bus.publish(BusEvent(source="rapport.ingest.crm", detail_type="Something Else", detail={}))


# --- AWS adapters under moto ---------------------------------------------------------------------------------------


@pytest.fixture
def aws() -> Any:
    with mock_aws():
        yield


def test_eventbridge_bus_puts_the_event_on_the_named_bus_where_a_rule_routes_it(aws: None) -> None:
    events, sqs = boto3.client("events", region_name="us-east-1"), boto3.client("sqs", region_name="us-east-1")
    events.create_event_bus(Name="rapport-ingest")
    queue_url = sqs.create_queue(QueueName="seen")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(
        Name="interactions",
        EventBusName="rapport-ingest",
        EventPattern=json.dumps({"source": [{"prefix": "rapport.ingest"}], "detail-type": [INTERACTION_RECEIVED]}),
    )
    events.put_targets(Rule="interactions", EventBusName="rapport-ingest", Targets=[{"Id": "q", "Arn": queue_arn}])

    EventBridgeBus("rapport-ingest", region_name="us-east-1").publish(
        BusEvent(source="rapport.ingest.webhook", detail_type=INTERACTION_RECEIVED, detail={"event_id": "e1"})
    )
    (message,) = sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=0)["Messages"]
    envelope = json.loads(message["Body"])
    assert envelope["source"] == "rapport.ingest.webhook" and envelope["detail"] == {"event_id": "e1"}


def test_eventbridge_bus_raises_when_an_entry_fails_instead_of_losing_it() -> None:
    class RefusingClient:
        def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:  # noqa: N803 - boto3's name
            return {"FailedEntryCount": 1, "Entries": [{"ErrorCode": "ThrottlingException", "ErrorMessage": "slow"}]}

    bus = EventBridgeBus("rapport-ingest", events_client=RefusingClient())
    with pytest.raises(UpstreamError, match="ThrottlingException"):
        bus.publish(BusEvent(source="rapport.ingest.x", detail_type=INTERACTION_RECEIVED, detail={}))
    with pytest.raises(InvalidInputError, match="256 KB"):
        bus.publish(BusEvent(source="rapport.ingest.x", detail_type=INTERACTION_RECEIVED, detail={"x": "y" * 300_000}))


def test_secrets_manager_keeps_one_secret_per_tenant_and_source(aws: None) -> None:
    secrets = SecretsManagerTenantSecrets("Rapport/ingest", region_name="us-east-1")
    assert secrets.get(TENANT, "slack") is None
    secrets.put(TENANT, "slack", SecretStr("first"))
    assert secrets.get(TENANT, "slack") == SecretStr("first")
    secrets.put(TENANT, "slack", SecretStr("rotated"))  # put_secret_value on the existing secret
    assert secrets.get(TENANT, "slack") == SecretStr("rotated")
    names = [s["Name"] for s in boto3.client("secretsmanager", region_name="us-east-1").list_secrets()["SecretList"]]
    assert names == ["Rapport/ingest/acme/slack"]
    with pytest.raises(InvalidInputError):
        secrets.get("../other", "slack")


def test_secrets_manager_reads_are_cached_for_a_few_minutes(aws: None) -> None:
    ticks = [0.0]
    secrets = SecretsManagerTenantSecrets("p", region_name="us-east-1", monotonic=lambda: ticks[0])
    secrets.put(TENANT, "webhook", SecretStr("v1"))
    assert secrets.get(TENANT, "webhook") == SecretStr("v1")
    boto3.client("secretsmanager", region_name="us-east-1").put_secret_value(
        SecretId="p/acme/webhook", SecretString="v2"
    )
    assert secrets.get(TENANT, "webhook") == SecretStr("v1")  # cached
    ticks[0] = 301.0
    assert secrets.get(TENANT, "webhook") == SecretStr("v2")
