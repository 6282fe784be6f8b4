"""Keyed writes as a client sees them: the same Idempotency-Key sent again — in sequence, at the same time, or after
an attempt that stopped half way — stores one interaction (or memory) and answers the first answer again."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest

from rapport.adapters.dynamodb.store import DynamoDbMemoryStore
from rapport.api.app import create_lambda_app
from rapport.api.schemas import CreateInteractionRequest
from rapport.composition.services import Services, build_services
from rapport.domain.scope import Scope
from rapport.errors import RequestInProgressError
from rapport.ports.items import ItemScope
from rapport.services.idempotency import KeyedRequest
from rapport.services.interactions import InteractionService, NewInteraction
from rapport.services.memories import MemoryService, NewMemory
from rapport.settings import Settings
from tests.integration.api_events import FakeLambdaContext, rest_event
from tests.integration.conftest import TABLE_NAME

T, U = "tenant-a", "dana"
SCOPE = Scope(T, U)
CONVERSATION = {
    "messages": [
        {"role": "user", "content": "I'm getting a 500 on /users again. It's our main API at work."},
        {"role": "assistant", "content": "Let's add step-by-step logging around the request handlers."},
        {"role": "user", "content": "It was the auth middleware, thanks — the step-by-step logging really helped"},
    ],
    "session_id": "s-1",
}
MEMORY = {"content": "Dana's sister Maria lives in Lisbon", "domain": "user", "type": "fact"}


class SimulatedTimeout(BaseException):
    """Lambda stopping a function mid-request: nothing after it runs, no `except Exception` sees it."""


@pytest.fixture(params=["sqlite", "dynamodb"])
def world(request: pytest.FixtureRequest, settings: Settings, clock: Any) -> Iterator[Services]:
    """The local services over SQLite (the ItemStore persistence layer) or moto's DynamoDB (Powertools' own)."""
    # A first attempt that stopped blocks its key for this long (in Lambda: the function's remaining time).
    settings = settings.model_copy(update={"idempotency_in_progress_seconds": 0.3})
    if request.param == "sqlite":
        from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
        from rapport.adapters.local.hashing_embedder import HashingEmbedder
        from rapport.adapters.local.sqlite_store import SqliteMemoryStore

        embedder = HashingEmbedder(settings.hashing_dimensions)
        store = SqliteMemoryStore(settings.sqlite_path)
        index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
        yield build_services(settings, clock=clock, store=store, index=index, embedder=embedder)
        store.close()
        index.close()
        return
    from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
    from rapport.adapters.local.hashing_embedder import HashingEmbedder

    moto_dynamodb = request.getfixturevalue("moto_dynamodb")
    embedder = HashingEmbedder(settings.hashing_dimensions)
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    store = DynamoDbMemoryStore(TABLE_NAME, dynamodb_resource=moto_dynamodb)
    yield build_services(settings, clock=clock, store=store, index=index, embedder=embedder)
    index.close()


# What a function has left in these tests: Powertools keeps a first attempt's key blocked that long, no longer. Long
# enough that a busy machine still asks again inside it; a test waits it out with `past_the_deadline`.
REMAINING_MS = 3000


class ShortLambdaContext(FakeLambdaContext):
    """A function with `REMAINING_MS` left."""

    def get_remaining_time_in_millis(self) -> int:
        return REMAINING_MS


def past_the_deadline() -> None:
    time.sleep(REMAINING_MS / 1000 + 0.1)


def post(services: Services, path: str, body: Any, key: str | None = "key-1") -> dict[str, Any]:
    headers = {"Idempotency-Key": key} if key is not None else {}
    event = rest_event("POST", path, body, tenant=T, headers=headers)
    return create_lambda_app(services).resolve(event, ShortLambdaContext())


def as_sent(model: Any, body: dict[str, Any]) -> dict[str, Any]:
    """What the API compares retries by: the body as the route parsed it."""
    return dict(model.model_validate(body).model_dump(mode="json"))


def body_of(response: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(response["body"]))


def header(response: dict[str, Any], name: str) -> str | None:
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    multi = {k.lower(): v for k, v in (response.get("multiValueHeaders") or {}).items()}
    return headers.get(name.lower()) or (multi.get(name.lower()) or [None])[0]


def replayed_header(response: dict[str, Any]) -> str | None:
    return header(response, "Idempotent-Replayed")


def stored(services: Services) -> tuple[list[str], list[str]]:
    """The interactions' ids and every memory's id of the end user."""
    interactions = [i.id for i in services.interactions.history(SCOPE, limit=100, cursor=None).items]
    memories = sorted(m.id for m in services.store.iter_all_memories(T) if m.user_id == U)
    return interactions, memories


INTERACTIONS = f"/v1/users/{U}/interactions"
MEMORIES = f"/v1/users/{U}/memories"


# --- POST /interactions -------------------------------------------------------------------------------------------


def test_a_repeated_keyed_interaction_is_recorded_once_and_answered_again(world: Services) -> None:
    # Given a conversation posted with a key, its pipeline run to the end
    first = post(world, INTERACTIONS, CONVERSATION)
    assert first["statusCode"] == 201, first["body"]
    assert replayed_header(first) == "false"
    after_first = stored(world)
    assert len(after_first[0]) == 1 and len(after_first[1]) > len(CONVERSATION["messages"])  # episodes + extracted
    # When the client retries it (its first answer timed out on the way back)
    second = post(world, INTERACTIONS, CONVERSATION)
    # Then it gets the first answer again, marked replayed, and nothing more is stored
    assert second["statusCode"] == 201
    assert replayed_header(second) == "true"
    assert body_of(second) == body_of(first)
    assert stored(world) == after_first


def test_an_unkeyed_interaction_is_recorded_each_time_as_before(world: Services) -> None:
    first = post(world, INTERACTIONS, CONVERSATION, key=None)
    post(world, INTERACTIONS, CONVERSATION, key=None)
    assert replayed_header(first) is None
    assert len(stored(world)[0]) == 2


def test_the_interaction_id_derives_from_the_key_and_sorts_by_when_it_was_first_sent(world: Services) -> None:
    one = body_of(post(world, INTERACTIONS, CONVERSATION, key="a"))["interaction"]["id"]
    world.clock.advance(timedelta(seconds=5))  # type: ignore[attr-defined]
    two = body_of(post(world, INTERACTIONS, CONVERSATION, key="b"))["interaction"]["id"]
    assert one != two
    assert stored(world)[0] == [two, one]  # newest first, as unkeyed interactions are


def test_the_same_key_with_another_body_is_refused_and_stores_nothing(world: Services) -> None:
    post(world, INTERACTIONS, CONVERSATION)
    before = stored(world)
    other = {**CONVERSATION, "session_id": "s-2"}
    response = post(world, INTERACTIONS, other)
    assert response["statusCode"] == 422
    assert body_of(response)["error"] == "idempotency_key_reused"
    assert stored(world) == before


def test_a_key_is_per_end_user(world: Services) -> None:
    post(world, INTERACTIONS, CONVERSATION)
    other = post(world, "/v1/users/sam/interactions", CONVERSATION)
    assert other["statusCode"] == 201 and replayed_header(other) == "false"
    assert body_of(other)["interaction"]["user_id"] == "sam"


def test_simultaneous_keyed_interactions_record_one(world: Services) -> None:
    # Given eight copies of one keyed request sent at once (a client retrying on several connections)
    keyed = KeyedRequest(route="interactions", key="key-1", request=CONVERSATION)
    new = NewInteraction.model_validate(CONVERSATION)
    start = threading.Barrier(8)
    answers: list[Any] = []

    def send() -> None:
        start.wait()
        try:
            answers.append(world.keyed_writes.record(SCOPE, new, keyed, wait=True).value.interaction.id)
        except RequestInProgressError as exc:
            answers.append(exc)

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Then one interaction is stored; each copy got it or was told the first is still in progress
    (interaction_id,) = stored(world)[0]
    assert {a for a in answers if isinstance(a, str)} == {interaction_id}
    assert all(a == interaction_id or isinstance(a, RequestInProgressError) for a in answers)
    # And a retry after they finished gets the same interaction, replayed
    again = world.keyed_writes.record(SCOPE, new, keyed, wait=True)
    assert again.replayed is True and again.value.interaction.id == interaction_id


def test_a_duplicate_while_the_first_is_in_progress_is_a_409_with_retry_after(
    world: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a first attempt that is still embedding its episodes
    entered, release = threading.Event(), threading.Event()
    embedded = MemoryService.embedded

    def slow(self: MemoryService, memories: list[Any]) -> list[Any]:
        entered.set()
        release.wait(10)
        return embedded(self, memories)

    monkeypatch.setattr(MemoryService, "embedded", slow)
    keyed = KeyedRequest(route="interactions", key="key-1", request=as_sent(CreateInteractionRequest, CONVERSATION))
    first = threading.Thread(
        target=world.keyed_writes.record,
        args=(SCOPE, NewInteraction.model_validate(CONVERSATION), keyed),
        kwargs={"wait": False},
    )
    first.start()
    assert entered.wait(10)
    # When the same request comes again
    response = post(world, INTERACTIONS, CONVERSATION)
    release.set()
    first.join()
    # Then it is told to retry in a moment, and nothing of it was stored twice
    assert response["statusCode"] == 409
    assert body_of(response)["error"] == "request_in_progress"
    assert int(header(response, "Retry-After") or 0) >= 1
    assert len(stored(world)[0]) == 1


def test_a_retry_after_an_attempt_stopped_after_its_commit_completes_it_once(
    world: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the first attempt is stopped (a function timeout) after its interaction was committed, before the
    # pipeline started and before it could answer or close its idempotency record
    start_pipeline = InteractionService._start_pipeline
    stops: list[str] = []

    def stopped_once(self: InteractionService, interaction: Any, wait: bool, **how: Any) -> Any:
        if not stops:
            stops.append(interaction.id)
            raise SimulatedTimeout
        return start_pipeline(self, interaction, wait, **how)

    monkeypatch.setattr(InteractionService, "_start_pipeline", stopped_once)
    with pytest.raises(SimulatedTimeout):
        post(world, INTERACTIONS, CONVERSATION)
    (interaction_id,) = stored(world)[0]
    episodes_only = stored(world)[1]
    # While the stopped attempt's deadline has not passed, a retry is told the request is in progress
    assert post(world, INTERACTIONS, CONVERSATION)["statusCode"] == 409
    # When the client retries after it
    past_the_deadline()
    retry = post(world, INTERACTIONS, CONVERSATION)
    # Then it answers the interaction the first attempt recorded, and only now the pipeline ran: once
    assert retry["statusCode"] == 201, retry["body"]
    assert replayed_header(retry) == "true"
    assert body_of(retry)["interaction"]["id"] == interaction_id
    interactions, memories = stored(world)
    assert interactions == [interaction_id]
    assert set(episodes_only) < set(memories)  # the extracted memories joined the episodes
    # And a third attempt answers exactly what the retry answered
    third = post(world, INTERACTIONS, CONVERSATION)
    assert body_of(third) == body_of(retry)
    assert stored(world) == (interactions, memories)


def test_a_retry_after_a_failed_attempt_records_the_interaction_once(
    world: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the first attempt fails after its commit, in a follower (taken back, answered 500)
    people = type(world.people)
    plan = people.plan
    failures: list[bool] = []

    def fail_once(self: Any, interaction: Any, read: Any) -> Any:
        if not failures:
            failures.append(True)
            raise RuntimeError("people store down")
        return plan(self, interaction, read)

    monkeypatch.setattr(people, "plan", fail_once)
    assert post(world, INTERACTIONS, CONVERSATION)["statusCode"] == 500
    assert stored(world) == ([], [])
    # When the client retries with the same key
    retry = post(world, INTERACTIONS, CONVERSATION)
    # Then it is recorded now, once, as a first answer (nothing had been stored to replay)
    assert retry["statusCode"] == 201 and replayed_header(retry) == "false"
    assert len(stored(world)[0]) == 1


def test_idempotency_records_live_in_the_end_users_partition_and_go_with_an_erasure(world: Services) -> None:
    post(world, INTERACTIONS, CONVERSATION)
    world.store.erase_user(SCOPE)
    # The same key after an erasure is a new request: the record went with the user's data
    again = post(world, INTERACTIONS, CONVERSATION)
    assert again["statusCode"] == 201 and replayed_header(again) == "false"


# --- POST /memories and /memories/batch ---------------------------------------------------------------------------


def test_a_repeated_keyed_memory_is_stored_once_and_answered_again(world: Services) -> None:
    first = post(world, MEMORIES, MEMORY)
    second = post(world, MEMORIES, MEMORY)
    assert first["statusCode"] == second["statusCode"] == 201
    assert (replayed_header(first), replayed_header(second)) == ("false", "true")
    assert body_of(second) == body_of(first)
    assert stored(world)[1] == [body_of(first)["id"]]


def test_the_same_memory_key_with_another_body_is_refused(world: Services) -> None:
    post(world, MEMORIES, MEMORY)
    response = post(world, MEMORIES, {**MEMORY, "content": "Maria moved to Porto"})
    assert response["statusCode"] == 422 and body_of(response)["error"] == "idempotency_key_reused"
    assert len(stored(world)[1]) == 1


def test_simultaneous_keyed_memories_store_one(world: Services) -> None:
    keyed = KeyedRequest(route="memories", key="key-1", request=MEMORY)
    new = NewMemory.model_validate(MEMORY)
    start = threading.Barrier(8)
    answers: list[Any] = []

    def send() -> None:
        start.wait()
        try:
            answers.append(world.keyed_writes.remember(SCOPE, new, keyed).value.id)
        except RequestInProgressError as exc:
            answers.append(exc)

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (memory_id,) = stored(world)[1]
    assert {a for a in answers if isinstance(a, str)} == {memory_id}


def test_a_retry_after_a_memory_write_that_stopped_before_its_answer_stores_nothing_more(
    world: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember = MemoryService.remember

    def written_then_stopped(self: MemoryService, scope: Scope, new: NewMemory) -> Any:
        remember(self, scope, new)
        raise SimulatedTimeout

    monkeypatch.setattr(MemoryService, "remember", written_then_stopped)
    with pytest.raises(SimulatedTimeout):
        post(world, MEMORIES, MEMORY)
    monkeypatch.undo()
    (memory_id,) = stored(world)[1]
    past_the_deadline()
    retry = post(world, MEMORIES, MEMORY)
    assert retry["statusCode"] == 201 and replayed_header(retry) == "true"
    assert body_of(retry)["id"] == memory_id
    assert stored(world)[1] == [memory_id]


BATCH = {
    "memories": [
        MEMORY,
        {"content": "Dana prefers short answers", "domain": "relational", "type": "communication_preference"},
        {"content": "   ", "domain": "user"},
    ]
}


def test_a_repeated_keyed_batch_is_stored_once_and_answered_again(world: Services) -> None:
    first = post(world, f"{MEMORIES}/batch", BATCH)
    assert first["statusCode"] == 201, first["body"]
    second = post(world, f"{MEMORIES}/batch", BATCH)
    assert replayed_header(second) == "true"
    assert body_of(second) == body_of(first)
    assert body_of(first)["created"] == 2 and body_of(first)["invalid"] == 1
    assert len(stored(world)[1]) == 2


def test_a_batch_retried_after_it_stopped_half_way_writes_only_what_is_missing(
    world: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the first attempt stopped after writing the first memory of the batch
    put_memory = type(world.store).put_memory
    puts: list[str] = []

    def stopped_after_one(self: Any, memory: Any, **kwargs: Any) -> None:
        if puts:
            raise SimulatedTimeout
        puts.append(memory.id)
        put_memory(self, memory, **kwargs)

    monkeypatch.setattr(type(world.store), "put_memory", stopped_after_one)
    with pytest.raises(SimulatedTimeout):
        post(world, f"{MEMORIES}/batch", BATCH)
    monkeypatch.undo()
    assert stored(world)[1] == puts
    past_the_deadline()
    # When it is retried, the batch is completed under the same ids
    retry = post(world, f"{MEMORIES}/batch", BATCH)
    assert retry["statusCode"] == 201, retry["body"]
    ids = [r["memory"]["id"] for r in body_of(retry)["results"] if r["status"] == "created"]
    assert len(ids) == 2 and puts[0] in ids
    assert stored(world)[1] == sorted(ids)


def test_a_bad_key_is_a_400(world: Services) -> None:
    response = post(world, MEMORIES, MEMORY, key="x" * 300)
    assert response["statusCode"] == 400 and body_of(response)["error"] == "invalid_input"
    assert "Idempotency-Key" in body_of(response)["message"]


def count_requests(services: Services) -> Callable[[], int]:
    """DynamoDB requests of the idempotency records (the low-level client Powertools uses)."""
    calls: list[str] = []
    client = services.store.client  # type: ignore[attr-defined]
    client.meta.events.register("before-call.dynamodb", lambda model, **_: calls.append(model.name))
    return lambda: len(calls)


def test_the_records_cost_of_a_keyed_request_in_dynamodb(settings: Settings, clock: Any, moto_dynamodb: Any) -> None:
    # Two guarded steps (name, write): a put and an update each the first time; one conditional put each on a replay
    from rapport.adapters.dynamodb.idempotency import DynamoDbIdempotencyRecords
    from rapport.services.idempotency import IdempotentRequests

    store = DynamoDbMemoryStore(TABLE_NAME, dynamodb_resource=moto_dynamodb)
    records = DynamoDbIdempotencyRecords(TABLE_NAME, connect=lambda: store.client)
    once = IdempotentRequests(records, settings, clock)
    calls: list[str] = []
    store.client.meta.events.register("before-call.dynamodb", lambda model, **_: calls.append(model.name))
    keyed = KeyedRequest(route="memories", key="k", request={"a": 1})
    first = once.run(ItemScope(tenant_id=T, user_id=U), keyed, lambda item_id: {"id": item_id})
    assert calls == ["PutItem", "UpdateItem", "PutItem", "UpdateItem"]
    calls.clear()
    again = once.run(ItemScope(tenant_id=T, user_id=U), keyed, lambda item_id: {"id": "never"})
    assert calls == ["PutItem", "PutItem"] and again.replayed and again.value == first.value
    # And the records sit in the end user's partition, under the table's TTL attribute
    items = moto_dynamodb.Table(TABLE_NAME).scan()["Items"]
    assert {i["pk"] for i in items} == {f"TENANT#{T}#USER#{U}"}
    assert all(i["sk"].startswith("IDEMPOTENCY#memories") and int(i["expires_at"]) > 0 for i in items)


# --- the ingest consumer ------------------------------------------------------------------------------------------


def test_an_ingested_event_whose_attempt_died_is_recorded_by_a_redelivery_once(
    world: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rapport.ingestion.events import InteractionReceived

    event = InteractionReceived.model_validate({**CONVERSATION, "event_id": "slack:Ev1", "tenant_id": T, "user_id": U})
    # Given the consumer's function timed out after recording the interaction, before its pipeline started
    start_pipeline = InteractionService._start_pipeline
    stops: list[bool] = []

    def stopped_once(self: InteractionService, interaction: Any, wait: bool, **how: Any) -> Any:
        if not stops:
            stops.append(True)
            raise SimulatedTimeout
        return start_pipeline(self, interaction, wait, **how)

    monkeypatch.setattr(InteractionService, "_start_pipeline", stopped_once)
    with pytest.raises(SimulatedTimeout):
        world.consumer.handle(event, deadline=ShortLambdaContext())
    (interaction_id,) = stored(world)[0]
    episodes = stored(world)[1]
    # A redelivery within the dead attempt's deadline fails (EventBridge delivers it again later), dropping nothing
    with pytest.raises(RequestInProgressError):
        world.consumer.handle(event, deadline=ShortLambdaContext())
    # After it, the redelivery finds the interaction under the id the event's id names, and completes its pipeline
    past_the_deadline()
    assert world.consumer.handle(event, deadline=ShortLambdaContext()) is None  # recorded before: not again
    interactions, memories = stored(world)
    assert interactions == [interaction_id] and set(episodes) < set(memories)
