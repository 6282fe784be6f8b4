"""Where a memory's embedding lives: an update of its other fields never rewrites it (both stores), listings carry
none, and in DynamoDB the vector is an item of its own that deletes, history trims and erasure remove with its
memory (docs/data-model.md)."""

from __future__ import annotations

from typing import Any

import pytest
from boto3.dynamodb.conditions import Key

from rapport.adapters.dynamodb.records import memory_to_item, pack_embedding
from rapport.adapters.dynamodb.store import DynamoDbMemoryStore
from rapport.domain.models import MemoryStatus
from rapport.domain.scope import Scope
from rapport.errors import ConflictError, NotFoundError
from rapport.ports.store import MemoryStore
from tests.integration.test_store_contract import (  # the contract suite's fixtures and factories
    BOTH,
    TABLE,
    at,
    aws_environment,
    dynamodb,
    make_interaction,
    make_memory,
    random_embedding,
    store,
)

pytestmark = pytest.mark.integration

__all__ = ["aws_environment", "dynamodb", "store"]  # fixtures, re-used
SCOPE = Scope("tenant-a", "user-1")
PARTITION = "TENANT#tenant-a#USER#user-1"


def test_an_update_writes_every_field_but_keeps_the_stored_embedding(store: MemoryStore) -> None:
    # Given a memory with its vector
    original = make_memory(embedding=random_embedding(16), importance=0.4)
    store.put_memory(original)

    # When its status, strength, tier and metadata change, written without a vector
    changed = original.model_copy(
        update={
            "status": MemoryStatus.ARCHIVED,
            "strength": 0.25,
            "decayed_at": at(5),
            "metadata": {"why": "faded"},
            "updated_at": at(5),
            "embedding": None,
        }
    )
    store.update_memory(changed)

    # Then every field is the new one and the vector is still the stored one
    stored = store.get_memory(SCOPE, original.id)
    assert stored.without_embedding() == changed.without_embedding()
    assert stored.embedding == pytest.approx(original.embedding, rel=1e-6)
    # and a field the memory no longer has is gone
    store.update_memory(changed.model_copy(update={"decayed_at": None}))
    assert store.get_memory(SCOPE, original.id).decayed_at is None


def test_an_update_is_conditional_like_a_put_and_never_creates(store: MemoryStore) -> None:
    original = make_memory(embedding=random_embedding(16))
    store.put_memory(original)
    reinforced = original.model_copy(update={"strength": 1.0, "last_reinforced_at": at(10)})
    store.update_memory(reinforced, if_reinforced_at=original.last_reinforced_at)
    with pytest.raises(ConflictError):
        store.update_memory(original.model_copy(update={"strength": 0.1}), if_reinforced_at=original.last_reinforced_at)
    assert store.get_memory(SCOPE, original.id).strength == 1.0

    missing = make_memory(second=99)
    with pytest.raises(NotFoundError):
        store.update_memory(missing)
    with pytest.raises(NotFoundError):
        store.get_memory(SCOPE, missing.id)


def test_listings_carry_no_embedding_and_reads_by_id_do(store: MemoryStore) -> None:
    memory = make_memory(embedding=random_embedding(16))
    store.put_memory(memory)
    [listed] = store.list_memories(SCOPE, domains=BOTH, limit=10).items
    assert listed.embedding is None and listed == store.get_memory(SCOPE, memory.id).without_embedding()
    [read] = store.get_memories(SCOPE, [memory.id])
    assert read.embedding == pytest.approx(memory.embedding, rel=1e-6)
    assert [m.embedding is not None for m in store.iter_all_memories("tenant-a")] == [True]


def test_a_read_by_id_carries_only_the_vectors_asked_for(store: MemoryStore) -> None:
    # Given two memories with their vectors
    wanted, other = make_memory(embedding=random_embedding(16)), make_memory(embedding=random_embedding(16))
    store.put_memory(wanted)
    store.put_memory(other)

    # When both are read, the vector of one alone asked for (recall has the index's cosine of the other)
    read = {m.id: m for m in store.get_memories(SCOPE, [wanted.id, other.id], vectors={wanted.id})}

    # Then both come back whole, and only the one asked for with its vector
    assert read[wanted.id].embedding == pytest.approx(wanted.embedding, rel=1e-6)
    assert read[other.id].embedding is None
    assert read[other.id] == store.get_memory(SCOPE, other.id).without_embedding()
    # and asking for no vector reads none, while a later plain read still has it
    [bare] = store.get_memories(SCOPE, [wanted.id], vectors=())
    assert bare.embedding is None
    assert store.get_memory(SCOPE, wanted.id).embedding == pytest.approx(wanted.embedding, rel=1e-6)


# DynamoDB: the vector item


def partition_keys(dynamodb: Any) -> list[str]:
    table = dynamodb.Table(TABLE)
    items = table.query(KeyConditionExpression=Key("pk").eq(PARTITION))["Items"]
    return sorted(str(item["sk"]) for item in items)


def test_a_vector_goes_with_its_memory_on_delete_trim_and_erasure(dynamodb: Any) -> None:
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb)
    kept, deleted = make_memory(embedding=random_embedding(16)), make_memory(second=1, embedding=random_embedding(16))
    for memory in (kept, deleted):
        store.put_memory(memory)
    episode = make_memory(second=2, embedding=random_embedding(16))
    interaction = make_interaction(second=2, memory_ids=[episode.id])
    store.put_interaction(interaction, [episode])
    assert partition_keys(dynamodb) == sorted(
        [f"{prefix}#{m.id}" for m in (kept, deleted, episode) for prefix in ("MEM", "EMB")] + [f"INT#{interaction.id}"]
    )

    store.delete_memory(SCOPE, deleted.id)
    store.remove_interaction(interaction)
    assert partition_keys(dynamodb) == [f"EMB#{kept.id}", f"MEM#{kept.id}"]

    counts = store.erase_user(SCOPE)
    assert (counts.memories, counts.interactions) == (1, 0)  # the vector is part of its memory, not another one
    assert partition_keys(dynamodb) == []


def test_a_memory_put_without_a_vector_has_none_and_a_put_with_one_replaces_it(dynamodb: Any) -> None:
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb)
    memory = make_memory(embedding=random_embedding(16, seed=1))
    store.put_memory(memory)
    store.put_memory(memory.model_copy(update={"embedding": random_embedding(16, seed=2)}), if_reinforced_at=at(0))
    assert store.get_memory(SCOPE, memory.id).embedding == pytest.approx(random_embedding(16, seed=2), rel=1e-6)
    store.put_memory(memory.model_copy(update={"embedding": None}), if_reinforced_at=at(0))
    assert store.get_memory(SCOPE, memory.id).embedding is None
    assert partition_keys(dynamodb) == [f"MEM#{memory.id}"]


def test_an_item_of_the_old_layout_keeps_its_inline_vector_through_an_update(dynamodb: Any) -> None:
    # Given a memory written before vectors had an item of their own: the vector inline
    memory = make_memory(embedding=random_embedding(16))
    dynamodb.Table(TABLE).put_item(Item={**memory_to_item(memory), "embedding": pack_embedding(random_embedding(16))})
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=dynamodb)

    # When it is read and its status changes
    read = store.get_memory(SCOPE, memory.id)
    store.update_memory(read.model_copy(update={"status": MemoryStatus.ARCHIVED}))

    # Then it still has its vector
    stored = store.get_memory(SCOPE, memory.id)
    assert stored.status is MemoryStatus.ARCHIVED
    assert stored.embedding == pytest.approx(random_embedding(16), rel=1e-6)
