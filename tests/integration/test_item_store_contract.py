"""Contract suite of the `ItemStore` port: versioned, expiring items behave the same in DynamoDB and SQLite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rapport.adapters.dynamodb.store import DynamoDbMemoryStore
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.domain.scope import Scope
from rapport.errors import ConflictError
from rapport.ports.items import FieldChange, ItemDelete, ItemPut, ItemQuery, ItemScope

pytestmark = pytest.mark.integration

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DANA = ItemScope(tenant_id="acme", user_id="dana")
Store = DynamoDbMemoryStore | SqliteMemoryStore


def test_put_get_and_versions(any_store: Store) -> None:
    first = any_store.put_item(DANA, "STATE", "", {"trust": 0.5}, now=NOW)
    assert first.version == 1
    second = any_store.put_item(DANA, "STATE", "", {"trust": 0.51}, now=NOW + timedelta(seconds=1))
    assert second.version == 2
    got = any_store.get_item(DANA, "STATE", "")
    assert got is not None and got.body == {"trust": 0.51} and got.version == 2
    assert got.updated_at == NOW + timedelta(seconds=1)
    assert any_store.get_item(DANA, "STATE", "other") is None


def test_optimistic_concurrency(any_store: Store) -> None:
    any_store.put_item(DANA, "PROFILE", "", {"n": 1}, now=NOW, expected_version=0)
    with pytest.raises(ConflictError):
        any_store.put_item(DANA, "PROFILE", "", {"n": 1}, now=NOW, expected_version=0)
    any_store.put_item(DANA, "PROFILE", "", {"n": 2}, now=NOW, expected_version=1)
    with pytest.raises(ConflictError):
        # A writer that read version 1 lost the race to the writer above: its update must not land.
        any_store.put_item(DANA, "PROFILE", "", {"n": 99}, now=NOW, expected_version=1)
    stored = any_store.get_item(DANA, "PROFILE", "")
    assert stored is not None and stored.body == {"n": 2} and stored.version == 2


def test_scopes_are_isolated(any_store: Store) -> None:
    any_store.put_item(DANA, "PERSON", "sarah", {"name": "Sarah"}, now=NOW)
    for other in (
        ItemScope(tenant_id="acme", user_id="eve"),
        ItemScope(tenant_id="acme2", user_id="dana"),
        ItemScope(tenant_id="acme"),
    ):
        assert any_store.get_item(other, "PERSON", "sarah") is None
        assert any_store.list_items(other, ItemQuery(kind="PERSON")).items == []
    tenant_scope = ItemScope(tenant_id="acme")
    any_store.put_item(tenant_scope, "KG_NODE", "postgres", {"label": "PostgreSQL"}, now=NOW)
    assert any_store.get_item(tenant_scope, "KG_NODE", "postgres") is not None
    assert any_store.get_item(DANA, "KG_NODE", "postgres") is None


def test_list_by_prefix_in_key_order_with_paging(any_store: Store) -> None:
    for dst in ("m3", "m1", "m2"):
        any_store.put_item(DANA, "EDGE", f"a#RELATES_TO#{dst}", {"dst": dst}, now=NOW)
    any_store.put_item(DANA, "EDGE", "b#RELATES_TO#m9", {"dst": "m9"}, now=NOW)
    any_store.put_item(DANA, "EDGE_IN", "a#RELATES_TO#x", {"dst": "x"}, now=NOW)

    first = any_store.list_items(DANA, ItemQuery(kind="EDGE", key_prefix="a#", limit=2))
    assert [i.key for i in first.items] == ["a#RELATES_TO#m1", "a#RELATES_TO#m2"]
    rest = any_store.list_items(DANA, ItemQuery(kind="EDGE", key_prefix="a#", limit=2, cursor=first.next_cursor))
    assert [i.key for i in rest.items] == ["a#RELATES_TO#m3"] and rest.next_cursor is None
    everything = any_store.list_items(DANA, ItemQuery(kind="EDGE", descending=True))
    assert [i.key for i in everything.items] == [
        "b#RELATES_TO#m9",
        "a#RELATES_TO#m3",
        "a#RELATES_TO#m2",
        "a#RELATES_TO#m1",
    ]


def test_delete_and_expiry(any_store: Store) -> None:
    expires = NOW + timedelta(minutes=30)
    item = any_store.put_item(DANA, "SESSION", "s1", {"turns": []}, now=NOW, expires_at=expires)
    assert item.expires_at == expires
    got = any_store.get_item(DANA, "SESSION", "s1")
    assert got is not None and got.is_live(NOW) and not got.is_live(expires + timedelta(seconds=1))
    refreshed = any_store.put_item(DANA, "SESSION", "s1", {"turns": [1]}, now=NOW)
    assert refreshed.expires_at is None
    assert any_store.delete_item(DANA, "SESSION", "s1") is True
    assert any_store.delete_item(DANA, "SESSION", "s1") is False


def test_erasing_a_user_removes_their_items_only(any_store: Store) -> None:
    any_store.register_user(Scope("acme", "dana"))
    any_store.put_item(DANA, "STATE", "", {"trust": 0.5}, now=NOW)
    any_store.put_item(DANA, "PERSON", "sarah", {}, now=NOW)
    eve = ItemScope(tenant_id="acme", user_id="eve")
    any_store.put_item(eve, "STATE", "", {"trust": 0.2}, now=NOW)
    counts = any_store.erase_user(Scope("acme", "dana"))
    assert counts.other_items == 3  # two items and the registration
    assert any_store.get_item(DANA, "STATE", "") is None
    assert any_store.get_item(eve, "STATE", "") is not None


@pytest.mark.parametrize("kind", ["MEM", "INT", "USER", "APIKEY", "lower", "", "X" * 40])
def test_reserved_or_malformed_kinds_are_refused(any_store: Store, kind: str) -> None:
    with pytest.raises(ValueError, match="item kind"):
        any_store.put_item(DANA, kind, "k", {}, now=NOW)


def test_items_are_read_and_written_together(any_store: Store) -> None:
    # Given a versioned item and a field-written one, written in one call,
    any_store.write_items(
        DANA,
        [
            ItemPut(kind="STATE", key="", body={"trust": 0.5}, expected_version=0),
            FieldChange(kind="EDGES", key="m1", set={"out|A|m2": {"w": 1}, "out|A|m3": {"w": 2}}),
        ],
        now=NOW,
    )
    # when both are read at once (with one that does not exist),
    found = any_store.get_items(DANA, [("STATE", ""), ("EDGES", "m1"), ("EDGES", "nope")])
    # then each comes back with its body; the missing one is simply absent.
    assert set(found) == {("STATE", ""), ("EDGES", "m1")}
    assert found[("STATE", "")].body == {"trust": 0.5} and found[("STATE", "")].version == 1
    assert found[("EDGES", "m1")].body == {"out|A|m2": {"w": 1}, "out|A|m3": {"w": 2}}
    # Fields are set and removed without touching the others.
    any_store.write_items(DANA, [FieldChange(kind="EDGES", key="m1", set={"in|B|m4": 3}, remove={"out|A|m2"})], now=NOW)
    item = any_store.get_item(DANA, "EDGES", "m1")
    assert item is not None and item.body == {"out|A|m3": {"w": 2}, "in|B|m4": 3} and item.version == 2
    assert any_store.get_items(ItemScope(tenant_id="acme", user_id="erin"), [("EDGES", "m1")]) == {}


def test_a_write_of_many_items_is_all_or_nothing(any_store: Store) -> None:
    any_store.put_item(DANA, "STATE", "", {"trust": 0.5}, now=NOW)
    # A stale expected version anywhere in the call refuses the whole call: the field change is not written either.
    with pytest.raises(ConflictError):
        any_store.write_items(
            DANA,
            [
                FieldChange(kind="EDGES", key="m1", set={"out|A|m2": 1}),
                ItemPut(kind="STATE", key="", body={"trust": 0.9}, expected_version=7),
            ],
            now=NOW,
        )
    assert any_store.get_item(DANA, "EDGES", "m1") is None
    state = any_store.get_item(DANA, "STATE", "")
    assert state is not None and state.body == {"trust": 0.5}
    # With the right version it goes through, and a delete can ride along.
    any_store.write_items(
        DANA,
        [ItemPut(kind="STATE", key="", body={"trust": 0.9}, expected_version=1), ItemDelete(kind="EDGES", key="m1")],
        now=NOW,
    )
    state = any_store.get_item(DANA, "STATE", "")
    assert state is not None and state.body == {"trust": 0.9} and state.version == 2
    with pytest.raises(ValueError, match="twice"):
        any_store.write_items(DANA, [ItemDelete(kind="EDGES", key="x"), ItemDelete(kind="EDGES", key="x")], now=NOW)


def test_a_delete_with_a_stale_version_refuses_the_whole_write(any_store: Store) -> None:
    # Given a person at version 2, after someone changed the version 1 a writer read
    any_store.put_item(DANA, "PERSON", "mother", {"role": "mother"}, now=NOW)
    any_store.put_item(DANA, "PERSON", "mother", {"role": "mother", "mentions": 2}, now=NOW)
    # When that writer deletes what it read, beside another write
    with pytest.raises(ConflictError):
        any_store.write_items(
            DANA,
            [
                ItemPut(kind="PERSON", key="linda", body={"name": "Linda"}, expected_version=0),
                ItemDelete(kind="PERSON", key="mother", expected_version=1),
            ],
            now=NOW,
        )
    # Then nothing of it happened; the delete expecting the version as it stands goes through
    assert any_store.get_item(DANA, "PERSON", "linda") is None
    assert any_store.get_item(DANA, "PERSON", "mother") is not None
    any_store.write_items(DANA, [ItemDelete(kind="PERSON", key="mother", expected_version=2)], now=NOW)
    assert any_store.get_item(DANA, "PERSON", "mother") is None
