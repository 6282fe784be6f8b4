"""The write path as a user sees it: a recorded interaction either answers 2xx with all its effects stored, or an
error with nothing stored, whatever step fails and however it fails; the history item and its episodes never part."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rapport.adapters.dynamodb import keys, records
from rapport.adapters.dynamodb.store import DynamoDbMemoryStore
from rapport.api.app import create_lambda_app
from rapport.composition.services import Services, build_services
from rapport.domain.models import Interaction, Message, MessageRole
from rapport.domain.scope import Scope
from rapport.ports.items import ItemScope
from rapport.ports.pipeline import PipelineRequest
from rapport.services.interactions import NewInteraction
from rapport.services.people import PeopleService
from rapport.services.profiles import ProfileService
from rapport.settings import PipelineMode, Settings
from tests.integration.conftest import TABLE_NAME

T, U = "tenant-a", "dana"
EXCHANGE = [
    ("user", "My sister Maria is visiting next week and I am so happy about it"),
    ("assistant", "That sounds lovely! Shall we plan something for her visit?"),
]


def conversation(messages: list[tuple[str, str]] = EXCHANGE) -> NewInteraction:
    return NewInteraction(
        messages=[Message(role=MessageRole(role), content=text) for role, text in messages], session_id="s-1"
    )


def nothing_stored(services: Services) -> None:
    assert services.interactions.history(Scope(T, U), limit=10, cursor=None).items == []
    assert services.store.count_memories(Scope(T, U)) == 0
    assert services.people.list_people(Scope(T, U), limit=10, cursor=None).items == []
    profile = services.profiles.get(Scope(T, U))
    assert profile is None or profile.interaction_count == 0
    assert services.relational_state.stored(Scope(T, U)).familiarity_at is None  # never moved, or moved back


def api_event(method: str, path: str, body: Any = None) -> dict[str, Any]:
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": {"Content-Type": "application/json"},
        "queryStringParameters": None,
        "pathParameters": None,
        "requestContext": {"authorizer": {"tenant_id": T, "principalId": "p"}, "resourcePath": path},
        "body": json.dumps(body) if body is not None else None,
        "isBase64Encoded": False,
    }


@pytest.mark.parametrize("failure", [OverflowError("date value out of range"), RuntimeError("boom")])
def test_a_failure_after_the_store_write_stores_nothing_and_answers_an_error(
    services: Services, monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    # Given the last step that belongs to the request (people) fails with an error no one expects
    def fail(self: PeopleService, interaction: Interaction, read: Any) -> None:
        raise failure

    monkeypatch.setattr(PeopleService, "plan", fail)
    # When the conversation is posted
    response = create_lambda_app(services).resolve(
        api_event(
            "POST",
            f"/v1/users/{U}/interactions",
            {"messages": [{"role": r, "content": c} for r, c in EXCHANGE]},
        ),
        None,
    )
    # Then the client gets a clear error, and a retry cannot duplicate anything: nothing of it is stored, and the
    # relational state and profile that moved before the failure are back where they were
    assert response["statusCode"] == 500
    assert json.loads(response["body"])["error"] == "internal_error"
    nothing_stored(services)
    assert services.index.count(Scope(T, U)) == 0


def test_derived_work_that_fails_never_fails_a_stored_interaction(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given working memory cannot be written
    def fail(*_: Any) -> None:
        raise RuntimeError("session store down")

    monkeypatch.setattr(type(services.sessions), "plan", fail)
    # When a conversation is recorded, it is stored whole: history, episodes, people, state
    recorded = services.interactions.record(Scope(T, U), conversation())
    assert [i.id for i in services.interactions.history(Scope(T, U), limit=10, cursor=None).items] == [
        recorded.interaction.id
    ]
    assert services.store.count_memories(Scope(T, U)) >= len(EXCHANGE)
    assert services.relational_state.stored(Scope(T, U)).familiarity_at is not None


def test_a_failure_between_the_interactions_writes_leaves_neither_locally(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the history item cannot be serialised, after its episodes were written in the same transaction
    def fail(self: Interaction, **_: Any) -> Any:
        raise ValueError("cannot serialise")

    # Plain rows are written with model_dump_json, sealed ones (the person keys) with model_dump: both fail
    monkeypatch.setattr(Interaction, "model_dump_json", fail)
    monkeypatch.setattr(Interaction, "model_dump", fail)
    with pytest.raises(ValueError, match="cannot serialise"):
        services.interactions.record(Scope(T, U), conversation())
    monkeypatch.undo()
    # Then neither the history item nor any episode is there
    nothing_stored(services)


def dynamodb_services(settings: Settings, clock: Any, moto_dynamodb: Any) -> Services:
    from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
    from rapport.adapters.local.hashing_embedder import HashingEmbedder

    embedder = HashingEmbedder(settings.hashing_dimensions)
    store = DynamoDbMemoryStore(TABLE_NAME, dynamodb_resource=moto_dynamodb)
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    return build_services(settings, clock=clock, store=store, index=index, embedder=embedder)


def test_a_failure_between_the_interactions_writes_leaves_neither_in_dynamodb(
    settings: Settings, clock: Any, moto_dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = dynamodb_services(settings, clock, moto_dynamodb)
    # Given DynamoDB refuses the history item (a key DynamoDB rejects), in the transaction beside its episodes
    original = records.interaction_to_item

    def refused(interaction: Interaction) -> dict[str, Any]:
        return {**original(interaction), keys.SORT_KEY: ""}

    monkeypatch.setattr(records, "interaction_to_item", refused)
    with pytest.raises(Exception):  # noqa: B017 - whichever error: what matters is what is left
        services.interactions.record(Scope(T, U), conversation())
    monkeypatch.undo()
    nothing_stored(services)


def test_a_long_interaction_is_stored_whole_in_dynamodb(settings: Settings, clock: Any, moto_dynamodb: Any) -> None:
    # More episodes than one DynamoDB transaction holds (100 items)
    # (the pipeline is not what this is about, and it would extract from all of them)
    services = dynamodb_services(settings.model_copy(update={"pipeline": PipelineMode.OFF}), clock, moto_dynamodb)
    long = [("user" if i % 2 == 0 else "assistant", f"message number {i} about the garden") for i in range(120)]
    recorded = services.interactions.record(Scope(T, U), conversation(long))
    stored = services.interactions.get(Scope(T, U), recorded.interaction.id)
    assert len(stored.memory_ids) == 120
    assert len(services.store.get_memories(Scope(T, U), stored.memory_ids)) == 120


def test_the_in_process_pipeline_of_a_new_interaction_reads_it_once_and_a_rerun_reads_it_twice(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The request that records an interaction hands it to its run, which opens without reading it or the run's item
    # back; the store step reads the interaction once, right before writing (an erasure may have run meanwhile).
    reads: list[str] = []
    store_type, items_type = type(services.store), type(services.items)
    get_interaction, get_item = store_type.get_interaction, items_type.get_item

    def counted_interaction(self: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append("interaction")
        return get_interaction(self, *args, **kwargs)

    def counted_item(self: Any, scope: Any, kind: str, key: str) -> Any:
        if kind == "PIPELINE":
            reads.append("run")
        return get_item(self, scope, kind, key)

    monkeypatch.setattr(store_type, "get_interaction", counted_interaction)
    monkeypatch.setattr(items_type, "get_item", counted_item)
    recorded = services.interactions.record(Scope(T, U), conversation(), wait=True)
    assert recorded.pipeline is not None and recorded.pipeline.status == "completed"
    assert reads == ["interaction"]
    # A rerun (a replayed dead letter) opens from the store: one read of each, and the interaction again before
    # the store step, which finds the run completed and redoes nothing.
    reads.clear()
    request = PipelineRequest(tenant_id=T, user_id=U, interaction_id=recorded.interaction.id)
    again = services.pipeline.run(request)
    assert again.skipped and reads.count("interaction") == 1 and reads.count("run") == 1


@pytest.fixture(params=["sqlite", "dynamodb"])
def either(request: pytest.FixtureRequest, services: Services, settings: Settings, clock: Any) -> Services:
    if request.param == "sqlite":
        return services
    return dynamodb_services(settings, clock, request.getfixturevalue("moto_dynamodb"))


def test_a_change_between_the_read_and_the_commit_is_read_again_and_counted_once(
    either: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given another interaction moves the relational state after this one read it, before it is committed
    plan = ProfileService.plan
    interfered: list[bool] = []

    def interfering(self: ProfileService, interaction: Interaction, read: Any) -> Any:
        if not interfered:
            interfered.append(True)
            other = interaction.model_copy(update={"id": "01J0OTHER0000000000000000", "metadata": {}})
            either.relational_state.record_interaction(other)
        return plan(self, interaction, read)

    monkeypatch.setattr(ProfileService, "plan", interfering)
    # When the conversation is recorded
    recorded = either.interactions.record(Scope(T, U), conversation())
    # Then its commit, refused as stale, was planned again from what is stored now: one history item, the state
    # moved by both interactions, the profile and the message count by this one
    assert [i.id for i in either.interactions.history(Scope(T, U), limit=10, cursor=None).items] == [
        recorded.interaction.id
    ]
    assert either.relational_state.read(Scope(T, U)).familiarity == pytest.approx(2 * 0.005)
    profile = either.profiles.get(Scope(T, U))
    assert profile is not None and profile.interaction_count == 1
    count = either.items.get_item(ItemScope.of_user(Scope(T, U)), "MESSAGE_COUNT", "")
    assert count is not None and count.body == {"messages": len(EXCHANGE)}


def test_an_index_failure_after_the_commit_takes_the_followers_writes_back_too(
    either: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a first conversation recorded whole
    either.interactions.record(Scope(T, U), conversation())
    scope = ItemScope.of_user(Scope(T, U))
    before = {kind: either.items.get_item(scope, kind, key) for kind, key in FOLLOWED}
    people_before = either.people.list_people(Scope(T, U), limit=10, cursor=None).items

    # When the index refuses the second one's episodes, after its one write was stored
    def refuse(*_: Any) -> None:
        raise RuntimeError("index down")

    monkeypatch.setattr(type(either.index), "upsert", refuse)
    second = conversation([("user", "My friend Tom got a new job and my sister Maria is thrilled"), EXCHANGE[1]])
    with pytest.raises(RuntimeError, match="index down"):
        either.interactions.record(Scope(T, U), second)
    monkeypatch.undo()
    # Then the history, the state, profile, people, working memory and message count are as the first left them
    assert len(either.interactions.history(Scope(T, U), limit=10, cursor=None).items) == 1
    after = {kind: either.items.get_item(scope, kind, key) for kind, key in FOLLOWED}
    assert {kind: item.body if item else None for kind, item in after.items()} == {
        kind: item.body if item else None for kind, item in before.items()
    }
    assert either.people.list_people(Scope(T, U), limit=10, cursor=None).items == people_before


FOLLOWED = [("STATE", ""), ("PROFILE", ""), ("SESSION", "s-1"), ("MESSAGE_COUNT", "")]
