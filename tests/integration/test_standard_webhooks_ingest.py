"""The generic webhook signed the Standard Webhooks way (by the `standardwebhooks` library), and the deprecated v1."""

from __future__ import annotations

import json

import pytest
from pydantic import SecretStr

from rapport.composition.services import Services
from rapport.domain.scope import Scope
from rapport.ingestion.service import Outcome
from rapport.ingestion.signatures import SignatureError
from rapport.ingestion.stored_secrets import ItemStoreTenantSecrets
from tests.integration.ingest_requests import (
    TENANT,
    WEBHOOK_SECRET,
    now,
    standard_webhook_headers,
    webhook_body,
    webhook_headers,
    with_ingest_secrets,
)

pytestmark = pytest.mark.integration

STANDARD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


@pytest.fixture
def ingest(services: Services) -> Services:
    return with_ingest_secrets(services, slack=None, webhook=STANDARD_SECRET)


def refusal(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(SignatureError) as refused:
        call()
    return str(refused.value)


def test_a_request_signed_by_the_library_is_ingested_once_under_its_webhook_id(ingest: Services) -> None:
    body = webhook_body("ignored-key")
    headers = standard_webhook_headers(body, message_id="msg_1", timestamp=now(ingest), secret=STANDARD_SECRET)
    # Given a request the standardwebhooks library signed
    accepted = ingest.ingestion.receive_webhook(TENANT, headers, body)
    # Then it is accepted, and its webhook-id (not the body's key) names the event
    assert accepted.outcome is Outcome.ACCEPTED and accepted.event_id == "webhook:msg_1"
    # When the sender retries it later (same id, a fresh timestamp and signature)
    retried = standard_webhook_headers(body, message_id="msg_1", timestamp=now(ingest) + 5, secret=STANDARD_SECRET)
    assert ingest.ingestion.receive_webhook(TENANT, retried, body).outcome is Outcome.DUPLICATE
    # Then one interaction is stored
    (stored,) = ingest.store.list_interactions(Scope(TENANT, "dana"), limit=10).items
    assert stored.metadata["ingest_event_id"] == "webhook:msg_1"


def test_a_body_without_an_idempotency_key_is_fine_under_standard_webhooks(ingest: Services) -> None:
    body = json.dumps({"user_id": "dana", "messages": [{"role": "user", "content": "hi"}]}).encode()
    headers = standard_webhook_headers(body, message_id="msg_2", timestamp=now(ingest), secret=STANDARD_SECRET)
    assert ingest.ingestion.receive_webhook(TENANT, headers, body).event_id == "webhook:msg_2"


def test_a_rotating_sender_listing_two_signatures_passes_when_one_matches(ingest: Services) -> None:
    body, stamp = webhook_body(), now(ingest)
    good = standard_webhook_headers(body, message_id="msg_3", timestamp=stamp, secret=STANDARD_SECRET)
    old = standard_webhook_headers(body, message_id="msg_3", timestamp=stamp, secret="whsec_b2xkIHNlY3JldA==")
    headers = good | {"webhook-signature": f"{old['webhook-signature']} {good['webhook-signature']}"}
    assert ingest.ingestion.receive_webhook(TENANT, headers, body).outcome is Outcome.ACCEPTED


def test_a_bad_signature_a_swapped_id_and_an_unknown_tenant_get_the_one_401_text(ingest: Services) -> None:
    receiver, body, stamp = ingest.ingestion, webhook_body(), now(ingest)
    forged = standard_webhook_headers(body, timestamp=stamp, secret="whsec_Z3Vlc3NlZCBzZWNyZXQ=")
    wrong = refusal(lambda: receiver.receive_webhook(TENANT, forged, body))
    unknown = refusal(lambda: receiver.receive_webhook("no-such-tenant", forged, body))
    # The id is signed: renaming the event to slip past deduplication breaks the signature
    good = standard_webhook_headers(body, message_id="msg_4", timestamp=stamp, secret=STANDARD_SECRET)
    swapped = refusal(lambda: receiver.receive_webhook(TENANT, good | {"webhook-id": "msg_5"}, body))
    assert wrong == unknown == swapped
    assert "webhook-signature" in wrong and "does not match" in wrong
    # A changed body fails too, and nothing was stored
    tampered = body.replace(b"Lisbon", b"Madrid")
    assert refusal(lambda: receiver.receive_webhook(TENANT, good, tampered)) == wrong
    assert ingest.store.list_interactions(Scope(TENANT, "dana"), limit=10).items == []


def test_a_stale_or_unsigned_request_is_refused_before_the_tenant_is_read(ingest: Services) -> None:
    receiver, body, stamp = ingest.ingestion, webhook_body(), now(ingest)
    stale = standard_webhook_headers(body, timestamp=stamp - 3600, secret=STANDARD_SECRET)
    assert "window" in refusal(lambda: receiver.receive_webhook(TENANT, stale, body))
    assert "webhook-signature header is missing" in refusal(lambda: receiver.receive_webhook(TENANT, {}, body))
    no_id = standard_webhook_headers(body, timestamp=stamp, secret=STANDARD_SECRET)
    del no_id["webhook-id"]
    assert "webhook-id" in refusal(lambda: receiver.receive_webhook(TENANT, no_id, body))
    garbled = standard_webhook_headers(body, timestamp=stamp, secret=STANDARD_SECRET) | {"webhook-signature": "v1,%%"}
    assert "does not match" in refusal(lambda: receiver.receive_webhook(TENANT, garbled, body))


def test_the_v1_scheme_still_works_and_logs_its_deprecation(
    services: Services, caplog: pytest.LogCaptureFixture
) -> None:
    ItemStoreTenantSecrets(services.items, services.clock).put(TENANT, "webhook", SecretStr(WEBHOOK_SECRET))
    body = webhook_body("msg-v1")
    accepted = services.ingestion.receive_webhook(TENANT, webhook_headers(body, timestamp=now(services)), body)
    assert accepted.outcome is Outcome.ACCEPTED and accepted.event_id == "webhook:msg-v1"
    assert any("deprecated X-Rapport-Signature" in r.getMessage() for r in caplog.records)
    # And the same secret signs Standard Webhooks too, so a sender can move without a new secret
    standard = standard_webhook_headers(body, message_id="msg-std", timestamp=now(services))
    assert services.ingestion.receive_webhook(TENANT, standard, body).outcome is Outcome.ACCEPTED
