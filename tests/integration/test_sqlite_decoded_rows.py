"""The SQLite store keeps the memories and items it has decoded (`DecodedRows`): a read that comes back costs a
lookup, and no read returns what the file no longer holds, whoever wrote it: this store, or another connection (a
second process) to the same file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from rapport.adapters.local.person_keys import LocalPersonKeys
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.domain.models import Memory, MemoryStatus
from rapport.domain.scope import Scope
from rapport.errors import NotFoundError
from rapport.ports.items import FieldChange, ItemDelete, ItemPut, ItemScope, StoredItem
from rapport.sealing import Keyring
from tests.integration.test_store_contract import at, make_interaction, make_memory, random_embedding

pytestmark = pytest.mark.integration

SCOPE = Scope("tenant-a", "user-1")
ITEMS = ItemScope.of_user(SCOPE)


@pytest.fixture(params=["plain", "sealed"])
def sealed(request: pytest.FixtureRequest) -> bool:
    return bool(request.param == "sealed")


def keyring_of(tmp_path: Path, sealed: bool) -> Keyring | None:
    """Each connection its own keyring over the same key directory, as two processes have."""
    return Keyring(LocalPersonKeys(tmp_path / "keys")) if sealed else None


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "rapport.sqlite3"


@pytest.fixture
def store(path: Path, tmp_path: Path, sealed: bool) -> Iterator[SqliteMemoryStore]:
    opened = SqliteMemoryStore(path, keyring=keyring_of(tmp_path, sealed))
    yield opened
    opened.close()


@pytest.fixture
def other(path: Path, tmp_path: Path, sealed: bool) -> Iterator[SqliteMemoryStore]:
    """A second connection to the same file, as `rapport jobs run` opens beside `rapport serve`."""
    opened = SqliteMemoryStore(path, keyring=keyring_of(tmp_path, sealed))
    yield opened
    opened.close()


def stored(store: SqliteMemoryStore, content: str = "I adopted a dog called Max", **fields: object) -> Memory:
    memory = make_memory(content=content, embedding=random_embedding(8), **fields)
    store.put_memory(memory)
    return memory


def read(store: SqliteMemoryStore, memory: Memory) -> Memory:
    (found,) = store.get_memories(SCOPE, [memory.id])
    return found


# memories


def test_a_memory_read_twice_is_the_same_memory(store: SqliteMemoryStore) -> None:
    memory = stored(store)
    first, second = read(store, memory), read(store, memory)
    assert first == second == memory.model_copy(update={"embedding": first.embedding})
    assert first.embedding == pytest.approx(memory.embedding, rel=1e-6)
    assert store.get_memory(SCOPE, memory.id) == first


def test_a_memory_a_caller_read_cannot_be_changed_under_the_next_reader(store: SqliteMemoryStore) -> None:
    memory = stored(store)
    mine = read(store, memory)
    with pytest.raises(ValidationError):
        mine.content = "changed by a caller"
    changed = mine.model_copy(update={"content": "changed by a caller", "importance": 0.99})
    again = read(store, memory)
    assert changed.content == "changed by a caller"
    assert again.content == "I adopted a dog called Max"
    assert again.importance == memory.importance


def test_a_memory_read_without_its_vector_is_the_instance_kept(store: SqliteMemoryStore) -> None:
    memory = stored(store)
    first = store.get_memories(SCOPE, [memory.id], vectors=())[0]
    second = store.get_memories(SCOPE, [memory.id], vectors=())[0]
    assert first is second and first.embedding is None
    with_vector = store.get_memories(SCOPE, [memory.id])[0]
    assert with_vector is not first and with_vector.embedding == pytest.approx(memory.embedding, rel=1e-6)


@pytest.mark.parametrize("write", ["put", "update"])
def test_a_write_through_the_store_is_seen_by_the_next_read(store: SqliteMemoryStore, write: str) -> None:
    memory = stored(store)
    read(store, memory)  # now kept
    changed = memory.model_copy(update={"content": "I adopted a cat", "status": MemoryStatus.ARCHIVED})
    if write == "put":
        store.put_memory(changed)
    else:
        store.update_memory(changed.model_copy(update={"embedding": None}))
    again = read(store, memory)
    assert again.content == "I adopted a cat"
    assert again.status is MemoryStatus.ARCHIVED


def test_a_deleted_memory_is_not_read_from_what_was_kept(store: SqliteMemoryStore) -> None:
    memory = stored(store)
    read(store, memory)
    store.delete_memory(SCOPE, memory.id)
    assert store.get_memories(SCOPE, [memory.id]) == []
    with pytest.raises(NotFoundError):
        store.get_memory(SCOPE, memory.id)


def test_an_interaction_recorded_again_and_taken_back_is_seen(store: SqliteMemoryStore) -> None:
    episode = make_memory(content="first words", embedding=random_embedding(8))
    interaction = make_interaction(memory_ids=[episode.id])
    store.put_interaction(interaction, [episode])
    assert read(store, episode).content == "first words"
    store.put_interaction(interaction, [episode.model_copy(update={"content": "second words"})])
    assert read(store, episode).content == "second words"
    store.remove_interaction(interaction)
    assert store.get_memories(SCOPE, [episode.id]) == []


def test_an_erased_person_is_not_read_from_what_was_kept(store: SqliteMemoryStore) -> None:
    memory = stored(store)
    store.put_item(ITEMS, "PROFILE", "main", {"name": "Caroline"}, now=at(1))
    read(store, memory)
    store.get_items(ITEMS, [("PROFILE", "main")])
    store.erase_user(SCOPE)
    assert store.get_memories(SCOPE, [memory.id]) == []
    assert store.get_items(ITEMS, [("PROFILE", "main")]) == {}


def test_a_write_by_another_connection_is_seen_by_the_next_read(
    store: SqliteMemoryStore, other: SqliteMemoryStore
) -> None:
    memory = stored(store)
    assert read(store, memory).content == "I adopted a dog called Max"  # kept by this store
    other.update_memory(memory.model_copy(update={"content": "I adopted a cat", "embedding": None}))
    assert read(store, memory).content == "I adopted a cat"
    other.delete_memory(SCOPE, memory.id)
    assert store.get_memories(SCOPE, [memory.id]) == []


def test_an_erasure_by_another_connection_is_seen_by_the_next_read(
    store: SqliteMemoryStore, other: SqliteMemoryStore
) -> None:
    memory = stored(store)
    read(store, memory)
    other.erase_user(SCOPE)
    assert store.get_memories(SCOPE, [memory.id]) == []


def test_a_write_while_a_read_decodes_is_not_undone_by_the_read(
    store: SqliteMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a read that has queried the row and is decoding it (outside the lock) when a write lands
    memory = stored(store)
    decode = store._decoded_memory

    def decoding_while_written(body: str, blob: bytes | None) -> object:
        monkeypatch.setattr(store, "_decoded_memory", decode)
        store.update_memory(memory.model_copy(update={"content": "written meanwhile", "embedding": None}))
        return decode(body, blob)

    monkeypatch.setattr(store, "_decoded_memory", decoding_while_written)
    # When the read ends, it answers what it read; the next read answers what was written
    assert read(store, memory).content == "I adopted a dog called Max"
    assert read(store, memory).content == "written meanwhile"


def test_what_is_kept_is_bounded(path: Path) -> None:
    small = SqliteMemoryStore(path, decoded_rows=2)
    try:
        memories = [stored(small, content=f"fact {n}", second=n) for n in range(5)]
        assert [m.content for m in small.get_memories(SCOPE, [m.id for m in memories])] == [
            f"fact {n}" for n in range(5)
        ]
        assert len(small._decoded.memories) == 2  # the two read last
    finally:
        small.close()


def test_memories_come_back_in_id_order_whichever_were_kept(store: SqliteMemoryStore) -> None:
    memories = [stored(store, content=f"fact {n}", second=n) for n in range(4)]
    read(store, memories[2])
    found = store.get_memories(SCOPE, [m.id for m in reversed(memories)])
    assert [m.id for m in found] == sorted(m.id for m in memories)


# items


def body_of(store: SqliteMemoryStore, kind: str, key: str) -> dict[str, object] | None:
    item = store.get_items(ITEMS, [(kind, key)]).get((kind, key))
    return item.body if item is not None else None


def test_an_item_read_twice_is_the_same_item_and_a_callers_change_stays_its_own(store: SqliteMemoryStore) -> None:
    store.put_item(ITEMS, "EDGES", "m1", {"out|SUPPORTS|m2": {"strength": 0.5, "properties": {}}}, now=at(1))
    first = store.get_items(ITEMS, [("EDGES", "m1")])[("EDGES", "m1")]
    first.body["out|SUPPORTS|m2"]["strength"] = 1.0
    first.body["added"] = True
    second = store.get_items(ITEMS, [("EDGES", "m1")])[("EDGES", "m1")]
    assert second.body == {"out|SUPPORTS|m2": {"strength": 0.5, "properties": {}}}
    assert (second.version, second.updated_at, second.expires_at) == (1, at(1), None)
    assert store.get_item(ITEMS, "EDGES", "m1") == second


def test_an_item_known_absent_is_seen_once_written(store: SqliteMemoryStore) -> None:
    assert body_of(store, "EDGES", "m1") is None  # kept as absent
    store.write_items(ITEMS, [FieldChange(kind="EDGES", key="m1", set={"out|SUPPORTS|m2": {"s": 1}})], now=at(1))
    assert body_of(store, "EDGES", "m1") == {"out|SUPPORTS|m2": {"s": 1}}


def test_every_kind_of_item_write_through_the_store_is_seen(store: SqliteMemoryStore) -> None:
    store.put_item(ITEMS, "EDGES", "m1", {"a": 1}, now=at(1))
    assert body_of(store, "EDGES", "m1") == {"a": 1}
    store.put_item(ITEMS, "EDGES", "m1", {"a": 2}, now=at(2))
    assert body_of(store, "EDGES", "m1") == {"a": 2}
    store.write_items(ITEMS, [FieldChange(kind="EDGES", key="m1", set={"b": 3}, remove=frozenset({"a"}))], now=at(3))
    assert body_of(store, "EDGES", "m1") == {"b": 3}
    store.write_items(ITEMS, [ItemPut(kind="EDGES", key="m1", body={"c": 4})], now=at(4))
    assert body_of(store, "EDGES", "m1") == {"c": 4}
    store.write_items(ITEMS, [ItemDelete(kind="EDGES", key="m1")], now=at(5))
    assert body_of(store, "EDGES", "m1") is None
    store.put_item(ITEMS, "EDGES", "m1", {"d": 5}, now=at(6))
    assert body_of(store, "EDGES", "m1") == {"d": 5}
    store.delete_item(ITEMS, "EDGES", "m1")
    assert body_of(store, "EDGES", "m1") is None
    # and those written with an interaction
    interaction = make_interaction()
    store.put_interaction(interaction, with_items=[ItemPut(kind="EDGES", key="m1", body={"e": 6})])
    assert body_of(store, "EDGES", "m1") == {"e": 6}


def test_an_item_written_by_another_connection_is_seen_by_the_next_read(
    store: SqliteMemoryStore, other: SqliteMemoryStore
) -> None:
    assert body_of(store, "EDGES", "m1") is None
    other.put_item(ITEMS, "EDGES", "m1", {"a": 1}, now=at(1))
    assert body_of(store, "EDGES", "m1") == {"a": 1}
    other.put_item(ITEMS, "EDGES", "m1", {"a": 2}, now=at(1) + timedelta(seconds=1))
    assert body_of(store, "EDGES", "m1") == {"a": 2}
    other.delete_item(ITEMS, "EDGES", "m1")
    assert body_of(store, "EDGES", "m1") is None


# shared item forms (`get_item_forms`): one read-only form per kept row, as fresh as `get_items`


def frozen_body(item: StoredItem) -> tuple[int, str]:
    return item.version, json.dumps(item.body, sort_keys=True)


def form_of(store: SqliteMemoryStore, kind: str, key: str) -> tuple[int, str] | None:
    return store.get_item_forms(ITEMS, [(kind, key)], frozen_body).get((kind, key))


def body_by_form(store: SqliteMemoryStore, kind: str, key: str) -> dict[str, object] | None:
    form = form_of(store, kind, key)
    return None if form is None else json.loads(form[1])


def test_a_form_is_made_once_and_shared_until_the_item_is_written(store: SqliteMemoryStore) -> None:
    store.put_item(ITEMS, "EDGES", "m1", {"a": 1}, now=at(1))
    first = form_of(store, "EDGES", "m1")
    assert first == (1, '{"a": 1}')
    assert form_of(store, "EDGES", "m1") is first  # the same object: made once
    store.put_item(ITEMS, "EDGES", "m1", {"a": 2}, now=at(2))
    assert form_of(store, "EDGES", "m1") == (2, '{"a": 2}')
    # a copy read beside the form is still the caller's own
    store.get_items(ITEMS, [("EDGES", "m1")])[("EDGES", "m1")].body["a"] = 99
    assert body_by_form(store, "EDGES", "m1") == {"a": 2}


def test_every_kind_of_item_write_through_the_store_is_seen_by_its_form(store: SqliteMemoryStore) -> None:
    assert body_by_form(store, "EDGES", "m1") is None  # kept as absent
    store.write_items(ITEMS, [FieldChange(kind="EDGES", key="m1", set={"a": 1})], now=at(1))
    assert body_by_form(store, "EDGES", "m1") == {"a": 1}
    store.write_items(ITEMS, [FieldChange(kind="EDGES", key="m1", set={"b": 3}, remove=frozenset({"a"}))], now=at(3))
    assert body_by_form(store, "EDGES", "m1") == {"b": 3}
    store.write_items(ITEMS, [ItemPut(kind="EDGES", key="m1", body={"c": 4})], now=at(4))
    assert body_by_form(store, "EDGES", "m1") == {"c": 4}
    store.write_items(ITEMS, [ItemDelete(kind="EDGES", key="m1")], now=at(5))
    assert body_by_form(store, "EDGES", "m1") is None
    store.put_item(ITEMS, "EDGES", "m1", {"d": 5}, now=at(6))
    assert body_by_form(store, "EDGES", "m1") == {"d": 5}
    store.delete_item(ITEMS, "EDGES", "m1")
    assert body_by_form(store, "EDGES", "m1") is None
    store.put_interaction(make_interaction(), with_items=[ItemPut(kind="EDGES", key="m1", body={"e": 6})])
    assert body_by_form(store, "EDGES", "m1") == {"e": 6}
    store.erase_user(SCOPE)
    assert body_by_form(store, "EDGES", "m1") is None


def test_an_item_written_by_another_connection_is_seen_by_its_form(
    store: SqliteMemoryStore, other: SqliteMemoryStore
) -> None:
    assert body_by_form(store, "EDGES", "m1") is None
    other.put_item(ITEMS, "EDGES", "m1", {"a": 1}, now=at(1))
    assert body_by_form(store, "EDGES", "m1") == {"a": 1}
    other.put_item(ITEMS, "EDGES", "m1", {"a": 2}, now=at(1) + timedelta(seconds=1))
    assert body_by_form(store, "EDGES", "m1") == {"a": 2}
    other.erase_user(SCOPE)
    assert body_by_form(store, "EDGES", "m1") is None


def test_a_write_while_a_form_is_made_is_seen_by_the_next_read(store: SqliteMemoryStore) -> None:
    # Given a form being made (outside the lock) when a write of its item lands
    store.put_item(ITEMS, "EDGES", "m1", {"a": 1}, now=at(1))

    def written_meanwhile(item: StoredItem) -> tuple[int, str]:
        store.put_item(ITEMS, "EDGES", "m1", {"a": 2}, now=at(2))
        return frozen_body(item)

    # When the read ends, it answers what it read; the next read answers what was written
    assert store.get_item_forms(ITEMS, [("EDGES", "m1")], written_meanwhile)[("EDGES", "m1")] == (1, '{"a": 1}')
    assert store.get_item_forms(ITEMS, [("EDGES", "m1")], written_meanwhile)[("EDGES", "m1")][0] == 2
    assert body_by_form(store, "EDGES", "m1") == {"a": 2}
