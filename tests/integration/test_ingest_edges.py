"""The signed ingest routes at their edges: one answer to every failed signature whatever the tenant, payloads
whose times or JSON no later step could handle, and the per-tenant limit counted only after the signature."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from rapport.api.app import create_ingest_lambda_app
from rapport.clock import FixedClock
from rapport.composition.adapters import build_idempotency_records
from rapport.composition.services import Services
from rapport.errors import InvalidInputError, RateLimitedError
from rapport.ingestion.rate_limit import TenantRateLimit
from rapport.ingestion.service import IngestionService, Outcome
from rapport.ingestion.signatures import SignatureError
from rapport.ingestion.stored_secrets import ItemStoreTenantSecrets
from rapport.services.idempotency import IdempotentRequests
from tests.integration.api_events import FakeLambdaContext, rest_event
from tests.integration.ingest_requests import (
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


def refusal(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(SignatureError) as refused:
        call()
    return str(refused.value)


def test_a_tenant_without_a_secret_and_a_wrong_signature_get_the_same_401_text(ingest: Services) -> None:
    receiver, body, stamp = ingest.ingestion, slack_message(), now(ingest)
    # Given one tenant with secrets and one without: a stranger signs with a guess for each
    forged = slack_headers(body, timestamp=stamp, secret="a guess")
    unknown_tenant = refusal(lambda: receiver.receive_slack("no-such-tenant", forged, body))
    known_tenant = refusal(lambda: receiver.receive_slack(TENANT, forged, body))
    # Then both answers read the same: nothing tells which tenant exists
    assert unknown_tenant == known_tenant
    hook = webhook_body("e-1")
    forged_hook = webhook_headers(hook, timestamp=stamp, secret="a guess")
    assert refusal(lambda: receiver.receive_webhook("no-such-tenant", forged_hook, hook)) == refusal(
        lambda: receiver.receive_webhook(TENANT, forged_hook, hook)
    )
    # And a stale or unsigned request is refused before any tenant is looked at, the same for both
    stale = slack_headers(body, timestamp=stamp - 3600)
    assert refusal(lambda: receiver.receive_slack("no-such-tenant", stale, body)) == refusal(
        lambda: receiver.receive_slack(TENANT, stale, body)
    )


@pytest.mark.parametrize("timestamp", ["²³", "١٧٠٠٠٠٠٠٠٠", "9" * 5000, "1e9", "-1"])
def test_a_timestamp_header_that_is_not_ascii_digits_is_a_401(ingest: Services, timestamp: str) -> None:
    body = slack_message()
    headers = {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": "v0=" + "0" * 64}
    assert "not a Unix time" in refusal(lambda: ingest.ingestion.receive_slack(TENANT, headers, body))


@pytest.mark.parametrize("ts", ["inf", "-inf", "nan", "1e20", "-1e20", "-5", "4102444800.5", "soon"])
def test_a_slack_message_whose_ts_is_no_time_in_range_is_invalid_input(ingest: Services, ts: str) -> None:
    body = slack_message(event_id=f"Ev-{ts}", ts=ts)
    with pytest.raises(InvalidInputError, match="ts"):
        ingest.ingestion.receive_slack(TENANT, slack_headers(body, timestamp=now(ingest)), body)


def test_a_slack_event_time_out_of_range_is_invalid_input(ingest: Services) -> None:
    envelope = json.loads(slack_message(event_id="Ev-time"))
    del envelope["event"]["ts"]
    envelope["event_time"] = 10**20
    body = json.dumps(envelope).encode()
    with pytest.raises(InvalidInputError, match="event_time"):
        ingest.ingestion.receive_slack(TENANT, slack_headers(body, timestamp=now(ingest)), body)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"a":' * 1000 + b"1" + b"}" * 1000, "deeper than 64"),
        (b'{"type": "event_callback", "n": ' + b"9" * 5000 + b"}", "100 digits"),
        (b'{"type": NaN}', "not a JSON number"),
        (b'{"type": "\\ud800"}', "surrogate"),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_signed_bodies_no_later_step_could_handle_are_invalid_input(
    ingest: Services, body: bytes, message: str
) -> None:
    stamp = now(ingest)
    with pytest.raises(InvalidInputError, match=message):
        ingest.ingestion.receive_webhook(TENANT, webhook_headers(body, timestamp=stamp), body)
    with pytest.raises(InvalidInputError):
        ingest.ingestion.receive_slack(TENANT, slack_headers(body, timestamp=stamp), body)


def test_a_webhook_occurred_at_out_of_range_is_invalid_input(ingest: Services) -> None:
    payload = json.loads(webhook_body("e-old"))
    payload["occurred_at"] = "0001-01-01T00:00:00+01:00"
    body = json.dumps(payload).encode()
    with pytest.raises(InvalidInputError, match="occurred_at"):
        ingest.ingestion.receive_webhook(TENANT, webhook_headers(body, timestamp=now(ingest)), body)


def _limited(services: Services, clock: FixedClock, limit: int) -> IngestionService:
    return IngestionService(
        secrets=ItemStoreTenantSecrets(services.items, clock),
        once=IdempotentRequests(build_idempotency_records(services.store, services.items), services.settings, clock),
        bus=services.bus,
        clock=clock,
        replay_window=timedelta(minutes=5),
        remembered_for=timedelta(hours=1),
        rate_limit=TenantRateLimit(services.items, clock, limit=limit, window=timedelta(minutes=5)),
    )


def test_only_verified_requests_count_against_a_tenants_ingest_limit(ingest: Services, clock: FixedClock) -> None:
    receiver = _limited(ingest, clock, limit=3)
    stamp = now(ingest)
    # Given a stranger flooding the tenant's URL with unsigned and forged requests
    for i in range(20):
        forged = webhook_body(f"forged-{i}")
        with pytest.raises(SignatureError):
            receiver.receive_webhook(TENANT, webhook_headers(forged, timestamp=stamp, secret="guess"), forged)
    # Then the tenant's own signed requests still get through, up to its limit
    for i in range(3):
        body = webhook_body(f"real-{i}")
        assert receiver.receive_webhook(TENANT, webhook_headers(body, timestamp=stamp), body).outcome is (
            Outcome.ACCEPTED
        )
    # And the next one in the window is refused with the time to wait: a 429 with Retry-After over HTTP
    body = webhook_body("real-3")
    with pytest.raises(RateLimitedError) as limited:
        receiver.receive_webhook(TENANT, webhook_headers(body, timestamp=stamp), body)
    assert 1 <= limited.value.retry_after_seconds <= 300
    event = rest_event(
        "POST",
        f"/v1/ingest/webhook?tenant={TENANT}",
        raw_body=body.decode(),
        headers=webhook_headers(body, timestamp=stamp),
    )
    answer = create_ingest_lambda_app(receiver).resolve(event, FakeLambdaContext())
    assert answer["statusCode"] == 429 and json.loads(answer["body"])["error"] == "rate_limited"
    assert answer["multiValueHeaders"]["Retry-After"] == [str(limited.value.retry_after_seconds)]
    # When the window has passed, the tenant's requests are counted afresh
    clock.advance(timedelta(seconds=limited.value.retry_after_seconds))
    stamp = now(ingest)
    assert receiver.receive_webhook(TENANT, webhook_headers(body, timestamp=stamp), body).outcome is Outcome.ACCEPTED
