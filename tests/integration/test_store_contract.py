"""Contract suite of the `MemoryStore` port: the same behaviour from DynamoDB (under moto) and from SQLite."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, cast

import boto3
import pytest
from moto import mock_aws

from rapport.adapters.dynamodb import keys as dynamodb_keys
from rapport.adapters.dynamodb import table as dynamodb_table
from rapport.adapters.dynamodb.records import approximate_item_bytes
from rapport.adapters.dynamodb.store import DynamoDbMemoryStore, create_table
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.domain.models import (
    ApiKeyRecord,
    AuditAction,
    AuditEvent,
    Domain,
    DomainFilter,
    Interaction,
    Memory,
    MemoryStatus,
    Message,
    MessageRole,
    Page,
    PrecedingMessage,
    Provenance,
    SourceKind,
    Tier,
    Trust,
)
from rapport.domain.scope import Scope
from rapport.errors import ConflictError, InvalidInputError, NotFoundError, StorageError
from rapport.ids import new_id
from rapport.ports.items import ItemPut, ItemScope, ItemStore
from rapport.ports.store import MemoryStore

pytestmark = pytest.mark.integration

TABLE = "rapport-contract"
REGION = "us-east-1"
BASE_TIME = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
BOTH = DomainFilter.BOTH.domains()
USER_ONLY = DomainFilter.USER.domains()
RELATIONAL_ONLY = DomainFilter.RELATIONAL.domains()


# fixtures


@pytest.fixture
def aws_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # Fake credentials and a region, so no code path can find real ones and reach AWS.
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SECURITY_TOKEN": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture
def dynamodb(aws_environment: None) -> Iterator[Any]:
    """A moto DynamoDB resource holding the table exactly as `create_table` builds it."""
    with mock_aws():
        resource = boto3.resource("dynamodb", region_name=REGION)
        create_table(resource, TABLE)
        yield resource


@pytest.fixture(params=["dynamodb", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    if request.param == "dynamodb":
        resource = request.getfixturevalue("dynamodb")
        yield DynamoDbMemoryStore(TABLE, dynamodb_resource=resource)
        return
    sqlite_store = SqliteMemoryStore(tmp_path / "data" / "rapport.sqlite3")
    yield sqlite_store
    sqlite_store.close()


# factories


def at(seconds: float) -> datetime:
    return BASE_TIME + timedelta(seconds=seconds)


def make_memory(
    *,
    tenant: str = "tenant-a",
    user: str = "user-1",
    second: float = 0,
    domain: Domain = Domain.USER,
    memory_type: str | None = None,
    content: str | None = None,
    embedding: list[float] | None = None,
    **fields: Any,
) -> Memory:
    """A memory created `second` seconds after BASE_TIME; its ULID carries that time, so ids sort as creation does."""
    moment = at(second)
    return Memory(
        id=new_id(moment),
        tenant_id=tenant,
        user_id=user,
        domain=domain,
        type=memory_type or ("fact" if domain is Domain.USER else "shared_context"),
        content=content or f"{domain.value} memory at +{second}s",
        created_at=moment,
        updated_at=moment,
        last_reinforced_at=moment,
        embedding=embedding,
        **fields,
    )


def make_interaction(
    *, tenant: str = "tenant-a", user: str = "user-1", second: float = 0, **fields: Any
) -> Interaction:
    moment = at(second)
    fields.setdefault(
        "messages",
        [
            Message(role=MessageRole.USER, content=f"hello at +{second}s"),
            Message(role=MessageRole.ASSISTANT, content="hi there", name="rapport-bot"),
        ],
    )
    return Interaction(
        id=new_id(moment), tenant_id=tenant, user_id=user, occurred_at=moment, created_at=moment, **fields
    )


def make_audit_event(*, tenant: str = "tenant-a", second: float = 0, target: str = "user-1") -> AuditEvent:
    moment = at(second)
    return AuditEvent(
        id=new_id(moment),
        tenant_id=tenant,
        action=AuditAction.ERASE_USER,
        actor="api-key:default",
        target_user_hash=Scope(tenant, target).user_hash,
        at=moment,
        counts={"memories": 3, "interactions": 1},
    )


def put_memories(store: MemoryStore, count: int, **fields: Any) -> list[Memory]:
    memories = [make_memory(second=i, **fields) for i in range(count)]
    for memory in memories:
        store.put_memory(memory)
    return memories


def random_embedding(dimensions: int = 384, seed: int = 7) -> list[float]:
    rng = random.Random(seed)
    return [rng.uniform(-1.0, 1.0) for _ in range(dimensions)]


def collect_pages(fetch: Callable[[str | None], Page[Any]]) -> list[list[Any]]:
    """Follow next_cursor from the first page to the last; stops a runaway loop instead of hanging."""
    pages: list[list[Any]] = []
    cursor: str | None = None
    for _ in range(100):
        page = fetch(cursor)
        pages.append(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return pages
    raise AssertionError("pagination never ended")


def ids_of(items: list[Any]) -> list[str]:
    return [item.id for item in items]


def newest_first(memories: list[Memory]) -> list[str]:
    return [memory.id for memory in sorted(memories, key=lambda memory: memory.id, reverse=True)]


# memories


def test_memory_round_trips_every_field(store: MemoryStore) -> None:
    # Given a memory with every optional field set, non-ASCII content and a 384-dimension embedding
    linked = new_id(at(-60))
    memory = make_memory(
        domain=Domain.RELATIONAL,
        memory_type="collaboration_outcome",
        content="We fixed the CORS issue together — it was the proxy config ✓",
        embedding=random_embedding(),
        strength=0.42,
        importance=0.9,
        confidence=0.75,
        tier=Tier.LONG_TERM,
        status=MemoryStatus.ARCHIVED,
        associations=[linked],
        source=Provenance(
            kind=SourceKind.INTERACTION,
            interaction_id=new_id(at(-5)),
            message_index=3,
            session_id="session-9",
            channel="slack",
            speaker="user",
        ),
        in_reply_to=PrecedingMessage(speaker="assistant", content="Shall we look at the proxy — ça marche?"),
        metadata={"nested": {"list": [1, 2.5, "x", None], "flag": True}, "ratio": 0.1, "note": "ünïcode"},
        occurred_at=datetime(2024, 4, 30, 9, 30, tzinfo=timezone(timedelta(hours=2))),
        decayed_at=at(-2),
    )

    # When it is stored and read back
    store.put_memory(memory)
    stored = store.get_memory(Scope("tenant-a", "user-1"), memory.id)

    # Then every field survives; the embedding to float32 precision
    assert stored.without_embedding() == memory.without_embedding()
    assert stored.occurred_at == memory.occurred_at  # the same instant, whatever the offset it was given in
    assert stored.embedding is not None and memory.embedding is not None
    assert len(stored.embedding) == 384
    assert stored.embedding == pytest.approx(memory.embedding, rel=1e-6, abs=1e-7)


def test_putting_a_memory_again_replaces_it(store: MemoryStore) -> None:
    original = make_memory(embedding=random_embedding(16))
    store.put_memory(original)

    updated = original.model_copy(
        update={"content": "has two dogs now", "strength": 0.3, "domain": Domain.RELATIONAL, "embedding": None}
    )
    store.put_memory(updated)

    stored = store.get_memory(Scope("tenant-a", "user-1"), original.id)
    assert stored.content == "has two dogs now"
    assert stored.strength == pytest.approx(0.3)
    assert stored.embedding is None  # a replace, not a merge: the old embedding is gone
    assert store.count_memories(Scope("tenant-a", "user-1")) == 1
    # The domain listings follow the new domain, not the old one
    assert store.list_memories(Scope("tenant-a", "user-1"), domains=USER_ONLY, limit=10).items == []
    assert ids_of(store.list_memories(Scope("tenant-a", "user-1"), domains=RELATIONAL_ONLY, limit=10).items) == [
        original.id
    ]


def test_a_conditional_put_replaces_only_what_was_read(store: MemoryStore) -> None:
    # Given a memory, read by two writers that each reinforce it
    original = make_memory(embedding=random_embedding(16))
    store.put_memory(original)
    first = original.model_copy(update={"strength": 0.9, "last_reinforced_at": at(10)})
    second = original.model_copy(update={"strength": 0.8, "last_reinforced_at": at(11)})

    # When both write over the value they read: the first wins, the second is told and nothing of it is written
    store.put_memory(first, if_reinforced_at=original.last_reinforced_at)
    with pytest.raises(ConflictError):
        store.put_memory(second, if_reinforced_at=original.last_reinforced_at)
    assert store.get_memory(Scope("tenant-a", "user-1"), original.id).strength == pytest.approx(0.9)

    # Then a writer that reads again succeeds, and a memory deleted meanwhile is not found (not recreated)
    store.put_memory(second, if_reinforced_at=first.last_reinforced_at)
    assert store.get_memory(Scope("tenant-a", "user-1"), original.id).last_reinforced_at == at(11)
    store.delete_memory(Scope("tenant-a", "user-1"), original.id)
    with pytest.raises(NotFoundError):
        store.put_memory(second, if_reinforced_at=at(11))
    with pytest.raises(NotFoundError):
        store.get_memory(Scope("tenant-a", "user-1"), original.id)


def test_getting_a_missing_memory_is_not_found(store: MemoryStore) -> None:
    with pytest.raises(NotFoundError):
        store.get_memory(Scope("tenant-a", "user-1"), new_id())


@pytest.mark.parametrize(("tenant", "user"), [("tenant-b", "user-1"), ("tenant-a", "user-2")])
def test_another_tenant_or_user_cannot_see_or_delete_a_memory(store: MemoryStore, tenant: str, user: str) -> None:
    memory = make_memory()
    store.put_memory(memory)

    with pytest.raises(NotFoundError):
        store.get_memory(Scope(tenant, user), memory.id)
    with pytest.raises(NotFoundError):
        store.delete_memory(Scope(tenant, user), memory.id)
    assert store.get_memories(Scope(tenant, user), [memory.id]) == []

    assert store.get_memory(Scope("tenant-a", "user-1"), memory.id).id == memory.id  # untouched


def test_get_memories_returns_those_that_exist_across_batches(store: MemoryStore) -> None:
    # Given 120 memories (more than one DynamoDB batch) and one of another tenant
    mine = put_memories(store, 120)
    foreign = make_memory(tenant="tenant-b", second=500)
    store.put_memory(foreign)
    missing = [new_id(at(900 + i)) for i in range(5)]

    # When asked for them mixed with missing ids, a duplicate and the foreign id
    asked = [*missing[:2], *ids_of(mine), mine[0].id, foreign.id, *missing[2:]]
    found = store.get_memories(Scope("tenant-a", "user-1"), asked)

    # Then exactly the existing ones of this tenant come back, once each
    assert sorted(ids_of(found)) == sorted(ids_of(mine))
    assert store.get_memories(Scope("tenant-a", "user-1"), []) == []


def test_list_is_newest_first(store: MemoryStore) -> None:
    memories = put_memories(store, 5)
    page = store.list_memories(Scope("tenant-a", "user-1"), domains=BOTH, limit=10)
    assert ids_of(page.items) == newest_first(memories)
    assert page.next_cursor is None


@pytest.mark.parametrize(("total", "sizes"), [(7, [3, 3, 1]), (6, [3, 3]), (3, [3])])
def test_pages_return_every_memory_exactly_once(store: MemoryStore, total: int, sizes: list[int]) -> None:
    memories = put_memories(store, total)

    pages = collect_pages(
        lambda cursor: store.list_memories(Scope("tenant-a", "user-1"), domains=BOTH, limit=3, cursor=cursor)
    )

    # A full last page still ends with next_cursor None: no cursor leads to an empty page
    assert [len(page) for page in pages] == sizes
    assert [memory_id for page in pages for memory_id in ids_of(page)] == newest_first(memories)


def test_domain_filter_pages_through_one_domain(store: MemoryStore) -> None:
    memories = [make_memory(second=i, domain=Domain.USER if i % 2 else Domain.RELATIONAL) for i in range(9)]
    for memory in memories:
        store.put_memory(memory)
    user_memories = [m for m in memories if m.domain is Domain.USER]
    relational = [m for m in memories if m.domain is Domain.RELATIONAL]

    user_pages = collect_pages(
        lambda cursor: store.list_memories(Scope("tenant-a", "user-1"), domains=USER_ONLY, limit=2, cursor=cursor)
    )
    relational_pages = collect_pages(
        lambda cursor: store.list_memories(Scope("tenant-a", "user-1"), domains=RELATIONAL_ONLY, limit=2, cursor=cursor)
    )

    assert [len(page) for page in user_pages] == [2, 2]
    assert [m for page in user_pages for m in ids_of(page)] == newest_first(user_memories)
    assert [m for page in relational_pages for m in ids_of(page)] == newest_first(relational)
    everything = store.list_memories(Scope("tenant-a", "user-1"), domains=BOTH, limit=20).items
    assert ids_of(everything) == newest_first(memories)


def test_type_filter_with_and_without_a_domain(store: MemoryStore) -> None:
    preferences = [make_memory(second=i, memory_type="preference") for i in (1, 4, 6)]
    facts = [make_memory(second=i, memory_type="fact") for i in (2, 5)]
    patterns = [make_memory(second=i, domain=Domain.RELATIONAL, memory_type="interaction_pattern") for i in (3, 7)]
    for memory in [*preferences, *facts, *patterns]:
        store.put_memory(memory)

    def listed(domains: tuple[Domain, ...], memory_type: str) -> list[str]:
        return ids_of(
            store.list_memories(Scope("tenant-a", "user-1"), domains=domains, memory_type=memory_type, limit=10).items
        )

    assert listed(BOTH, "preference") == newest_first(preferences)
    assert listed(USER_ONLY, "preference") == newest_first(preferences)
    assert listed(RELATIONAL_ONLY, "interaction_pattern") == newest_first(patterns)
    assert listed(RELATIONAL_ONLY, "preference") == []
    assert listed(BOTH, "goal") == []


def test_a_listed_memory_is_the_memory_read_by_key_every_field_but_the_embedding(store: MemoryStore) -> None:
    # Listing by domain or type reads an index that leaves the embedding out (DynamoDB); nothing else may be missing
    memory = make_memory(
        memory_type="preference",
        embedding=random_embedding(16),
        strength=0.4,
        tier=Tier.LONG_TERM,
        associations=[new_id(at(-1))],
        source=Provenance(kind=SourceKind.INTERACTION, interaction_id=new_id(at(-2)), message_index=1, speaker="Ana"),
        in_reply_to=PrecedingMessage(speaker="assistant", content="Tea or coffee?"),
        metadata={"slot": "drink"},
        occurred_at=at(-3),
        decayed_at=at(-1),
    )
    store.put_memory(memory)
    by_key = store.get_memory(Scope("tenant-a", "user-1"), memory.id).without_embedding()
    for listed in (
        store.list_memories(Scope("tenant-a", "user-1"), domains=(Domain.USER,), limit=5),
        store.list_memories(Scope("tenant-a", "user-1"), domains=(Domain.USER,), memory_type="preference", limit=5),
        store.list_memories(Scope("tenant-a", "user-1"), domains=(Domain.USER, Domain.RELATIONAL), limit=5),
    ):
        assert [m.without_embedding() for m in listed.items] == [by_key]


@pytest.mark.parametrize("trust", list(Trust))
def test_trust_and_a_quarantine_survive_a_read_by_key_a_batch_and_every_listing(
    store: MemoryStore, trust: Trust
) -> None:
    # Given a quarantined memory whose trust is not the one its source implies (an assistant named "Ava")
    scope = Scope("tenant-a", "user-1")
    memory = make_memory(
        memory_type="episode",
        trust=trust,
        status=MemoryStatus.QUARANTINED,
        source=Provenance(kind=SourceKind.INTERACTION, interaction_id=new_id(at(-2)), message_index=1, speaker="Ava"),
        metadata={"quarantine": {"detector": "rules:instructions", "reason": "reads as instructions"}},
    )
    store.put_memory(memory)

    # Then every read gives both back as written
    reads = [
        store.get_memory(scope, memory.id),
        *store.get_memories(scope, [memory.id]),
        *store.list_memories(scope, domains=USER_ONLY, limit=5).items,
        *store.list_memories(scope, domains=BOTH, memory_type="episode", limit=5).items,
        *store.list_memories(scope, domains=BOTH, limit=5).items,
    ]
    assert [(m.trust, m.status) for m in reads] == [(trust, MemoryStatus.QUARANTINED)] * 5


def test_type_and_domain_filter_pages_through_sparse_matches(store: MemoryStore) -> None:
    # Given a type used in both domains: 3 old relational "note"s under 60 newer user "note"s, so the few matches
    # hide far behind what a single read of the type returns
    relational = [make_memory(second=i, domain=Domain.RELATIONAL, memory_type="note") for i in range(3)]
    user_notes = [make_memory(second=10 + i, memory_type="note") for i in range(60)]
    for memory in [*relational, *user_notes]:
        store.put_memory(memory)

    pages = collect_pages(
        lambda cursor: store.list_memories(
            Scope("tenant-a", "user-1"), domains=RELATIONAL_ONLY, memory_type="note", limit=2, cursor=cursor
        )
    )

    assert [len(page) for page in pages] == [2, 1]
    assert [m for page in pages for m in ids_of(page)] == newest_first(relational)


def test_count_covers_every_domain_and_status_of_one_user(store: MemoryStore) -> None:
    store.put_memory(make_memory(second=1))
    store.put_memory(make_memory(second=2, domain=Domain.RELATIONAL, status=MemoryStatus.ARCHIVED))
    store.put_memory(make_memory(second=3, status=MemoryStatus.INVALIDATED))
    store.put_memory(make_memory(second=4, user="user-2"))
    store.put_interaction(make_interaction(second=5))

    assert store.count_memories(Scope("tenant-a", "user-1")) == 3
    assert store.count_memories(Scope("tenant-a", "user-2")) == 1
    assert store.count_memories(Scope("tenant-b", "user-1")) == 0


def test_delete_removes_one_memory(store: MemoryStore) -> None:
    keep, doomed = put_memories(store, 2)

    store.delete_memory(Scope("tenant-a", "user-1"), doomed.id)

    with pytest.raises(NotFoundError):
        store.get_memory(Scope("tenant-a", "user-1"), doomed.id)
    with pytest.raises(NotFoundError):
        store.delete_memory(Scope("tenant-a", "user-1"), doomed.id)
    assert ids_of(store.list_memories(Scope("tenant-a", "user-1"), domains=BOTH, limit=10).items) == [keep.id]
    assert store.count_memories(Scope("tenant-a", "user-1")) == 1


def test_iter_all_memories_of_one_tenant_or_all(store: MemoryStore) -> None:
    # "acme" is a prefix of "acme2": the tenant filter must not match by prefix
    acme = [make_memory(tenant="acme", user=f"user-{i}", second=i) for i in range(3)]
    acme2 = [make_memory(tenant="acme2", second=10)]
    for memory in [*acme, *acme2]:
        store.put_memory(memory)
    store.put_interaction(make_interaction(tenant="acme"))

    assert sorted(ids_of(list(store.iter_all_memories("acme")))) == sorted(ids_of(acme))
    assert sorted(ids_of(list(store.iter_all_memories()))) == sorted(ids_of([*acme, *acme2]))
    assert list(store.iter_all_memories("nobody")) == []


# interactions


def test_interaction_round_trips(store: MemoryStore) -> None:
    interaction = make_interaction(
        channel="slack",
        session_id="session-1",
        metadata={"thread": "T-1", "score": 0.5},
        memory_ids=[new_id(), new_id()],
    )
    store.put_interaction(interaction)

    assert store.get_interaction(Scope("tenant-a", "user-1"), interaction.id) == interaction


def test_an_interaction_is_stored_with_its_registration_and_item_writes_or_not_at_all(store: MemoryStore) -> None:
    items = cast(ItemStore, store)  # both stores keep items in the same table or file
    dana = ItemScope(tenant_id="tenant-a", user_id="user-1")
    items.put_item(dana, "STATE", "", {"trust": 0.5}, now=at(0))
    episode = make_memory(second=1)
    first = make_interaction(second=1, memory_ids=[episode.id])
    # Given a write planned from version 1 of the state, which someone has moved on since
    items.put_item(dana, "STATE", "", {"trust": 0.6}, now=at(0))
    stale = [
        ItemPut(kind="STATE", key="", body={"trust": 0.51}, expected_version=1),
        ItemPut(kind="PROFILE", key="", body={"count": 1}, expected_version=0),
    ]
    # When the interaction is stored with it: nothing is, not the history, the episode or the profile
    with pytest.raises(ConflictError):
        store.put_interaction(first, [episode], with_items=stale)
    assert store.list_interactions(Scope("tenant-a", "user-1"), limit=5).items == []
    assert store.get_memories(Scope("tenant-a", "user-1"), [episode.id]) == []
    assert items.get_item(dana, "PROFILE", "") is None
    assert store.list_users("tenant-a", limit=5).items == []
    # When it is planned again from what is stored now, all of it is stored together, the user registered
    fresh = [
        ItemPut(kind="STATE", key="", body={"trust": 0.61}, expected_version=2),
        ItemPut(kind="PROFILE", key="", body={"count": 1}, expected_version=0),
    ]
    store.put_interaction(first, [episode], with_items=fresh)
    assert store.get_interaction(Scope("tenant-a", "user-1"), first.id) == first
    assert ids_of(store.get_memories(Scope("tenant-a", "user-1"), [episode.id])) == [episode.id]
    state, profile = items.get_item(dana, "STATE", ""), items.get_item(dana, "PROFILE", "")
    assert state is not None and state.body == {"trust": 0.61} and state.version == 3
    assert profile is not None and profile.version == 1 and profile.updated_at == first.created_at
    assert store.list_users("tenant-a", limit=5).items == ["user-1"]
    assert store.list_tenants(limit=5).items == ["tenant-a"]
    # A user known to have been registered is registered again without the tenant's entry being rewritten
    store.put_interaction(make_interaction(user="user-2", second=2), known_user=True)
    assert store.list_users("tenant-a", limit=5).items == ["user-1", "user-2"]


def test_interaction_of_another_tenant_or_missing_is_not_found(store: MemoryStore) -> None:
    interaction = make_interaction()
    store.put_interaction(interaction)

    for tenant, user, interaction_id in [
        ("tenant-b", "user-1", interaction.id),
        ("tenant-a", "user-2", interaction.id),
        ("tenant-a", "user-1", new_id()),
    ]:
        with pytest.raises(NotFoundError):
            store.get_interaction(Scope(tenant, user), interaction_id)


def test_interactions_page_newest_first_apart_from_memories(store: MemoryStore) -> None:
    interactions = [make_interaction(second=i) for i in range(5)]
    for interaction in interactions:
        store.put_interaction(interaction)
    store.put_memory(make_memory(second=100))
    store.put_interaction(make_interaction(user="user-2", second=50))

    pages = collect_pages(lambda cursor: store.list_interactions(Scope("tenant-a", "user-1"), limit=2, cursor=cursor))

    assert [len(page) for page in pages] == [2, 2, 1]
    assert [i for page in pages for i in ids_of(page)] == sorted(ids_of(interactions), reverse=True)
    assert store.count_memories(Scope("tenant-a", "user-1")) == 1  # history is not counted as memories


# tenancy


def test_api_keys_are_found_by_hash_only(store: MemoryStore) -> None:
    key_a = ApiKeyRecord(tenant_id="tenant-a", key_hash="a" * 64, name="ci", created_at=at(0))
    key_b = ApiKeyRecord(tenant_id="tenant-b", key_hash="b" * 64, created_at=at(1))
    store.put_api_key(key_a)
    store.put_api_key(key_b)

    assert store.find_api_key("a" * 64) == key_a
    assert store.find_api_key("b" * 64) == key_b
    assert store.find_api_key("c" * 64) is None


def test_register_user_is_idempotent_and_users_page(store: MemoryStore) -> None:
    users = [f"user-{i}" for i in range(5)]
    for user in users:
        store.register_user(Scope("tenant-a", user))
    store.register_user(Scope("tenant-a", "user-0"))
    store.register_user(Scope("tenant-b", "outsider"))

    pages = collect_pages(lambda cursor: store.list_users("tenant-a", limit=2, cursor=cursor))

    assert [len(page) for page in pages] == [2, 2, 1]
    listed = [user for page in pages for user in page]
    assert sorted(listed) == users  # each once, and nobody of tenant-b
    assert store.list_users("tenant-c", limit=5).items == []


def test_tenants_page_in_order_each_once(store: MemoryStore) -> None:
    # Given users in three tenants, one of them registered twice
    for tenant, user in [
        ("tenant-b", "u1"),
        ("tenant-a", "u1"),
        ("tenant-a", "u2"),
        ("tenant-c", "u1"),
        ("tenant-b", "u1"),
    ]:
        store.register_user(Scope(tenant, user))

    pages = collect_pages(lambda cursor: store.list_tenants(limit=2, cursor=cursor))

    assert [len(page) for page in pages] == [2, 1]
    assert [tenant for page in pages for tenant in page] == ["tenant-a", "tenant-b", "tenant-c"]


# history trimming (the retention cap of docs/governance.md)


def test_interactions_page_oldest_first(store: MemoryStore) -> None:
    interactions = [make_interaction(second=i) for i in range(5)]
    for interaction in interactions:
        store.put_interaction(interaction)
    store.put_interaction(make_interaction(user="user-2", second=-50))

    pages = collect_pages(
        lambda cursor: store.list_interactions(Scope("tenant-a", "user-1"), limit=2, cursor=cursor, oldest_first=True)
    )

    assert [len(page) for page in pages] == [2, 2, 1]
    assert [i for page in pages for i in ids_of(page)] == sorted(ids_of(interactions))


def test_delete_interaction_removes_one_and_a_second_delete_is_not_found(store: MemoryStore) -> None:
    kept, doomed = make_interaction(second=1), make_interaction(second=2)
    store.put_interaction(kept)
    store.put_interaction(doomed)

    store.delete_interaction(Scope("tenant-a", "user-1"), doomed.id)

    assert ids_of(store.list_interactions(Scope("tenant-a", "user-1"), limit=10).items) == [kept.id]
    with pytest.raises(NotFoundError):
        store.delete_interaction(Scope("tenant-a", "user-1"), doomed.id)
    with pytest.raises(NotFoundError):
        store.delete_interaction(Scope("tenant-b", "user-1"), kept.id)  # another tenant's id does not exist
    assert store.get_interaction(Scope("tenant-a", "user-1"), kept.id) == kept


# privacy


def test_erase_user_removes_everything_of_that_user_only(store: MemoryStore) -> None:
    # Given user-1 of tenant-a with 30 memories (more than one delete batch) and 4 interactions, and the same
    # user id in tenant-b and a neighbour in tenant-a with data of their own
    doomed_memories = [make_memory(second=i, domain=Domain.USER if i % 3 else Domain.RELATIONAL) for i in range(30)]
    doomed_interactions = [make_interaction(second=i) for i in range(4)]
    for memory in doomed_memories:
        store.put_memory(memory)
    for interaction in doomed_interactions:
        store.put_interaction(interaction)
    store.register_user(Scope("tenant-a", "user-1"))
    neighbour = make_memory(user="user-2", second=100)
    twin = make_memory(tenant="tenant-b", second=101)
    neighbour_interaction = make_interaction(user="user-2", second=102)
    twin_interaction = make_interaction(tenant="tenant-b", second=103)
    for memory in (neighbour, twin):
        store.put_memory(memory)
    for interaction in (neighbour_interaction, twin_interaction):
        store.put_interaction(interaction)
    store.register_user(Scope("tenant-a", "user-2"))
    store.register_user(Scope("tenant-b", "user-1"))

    # When user-1 of tenant-a is erased
    counts = store.erase_user(Scope("tenant-a", "user-1"))

    # Then the counts say what went (the registration is the one other item), and nothing of it is left
    assert (counts.memories, counts.interactions, counts.other_items) == (30, 4, 1)
    assert store.count_memories(Scope("tenant-a", "user-1")) == 0
    assert store.list_memories(Scope("tenant-a", "user-1"), domains=BOTH, limit=50).items == []
    assert store.list_interactions(Scope("tenant-a", "user-1"), limit=50).items == []
    assert store.get_memories(Scope("tenant-a", "user-1"), ids_of(doomed_memories)) == []
    with pytest.raises(NotFoundError):
        store.get_interaction(Scope("tenant-a", "user-1"), doomed_interactions[0].id)
    assert store.list_users("tenant-a", limit=10).items == ["user-2"]
    # and the neighbour and the other tenant's user of the same id keep everything
    assert store.get_memory(Scope("tenant-a", "user-2"), neighbour.id) == neighbour
    assert store.get_memory(Scope("tenant-b", "user-1"), twin.id) == twin
    assert store.get_interaction(Scope("tenant-a", "user-2"), neighbour_interaction.id) == neighbour_interaction
    assert store.get_interaction(Scope("tenant-b", "user-1"), twin_interaction.id) == twin_interaction
    assert store.list_users("tenant-b", limit=10).items == ["user-1"]

    # Erasing again finds nothing: the call is safe to retry
    again = store.erase_user(Scope("tenant-a", "user-1"))
    assert (again.memories, again.interactions, again.other_items) == (0, 0, 0)


def test_audit_events_list_newest_first_per_tenant(store: MemoryStore) -> None:
    events = [make_audit_event(second=s) for s in (30, 10, 50, 20)]
    for event in events:
        store.put_audit_event(event)
    store.put_audit_event(make_audit_event(tenant="tenant-b", second=40))

    pages = collect_pages(lambda cursor: store.list_audit_events("tenant-a", limit=3, cursor=cursor))

    listed = [event for page in pages for event in page]
    assert [len(page) for page in pages] == [3, 1]
    assert listed == sorted(events, key=lambda event: event.at, reverse=True)  # every field round-trips too
    assert store.list_audit_events("tenant-c", limit=3).items == []


LISTINGS: dict[str, Callable[[MemoryStore, str], Page[Any]]] = {
    "memories": lambda store, cursor: store.list_memories(
        Scope("tenant-a", "user-1"), domains=BOTH, limit=2, cursor=cursor
    ),
    "memories by domain": lambda store, cursor: store.list_memories(
        Scope("tenant-a", "user-1"), domains=USER_ONLY, limit=2, cursor=cursor
    ),
    "interactions": lambda store, cursor: store.list_interactions(Scope("tenant-a", "user-1"), limit=2, cursor=cursor),
    "users": lambda store, cursor: store.list_users("tenant-a", limit=2, cursor=cursor),
    "interactions oldest first": lambda store, cursor: store.list_interactions(
        Scope("tenant-a", "user-1"), limit=2, cursor=cursor, oldest_first=True
    ),
    "tenants": lambda store, cursor: store.list_tenants(limit=2, cursor=cursor),
    "audit events": lambda store, cursor: store.list_audit_events("tenant-a", limit=2, cursor=cursor),
}


@pytest.mark.parametrize("listing", sorted(LISTINGS))
@pytest.mark.parametrize("cursor", ["not-a-cursor", "____"])
def test_an_invalid_cursor_is_invalid_input(store: MemoryStore, listing: str, cursor: str) -> None:
    put_memories(store, 3)
    with pytest.raises(InvalidInputError, match="cursor is not valid"):
        LISTINGS[listing](store, cursor)


# DynamoDB only: the table layout and the failure paths moto alone does not produce


def test_create_table_builds_the_schema_the_stack_declares(dynamodb: Any) -> None:
    description = dynamodb.meta.client.describe_table(TableName=TABLE)["Table"]
    assert {k["AttributeName"]: k["KeyType"] for k in description["KeySchema"]} == {"pk": "HASH", "sk": "RANGE"}
    assert description["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    indexes = {
        index["IndexName"]: (
            {k["AttributeName"]: k["KeyType"] for k in index["KeySchema"]},
            index["Projection"]["ProjectionType"],
        )
        for index in description["GlobalSecondaryIndexes"]
    }
    assert indexes == {
        "gsi1": ({"gsi1pk": "HASH", "gsi1sk": "RANGE"}, "INCLUDE"),  # every memory attribute but the embedding
        "gsi2": ({"gsi2pk": "HASH", "gsi2sk": "RANGE"}, "INCLUDE"),
        "gsi3": ({"gsi3pk": "HASH", "gsi3sk": "RANGE"}, "ALL"),
    }
    ttl = dynamodb.meta.client.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]
    assert ttl["AttributeName"] == "expires_at"


def test_items_carry_the_documented_keys_and_a_compact_embedding_of_its_own(dynamodb: Any) -> None:
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb)
    memory = make_memory(domain=Domain.RELATIONAL, memory_type="working_style", embedding=random_embedding(1536))
    store.put_memory(memory)
    store.put_api_key(ApiKeyRecord(tenant_id="tenant-a", key_hash="f" * 64, created_at=at(0)))

    table = dynamodb.Table(TABLE)
    item = table.get_item(Key={"pk": "TENANT#tenant-a#USER#user-1", "sk": f"MEM#{memory.id}"})["Item"]
    assert item["gsi1pk"] == "TENANT#tenant-a#USER#user-1#DOMAIN#relational"
    assert item["gsi2pk"] == "TENANT#tenant-a#USER#user-1#TYPE#working_style"
    assert item["gsi1sk"] == item["gsi2sk"] == f"MEM#{memory.id}"
    assert item["created_at"] == "2024-05-01T12:00:00.123456+00:00"
    # The vector is an item of its own, without GSI keys: a change of the memory does not rewrite its 6 KB
    assert "embedding" not in item and approximate_item_bytes(item) < 1024
    vector = table.get_item(Key={"pk": "TENANT#tenant-a#USER#user-1", "sk": f"EMB#{memory.id}"})["Item"]
    assert len(bytes(vector["embedding"])) == 1536 * 4  # float32 bytes, 6 KB, not 1536 number attributes
    assert not {"gsi1pk", "gsi2pk", "gsi3pk"} & set(vector)
    key_item = table.get_item(Key={"pk": "TENANT#tenant-a", "sk": "APIKEY#" + "f" * 64})["Item"]
    assert (key_item["gsi3pk"], key_item["gsi3sk"]) == ("APIKEY#" + "f" * 64, "TENANT#tenant-a")


def test_a_memory_item_written_before_trust_was_recorded_takes_the_trust_its_source_implies(dynamodb: Any) -> None:
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb)
    spoken = make_memory(
        source=Provenance(kind=SourceKind.INTERACTION, speaker="assistant"), trust=Trust.ASSISTANT_SAID
    )
    extracted = make_memory(second=1, source=Provenance(kind=SourceKind.PIPELINE), trust=Trust.EXTRACTED)
    store.put_memory(spoken)
    store.put_memory(extracted)
    table = dynamodb.Table(TABLE)
    for memory in (spoken, extracted):
        key = {"pk": "TENANT#tenant-a#USER#user-1", "sk": f"MEM#{memory.id}"}
        assert table.get_item(Key=key)["Item"]["source"]["trust"] == memory.trust.value
        table.update_item(
            Key=key, UpdateExpression="REMOVE #s.#t", ExpressionAttributeNames={"#s": "source", "#t": "trust"}
        )

    read = {m.id: m.trust for m in store.get_memories(Scope("tenant-a", "user-1"), [spoken.id, extracted.id])}
    assert read == {spoken.id: Trust.ASSISTANT_SAID, extracted.id: Trust.EXTRACTED}


def test_a_cursor_cannot_leave_its_partition(dynamodb: Any) -> None:
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb)
    put_memories(store, 3, tenant="tenant-b")
    put_memories(store, 3)
    for i in range(3):
        store.put_interaction(make_interaction(second=i))
    foreign_cursor = store.list_memories(Scope("tenant-b", "user-1"), domains=BOTH, limit=1).next_cursor
    interactions_cursor = store.list_interactions(Scope("tenant-a", "user-1"), limit=1).next_cursor
    domain_cursor = store.list_memories(Scope("tenant-a", "user-1"), domains=USER_ONLY, limit=1).next_cursor
    assert foreign_cursor and interactions_cursor and domain_cursor

    for cursor in (foreign_cursor, interactions_cursor, "!!!", "e30"):  # "e30" is base64url of "{}"
        with pytest.raises(InvalidInputError, match="cursor is not valid"):
            store.list_memories(Scope("tenant-a", "user-1"), domains=BOTH, limit=1, cursor=cursor)
    # A cursor of the by-domain index does not fit the by-type index either
    with pytest.raises(InvalidInputError):
        store.list_memories(
            Scope("tenant-a", "user-1"), domains=USER_ONLY, memory_type="fact", limit=1, cursor=domain_cursor
        )


def test_ids_holding_the_key_separator_are_refused(dynamodb: Any) -> None:
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb)
    # tenant "a#USER#b" + user "c" would otherwise share a partition with tenant "a" + user "b#USER#c"
    with pytest.raises(InvalidInputError, match="must not contain '#'"):
        store.put_memory(make_memory(tenant="a#USER#b", user="c"))
    with pytest.raises(InvalidInputError):
        store.get_memory(Scope("a", "b#USER#c"), new_id())


def test_an_interaction_too_large_for_one_item_is_refused_before_writing(dynamodb: Any) -> None:
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb)
    # 120,000 characters (the settings' cap) of four-byte UTF-8 is 480 KB: within the cap, beyond an item's 400 KB
    huge = make_interaction(messages=[Message(role=MessageRole.USER, content="😀" * 60_000)] * 2)

    with pytest.raises(InvalidInputError, match="at most 400 KB"):
        store.put_interaction(huge)
    assert store.list_interactions(Scope("tenant-a", "user-1"), limit=1).items == []


def test_the_store_builds_its_own_client_when_none_is_given(dynamodb: Any) -> None:
    store = DynamoDbMemoryStore(TABLE, region_name=REGION)
    memory = make_memory()
    store.put_memory(memory)
    assert store.get_memory(Scope("tenant-a", "user-1"), memory.id) == memory


def test_a_missing_table_is_a_storage_error(dynamodb: Any) -> None:
    store = DynamoDbMemoryStore("no-such-table", dynamodb_resource=dynamodb)
    with pytest.raises(StorageError, match="ResourceNotFoundException"):
        store.get_memory(Scope("tenant-a", "user-1"), new_id())


def test_one_key_registered_to_two_tenants_is_refused(dynamodb: Any) -> None:
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb)
    for tenant in ("tenant-a", "tenant-b"):
        store.put_api_key(ApiKeyRecord(tenant_id=tenant, key_hash="d" * 64, created_at=at(0)))
    with pytest.raises(ConflictError):
        store.find_api_key("d" * 64)


class LimitMetReportsMore:
    """The moto resource, except that a query which fills its Limit reports a LastEvaluatedKey even when nothing
    follows. DynamoDB does that; moto leaves the key out, which would hide a store that trusts it."""

    def __init__(self, resource: Any) -> None:
        self._resource = resource

    def Table(self, name: str) -> Any:
        return _LimitMetTable(self._resource.Table(name))


class _LimitMetTable:
    def __init__(self, table: Any) -> None:
        self._table = table

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)

    def query(self, **request: Any) -> dict[str, Any]:
        response = self._table.query(**request)
        items = response.get("Items", [])
        if "Limit" in request and "FilterExpression" not in request and len(items) == request["Limit"]:
            attributes = dynamodb_keys.key_attributes(request.get("IndexName"))
            response.setdefault("LastEvaluatedKey", {name: items[-1][name] for name in attributes})
        return response


@pytest.mark.parametrize("listing", ["memories", "memories by domain", "interactions", "users", "audit events"])
def test_a_full_last_page_has_no_cursor_even_when_dynamodb_says_more(dynamodb: Any, listing: str) -> None:
    # Given exactly two pages of everything, read through a table that reports "more" whenever a Limit is met
    seed = DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb)
    for i in range(4):
        seed.put_memory(make_memory(second=i))
        seed.put_interaction(make_interaction(second=i))
        seed.register_user(Scope("tenant-a", f"user-{i}"))
        seed.put_audit_event(make_audit_event(second=i))
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=LimitMetReportsMore(dynamodb))

    # When the pages are followed, then the second is the last: no cursor leads to an empty page
    pages = collect_pages(lambda cursor: LISTINGS[listing](store, cursor))
    assert [len(page) for page in pages] == [2, 2]


class ThrottledBatches:
    """The moto resource, except that each batch call leaves all but one request unprocessed, as a busy table does.

    After `give_up_after` calls it stops processing anything, to model throttling that never ends.
    """

    def __init__(self, resource: Any, give_up_after: int | None = None) -> None:
        self._resource = resource
        self._give_up_after = give_up_after
        self.batch_calls = 0

    def Table(self, name: str) -> Any:
        return self._resource.Table(name)

    def _throttled(self) -> bool:
        self.batch_calls += 1
        return self._give_up_after is not None and self.batch_calls > self._give_up_after

    def batch_get_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:  # noqa: N803 (boto3's name)
        ((table, request),) = RequestItems.items()
        if self._throttled():
            return {"Responses": {table: []}, "UnprocessedKeys": RequestItems}
        first, rest = request["Keys"][:1], request["Keys"][1:]
        response = self._resource.batch_get_item(RequestItems={table: {**request, "Keys": first}})
        response["UnprocessedKeys"] = {table: {**request, "Keys": rest}} if rest else {}
        return response

    def batch_write_item(self, RequestItems: dict[str, Any]) -> dict[str, Any]:  # noqa: N803 (boto3's name)
        ((table, requests),) = RequestItems.items()
        if self._throttled():
            return {"UnprocessedItems": RequestItems}
        self._resource.batch_write_item(RequestItems={table: requests[:1]})
        return {"UnprocessedItems": {table: requests[1:]} if requests[1:] else {}}


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dynamodb_table, "_back_off", lambda attempt: None)


def test_unprocessed_reads_and_deletes_are_retried(dynamodb: Any, no_backoff: None) -> None:
    memories = put_memories(DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb), 4)
    throttled = ThrottledBatches(dynamodb)
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=throttled)

    assert sorted(ids_of(store.get_memories(Scope("tenant-a", "user-1"), ids_of(memories)))) == sorted(ids_of(memories))
    assert throttled.batch_calls == 2 * 4  # a memory and its vector's key each, one at a time

    assert store.erase_user(Scope("tenant-a", "user-1")).memories == 4
    assert store.count_memories(Scope("tenant-a", "user-1")) == 0


def test_throttling_that_never_ends_is_a_storage_error(dynamodb: Any, no_backoff: None) -> None:
    memories = put_memories(DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb), 3)
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=ThrottledBatches(dynamodb, give_up_after=0))

    with pytest.raises(StorageError, match="batch read"):
        store.get_memories(Scope("tenant-a", "user-1"), ids_of(memories))
    with pytest.raises(StorageError, match="batch delete"):
        store.erase_user(Scope("tenant-a", "user-1"))
