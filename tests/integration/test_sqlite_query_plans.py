"""The SQLite store's reads of one person's items and memories use the primary key or an index, never a full scan:
every statement the graph, recall and the item port issue is run through `EXPLAIN QUERY PLAN`."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest

from rapport.clock import FixedClock
from rapport.composition.services import Services
from rapport.domain.models import Domain
from rapport.domain.recall import RecallQuery
from rapport.domain.scope import Scope
from rapport.graph.associations import NewAssociation
from rapport.graph.knowledge_models import NewKnowledgeEdge, NewNode
from rapport.ports.items import ItemQuery, ItemScope
from rapport.services.edges import ADJACENCY_KIND, EdgeRepository
from rapport.services.memories import NewMemory

pytestmark = pytest.mark.integration

T, U = "tenant-a", "user-1"
PERSON_TABLES = ("user_items", "memories")


class Statements:
    """Every statement the store's connection runs, with its values in place (sqlite3's trace callback)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.seen: list[str] = []
        conn.set_trace_callback(self.seen.append)

    def reads(self) -> list[str]:
        return [s for s in dict.fromkeys(self.seen) if s.lstrip().upper().startswith("SELECT")]


def plan(path: str, statement: str) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement}")]


def reads_all_of_a_person(steps: list[str]) -> bool:
    """A scan of a person's table, or an item search bounded by the person and kind only: both read every item of
    the kind, however few the statement returns."""
    for step in steps:
        if step.startswith("SCAN") and any(table in step for table in PERSON_TABLES):
            return True
        if step.startswith("SEARCH user_items") and "item_key" not in step:
            return True
    return False


def full_reads(path: str, statements: list[str]) -> dict[str, list[str]]:
    return {s: steps for s in statements if reads_all_of_a_person(steps := plan(path, s))}


def remember(services: Services, content: str) -> str:
    return services.memories.remember(Scope(T, U), NewMemory(content=content, domain=Domain.USER)).id


def test_the_check_catches_a_read_of_every_item_of_a_kind(services: Services) -> None:
    # The prefix filter the store used to run: a function of the key, so the index stops at the kind.
    remember(services, "Has a dog named Max")
    person = "tenant_id='tenant-a' AND user_id='user-1' AND kind='EDGES'"
    old = f"SELECT body FROM user_items WHERE {person} AND substr(item_key, 1, 3)='01J'"
    key_range = f"SELECT body FROM user_items WHERE {person} AND item_key>='01J' AND item_key<'01K'"
    unindexed = "SELECT body FROM memories WHERE body LIKE '%dog%'"
    path = str(services.settings.sqlite_path)
    assert set(full_reads(path, [old, key_range, unindexed])) == {old, unindexed}


def test_edge_item_and_recall_reads_never_scan_a_persons_items(services: Services, clock: FixedClock) -> None:
    # Given: a person with memories, enrichment's links, patterns, a client's association and knowledge edges
    store = services.store
    statements = Statements(store._conn)  # type: ignore[attr-defined]
    ids = []
    for text in [
        "Loves hiking in the mountains",
        "Went hiking with Sam in the mountains",
        "Planned a hiking trip to the mountains",
        "Bought new hiking boots",
        "Chose PostgreSQL for the orders service",
    ]:
        ids.append(remember(services, text))
        clock.advance(timedelta(minutes=5))
    services.graph.flush(timeout=30)
    association = NewAssociation(memory_id=ids[4], related_memory_id=ids[0], relation="LEADS_TO")
    services.graph.associations.associate(Scope(T, U), association)
    services.graph.knowledge.write(
        T,
        [NewNode(kind="entity", name="PostgreSQL"), NewNode(kind="concept", name="ACID compliance")],
        [NewKnowledgeEdge(source="PostgreSQL", target="ACID compliance", relation="GUARANTEES")],
    )

    # When: every read the graph, recall and the item port make
    scope = Scope(T, U)
    services.recall.recall(scope, RecallQuery(query="hiking in the mountains", limit=3, expand_relations=True))
    services.graph.associations.list_for(scope, ids[0])
    services.graph.knowledge.query(T, "PostgreSQL", depth=2)
    EdgeRepository(services.items).has_any(scope)
    items = ItemScope.of_user(scope)
    for query in (
        ItemQuery(kind=ADJACENCY_KIND),
        ItemQuery(kind=ADJACENCY_KIND, key_prefix=ids[0][:6], limit=2),
        ItemQuery(kind=ADJACENCY_KIND, key_prefix=ids[0][:6], limit=2, descending=True),
        ItemQuery(kind="PATTERN", key_prefix="hik"),
    ):
        page = store.list_items(items, query)  # type: ignore[attr-defined]
        if page.next_cursor:
            store.list_items(items, query.model_copy(update={"cursor": page.next_cursor}))  # type: ignore[attr-defined]
    store.get_items(items, [(ADJACENCY_KIND, i) for i in ids])  # type: ignore[attr-defined]
    services.memories.delete(scope, ids[3])  # its edges go, its patterns are counted again

    # Then: each of those reads is served by a key or an index
    reads = statements.reads()
    assert any("user_items" in s and "item_key>=" in s for s in reads)  # the key-range reads ran
    assert any("user_items" in s and "item_key IN" in s for s in reads)  # and the batched ones
    assert full_reads(str(services.settings.sqlite_path), reads) == {}


def test_a_prefix_read_returns_exactly_the_keys_with_that_prefix(services: Services, clock: FixedClock) -> None:
    # Keys at the edges of the range: the prefix itself, the next code point, the last code point, past the BMP.
    store = services.store
    items = ItemScope.of_user(Scope(T, U))
    keys = ["ab", "ab\U0010ffff", "ab\U0010ffffz", "ab\ud7ffx", "ab\ue000", "ac", "aa\U0010ffff", "a", "abc"]
    for key in keys:
        store.put_item(items, "NOTE", key, {"k": key}, now=clock.now())  # type: ignore[attr-defined]
    listed = store.list_items(items, ItemQuery(kind="NOTE", key_prefix="ab"))  # type: ignore[attr-defined]
    assert [i.key for i in listed.items] == sorted(k for k in keys if k.startswith("ab"))
    last = store.list_items(items, ItemQuery(kind="NOTE", key_prefix="ab\U0010ffff"))  # type: ignore[attr-defined]
    assert [i.key for i in last.items] == ["ab\U0010ffff", "ab\U0010ffffz"]
    # The code point after U+D7FF is a surrogate, which has no UTF-8 form: the bound skips to U+E000.
    below_surrogates = store.list_items(items, ItemQuery(kind="NOTE", key_prefix="ab\ud7ff"))  # type: ignore[attr-defined]
    assert [i.key for i in below_surrogates.items] == ["ab\ud7ffx"]
    everything = store.list_items(items, ItemQuery(kind="NOTE"))  # type: ignore[attr-defined]
    assert len(everything.items) == len(keys)
