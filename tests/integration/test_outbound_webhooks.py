"""Outbound webhooks end to end in process: registered on a local HTTP receiver, caused by real writes, verified
with the `standardwebhooks` library, retried after a 500; and the endpoint store on both stores."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from standardwebhooks import Webhook

from rapport.adapters.dynamodb.store import DynamoDbMemoryStore
from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.adapters.local.webhook_thread import ThreadWebhookDispatch
from rapport.clock import FixedClock, SystemClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, Message, MessageRole
from rapport.domain.scope import Scope
from rapport.domain.webhooks import DeliveryAttempt, OutboundEventType, forbidden_address, retry_delay
from rapport.errors import InvalidInputError, NotFoundError
from rapport.ports.items import ItemQuery, ItemScope
from rapport.services.interactions import NewInteraction
from rapport.services.memories import NewMemory
from rapport.services.webhooks import WebhookEndpoints, WebhookRepository
from rapport.settings import EmbedderKind, Settings
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.integration

TENANT = "acme"
DANA = Scope(TENANT, "dana")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Services]:
    """The local services on the system clock (the library verifies timestamps against the real time), allowed to
    deliver to http://127.0.0.1, with a short backoff so a retry comes within the test."""
    settings = Settings(
        data_dir=tmp_path / "data",
        embedder=EmbedderKind.HASHING,
        hashing_dimensions=256,
        webhook_allow_local_http=True,
        webhook_retry_base_seconds=0.05,
        webhook_max_attempts=3,
    )
    embedder = HashingEmbedder(settings.hashing_dimensions)
    store = SqliteMemoryStore(settings.sqlite_path)
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    built = build_services(settings, clock=SystemClock(), store=store, index=index, embedder=embedder)
    yield built
    dispatch = built.webhooks.dispatch
    assert isinstance(dispatch, ThreadWebhookDispatch)
    dispatch.idle(timeout=5)
    store.close()
    index.close()


def drained(services: Services) -> None:
    dispatch = services.webhooks.dispatch
    assert isinstance(dispatch, ThreadWebhookDispatch)
    assert dispatch.idle(timeout=10), "deliveries still pending"


def test_a_stored_memory_reaches_the_endpoint_signed_and_without_its_text(live: Services, receiver: Receiver) -> None:
    # Given an endpoint registered for memory.stored (the secret is answered once, in the Standard Webhooks form)
    endpoint = live.webhooks.endpoints.register(TENANT, receiver.url, [OutboundEventType.MEMORY_STORED])
    assert endpoint.secret.startswith("whsec_")
    # When a memory is stored
    memory = live.memories.remember(DANA, NewMemory(content="Dana adopted a greyhound named Juno", domain=Domain.USER))
    # Then the endpoint receives one request that the standardwebhooks library verifies with that secret
    ((headers, body),) = receiver.wait_for(1)
    payload = Webhook(endpoint.secret).verify(body, headers)
    assert payload["type"] == "memory.stored"
    assert payload["data"] == {"user_id": "dana", "memory_ids": [memory.id], "count": 1}
    assert headers["webhook-id"].startswith("evt_")
    # And no memory text left the service
    assert b"greyhound" not in body and b"Juno" not in body
    # And a wrong secret does not verify it
    with pytest.raises(Exception, match="signature"):
        Webhook("whsec_" + "QUJD" * 8).verify(body, headers)
    drained(live)
    (logged,) = live.webhooks.endpoints.deliveries(TENANT, endpoint.id, limit=10, cursor=None).items
    assert logged.delivered and logged.status_code == 200 and logged.event_id == headers["webhook-id"]


def test_a_500_then_a_200_shows_the_retry_in_the_delivery_log(live: Services) -> None:
    flaky = Receiver([500])
    try:
        endpoint = live.webhooks.endpoints.register(TENANT, flaky.url, [OutboundEventType.MEMORY_STORED])
        live.memories.remember(DANA, NewMemory(content="Dana runs on Sundays", domain=Domain.USER))
        (first, second) = flaky.wait_for(2)
        drained(live)
    finally:
        flaky.close()
    # The same event id on both attempts, so the receiver can deduplicate; the signature is fresh each time
    assert first[0]["webhook-id"] == second[0]["webhook-id"]
    Webhook(endpoint.secret).verify(second[1], second[0])
    log = live.webhooks.endpoints.deliveries(TENANT, endpoint.id, limit=10, cursor=None).items
    # Newest first: attempt 2 delivered, attempt 1 answered 500
    assert [(a.attempt, a.status_code, a.delivered) for a in log] == [(2, 200, True), (1, 500, False)]
    assert log[1].error == "the endpoint answered 500"


def test_a_receiver_that_keeps_failing_is_given_up_after_the_bounded_attempts(live: Services) -> None:
    down = Receiver([503, 503, 503, 503])
    try:
        endpoint = live.webhooks.endpoints.register(TENANT, down.url, [OutboundEventType.MEMORY_STORED])
        live.memories.remember(DANA, NewMemory(content="Dana likes tea", domain=Domain.USER))
        down.wait_for(3)
        drained(live)
        assert len(down.requests) == 3  # webhook_max_attempts
    finally:
        down.close()
    log = live.webhooks.endpoints.deliveries(TENANT, endpoint.id, limit=10, cursor=None).items
    assert [a.attempt for a in log] == [3, 2, 1] and not any(a.delivered for a in log)


def test_erasing_a_user_sends_user_erased_with_the_hash_not_the_id(live: Services, receiver: Receiver) -> None:
    endpoint = live.webhooks.endpoints.register(TENANT, receiver.url, [OutboundEventType.USER_ERASED])
    live.memories.remember(DANA, NewMemory(content="Dana lives in Lisbon", domain=Domain.USER))
    live.privacy.erase_user(DANA, actor="test")
    # Only the erasure: the endpoint did not subscribe to memory.stored
    ((headers, body),) = receiver.wait_for(1)
    payload = Webhook(endpoint.secret).verify(body, headers)
    assert payload["type"] == "user.erased"
    assert payload["data"]["user_hash"] == DANA.user_hash
    assert payload["data"]["counts"]["memories"] == 1
    assert b"dana" not in body
    drained(live)
    assert len(receiver.requests) == 1


def test_a_recorded_interaction_announces_interaction_processed(live: Services, receiver: Receiver) -> None:
    endpoint = live.webhooks.endpoints.register(TENANT, receiver.url, [OutboundEventType.INTERACTION_PROCESSED])
    said = [
        Message(role=MessageRole.USER, content="I just started a new job at the aquarium and I love it"),
        Message(role=MessageRole.ASSISTANT, content="Congratulations on the aquarium job!"),
    ]
    recorded = live.interactions.record(DANA, NewInteraction(messages=said))
    ((headers, body),) = receiver.wait_for(1)
    payload = Webhook(endpoint.secret).verify(body, headers)
    assert payload["type"] == "interaction.processed"
    assert payload["data"]["interaction_id"] == recorded.interaction.id
    assert set(payload["data"]) == {"user_id", "interaction_id", "stored", "reinforced", "invalidated"}
    assert b"aquarium" not in body


def test_a_deleted_endpoint_receives_nothing_more_and_answers_404(live: Services, receiver: Receiver) -> None:
    endpoints = live.webhooks.endpoints
    endpoint = endpoints.register(TENANT, receiver.url, list(OutboundEventType))
    endpoints.delete(TENANT, endpoint.id)
    live.memories.remember(DANA, NewMemory(content="Dana plays chess", domain=Domain.USER))
    drained(live)
    assert receiver.requests == []
    with pytest.raises(NotFoundError):
        endpoints.get(TENANT, endpoint.id)
    with pytest.raises(NotFoundError):
        endpoints.deliveries(TENANT, endpoint.id, limit=10, cursor=None)
    # Another tenant cannot see or delete one either
    other = endpoints.register(TENANT, receiver.url, [OutboundEventType.USER_ERASED])
    with pytest.raises(NotFoundError):
        endpoints.get("globex", other.id)
    with pytest.raises(NotFoundError):
        endpoints.delete("globex", other.id)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://hooks.example.com/x", "must be https"),
        ("ftp://hooks.example.com/x", "must be https"),
        ("https://user:pw@hooks.example.com/x", "credentials"),
        ("https:///nohost", "host"),
        ("https://10.0.0.7/x", "private address"),
        ("https://169.254.169.254/latest/meta-data", "link-local"),
        ("https://[fd00::1]/x", "private address"),
        ("https://[::ffff:192.168.1.1]/x", "private address"),
        ("https://127.0.0.1/x", "loopback"),
        ("https://0.0.0.0/x", "0.0.0.0 is a"),
        ("https://100.64.1.1/x", "private address"),
        ("https://hooks.invalid/x", "does not resolve"),
        ("https://example.com:99999/x", "not a URL"),
    ],
)
def test_an_endpoint_must_be_https_on_the_public_internet(services: Services, url: str, reason: str) -> None:
    # The default settings: no local http
    with pytest.raises(InvalidInputError, match=reason):
        services.webhooks.endpoints.register(TENANT, url, [OutboundEventType.MEMORY_STORED])


def test_local_http_is_refused_unless_the_setting_allows_it(services: Services) -> None:
    with pytest.raises(InvalidInputError, match="RAPPORT_WEBHOOK_ALLOW_LOCAL_HTTP"):
        services.webhooks.endpoints.register(TENANT, "http://127.0.0.1:9/x", [OutboundEventType.USER_ERASED])
    with pytest.raises(InvalidInputError, match="at least one"):
        services.webhooks.endpoints.register(TENANT, "https://8.8.8.8/x", [])


def test_the_address_rules_and_the_backoff() -> None:
    assert forbidden_address("8.8.8.8", allow_loopback=False) is None
    assert forbidden_address("2606:4700:4700::1111", allow_loopback=False) is None
    assert forbidden_address("127.0.0.1", allow_loopback=True) is None
    assert forbidden_address("fe80::1%eth0", allow_loopback=True) is not None
    assert [retry_delay(n, base_seconds=30, max_seconds=900) for n in range(1, 7)] == [30, 60, 120, 240, 480, 900]


# --- the endpoint store, on both stores through the ItemStore port ---------------------------------------------


class NoDns:
    def addresses(self, host: str) -> list[str]:
        return ["93.184.215.14"]


def test_endpoints_and_their_log_on_each_store(any_store: DynamoDbMemoryStore | SqliteMemoryStore) -> None:
    clock = FixedClock(datetime(2026, 1, 5, 9, 0, tzinfo=UTC))
    repository = WebhookRepository(any_store, clock, log_kept_for=timedelta(days=30))
    endpoints = WebhookEndpoints(repository, NoDns(), Settings(webhook_max_endpoints=2), clock)
    # Given two endpoints of one tenant and one of another
    first = endpoints.register(TENANT, "https://hooks.example.com/a", [OutboundEventType.MEMORY_STORED])
    second = endpoints.register(
        TENANT, "https://hooks.example.com/b", [OutboundEventType.USER_ERASED, OutboundEventType.MEMORY_STORED]
    )
    endpoints.register("globex", "https://hooks.example.com/c", [OutboundEventType.USER_ERASED])
    # Then the tenant lists its own two, oldest first, secrets kept for signing
    listed = endpoints.list(TENANT)
    assert [e.id for e in listed] == [first.id, second.id]
    assert listed[1].event_types == [OutboundEventType.MEMORY_STORED, OutboundEventType.USER_ERASED]
    assert endpoints.get(TENANT, first.id).secret == first.secret
    # And a third is over the cap
    with pytest.raises(InvalidInputError, match="at most 2"):
        endpoints.register(TENANT, "https://hooks.example.com/d", [OutboundEventType.MEMORY_STORED])
    # When three attempts are logged, the log pages newest first
    for n in (1, 2, 3):
        attempt = DeliveryAttempt(
            event_id="evt_1",
            event_type=OutboundEventType.MEMORY_STORED,
            attempt=n,
            status_code=500 if n < 3 else 200,
            delivered=n == 3,
            at=clock.now() + timedelta(seconds=n),
        )
        repository.log(TENANT, first.id, attempt)
    page = endpoints.deliveries(TENANT, first.id, limit=2, cursor=None)
    assert [a.attempt for a in page.items] == [3, 2] and page.next_cursor
    rest = endpoints.deliveries(TENANT, first.id, limit=2, cursor=page.next_cursor)
    assert [a.attempt for a in rest.items] == [1] and rest.next_cursor is None
    assert endpoints.deliveries(TENANT, second.id, limit=10, cursor=None).items == []
    # When the endpoint is deleted, its log can no longer be read, and it expires with its TTL
    endpoints.delete(TENANT, first.id)
    assert [e.id for e in endpoints.list(TENANT)] == [second.id]
    with pytest.raises(NotFoundError):
        endpoints.deliveries(TENANT, first.id, limit=10, cursor=None)
    expiring = any_store.list_items(
        ItemScope(tenant_id=TENANT), ItemQuery(kind="WEBHOOK_DELIVERY", key_prefix=first.id)
    )
    assert {i.expires_at for i in expiring.items} == {clock.now() + timedelta(days=30, seconds=n) for n in (1, 2, 3)}


def test_the_delivery_job_survives_its_wire_form() -> None:
    from rapport.domain.webhooks import DeliveryJob, OutboundEvent

    event = OutboundEvent(
        id="evt_1",
        type=OutboundEventType.USER_ERASED,
        tenant_id=TENANT,
        occurred_at=datetime(2026, 1, 5, tzinfo=UTC),
        data={"user_hash": "sha256:x"},
    )
    job = DeliveryJob(endpoint_id="whe_1", event=event, attempt=2)
    assert DeliveryJob.model_validate(json.loads(job.model_dump_json())) == job
