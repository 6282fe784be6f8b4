"""Edges, patterns and shared knowledge on both stores (DynamoDB under moto, SQLite), and what erasure removes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rapport.adapters.dynamodb.store import DynamoDbMemoryStore
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.clock import FixedClock
from rapport.domain.relations import Edge, EnrichmentType, RelationType
from rapport.domain.scope import Scope
from rapport.graph.knowledge import KnowledgeGraph
from rapport.graph.knowledge_models import EntityMention, NewKnowledgeEdge, NewNode, NodeKind
from rapport.graph.patterns import Pattern, PatternRepository
from rapport.ports.items import ItemQuery, ItemScope
from rapport.services.edges import EdgeRepository
from rapport.settings import GraphSettings

pytestmark = pytest.mark.integration

AT = datetime(2026, 1, 5, tzinfo=UTC)
T, U = "tenant-a", "user-1"
Store = DynamoDbMemoryStore | SqliteMemoryStore


def edge(source: str, relation: RelationType | EnrichmentType, target: str, strength: float = 1.0) -> Edge:
    return Edge(source_id=source, target_id=target, type=relation, strength=strength, timestamp=AT)


def test_edges_list_from_either_end_with_limits(any_store: Store) -> None:
    edges = EdgeRepository(any_store)
    assert not edges.has_any(Scope(T, U))
    for target in ("B", "C", "D"):
        edges.put(Scope(T, U), edge("A", RelationType.LEADS_TO, target))
    edges.put(Scope(T, U), edge("A", EnrichmentType.SIMILAR_TO, "E", 0.9))
    assert edges.has_any(Scope(T, U))
    assert {e.target_id for e in edges.outgoing(Scope(T, U), "A", RelationType.LEADS_TO)} == {"B", "C", "D"}
    assert len(edges.outgoing(Scope(T, U), "A", limit=2)) == 2
    assert edges.outgoing(Scope(T, U), "A", limit=0) == []
    assert [e.source_id for e in edges.incoming(Scope(T, U), "C")] == ["A"]
    # Similarity is symmetric: stored both ways, so E finds A as well.
    assert [(e.target_id, e.strength) for e in edges.outgoing(Scope(T, U), "E")] == [("A", 0.9)]
    assert not EdgeRepository(any_store).has_any(Scope(T, "user-2"))


def test_delete_all_removes_a_nodes_edges_both_ways_and_every_mirror(any_store: Store) -> None:
    edges = EdgeRepository(any_store)
    edges.put(Scope(T, U), edge("A", RelationType.LEADS_TO, "B"))
    edges.put(Scope(T, U), edge("C", RelationType.PREFERS_OVER, "B"))
    edges.put(Scope(T, U), edge("B", RelationType.CONTRADICTS, "D"))
    edges.put(Scope(T, U), edge("C", RelationType.LEADS_TO, "D"))
    assert edges.delete_all(Scope(T, U), "B") == 3
    scope = ItemScope(tenant_id=T, user_id=U)
    left = {
        (item.key, name)
        for item in any_store.list_items(scope, ItemQuery(kind="EDGES", limit=100)).items
        for name in item.body
    }
    # One edge is left, kept at both of its ends; B's own adjacency item is gone.
    assert left == {("C", "out|LEADS_TO|D"), ("D", "in|LEADS_TO|C")}
    assert "B" not in {item.key for item in any_store.list_items(scope, ItemQuery(kind="EDGES", limit=100)).items}
    assert not edges.has_any(Scope(T, "user-2"))


def test_edges_of_many_nodes_are_read_together_and_written_together(any_store: Store) -> None:
    # Given edges written in one call, a symmetric one among them,
    edges = EdgeRepository(any_store)
    edges.put_many(
        Scope(T, U),
        [edge("A", RelationType.LEADS_TO, "B"), edge("B", EnrichmentType.SIMILAR_TO, "C", 0.7)],
    )
    # when the edges of several nodes (one without any) are read at once,
    found = edges.edges_of(Scope(T, U), ["A", "B", "C", "Z"])
    # then each node has its own edges, both directions, and the symmetric one from both ends.
    assert [(e.source_id, e.target_id) for e in found["A"].outgoing] == [("A", "B")] and found["A"].incoming == []
    assert [(e.type.value, e.target_id) for e in found["B"].outgoing] == [("SIMILAR_TO", "C")]
    assert [e.source_id for e in found["B"].incoming] == ["A", "C"]
    assert [(e.target_id, e.strength) for e in found["C"].outgoing] == [("B", 0.7)]
    assert found["Z"].outgoing == [] and found["Z"].incoming == []
    # Writing an edge again replaces it rather than adding a second one.
    edges.put(Scope(T, U), edge("A", RelationType.LEADS_TO, "B", 0.4))
    assert [e.strength for e in edges.outgoing(Scope(T, U), "A")] == [0.4]
    assert edges.delete(Scope(T, U), "B", EnrichmentType.SIMILAR_TO, "C")
    assert edges.outgoing(Scope(T, U), "C") == [] and not edges.delete(Scope(T, U), "B", EnrichmentType.SIMILAR_TO, "C")


def test_erasure_removes_the_users_edges_and_patterns_but_not_the_tenants_knowledge(any_store: Store) -> None:
    # Given an end user with edges and a pattern, and tenant knowledge fed from their conversations,
    edges = EdgeRepository(any_store)
    edges.put(Scope(T, U), edge("A", RelationType.LEADS_TO, "B"))
    edges.put(Scope(T, U), edge("A", RelationType.EXEMPLIFIES, "pattern:postgresql"))
    PatternRepository(any_store).put(
        Scope(T, U),
        "postgresql",
        Pattern(
            id="pattern:postgresql",
            key_terms=["postgresql"],
            occurrences=3,
            confidence=0.5,
            created_at=AT,
            updated_at=AT,
        ),
    )
    edges.put(Scope(T, "user-2"), edge("X", RelationType.LEADS_TO, "Y"))
    knowledge = KnowledgeGraph(any_store, GraphSettings(), FixedClock(AT))
    knowledge.add_entities(T, [EntityMention(name="PostgreSQL", category="technology")])
    # when the end user is erased,
    any_store.erase_user(Scope(T, U))
    # then nothing of theirs is left, another user's edges stay, and the shared graph stays.
    scope = ItemScope(tenant_id=T, user_id=U)
    for kind in ("EDGES", "PATTERN"):
        assert any_store.list_items(scope, ItemQuery(kind=kind, limit=10)).items == []
    assert edges.has_any(Scope(T, "user-2"))
    assert knowledge.get_node(T, "entity:postgresql") is not None


def test_knowledge_is_written_queried_and_fenced_per_tenant(any_store: Store) -> None:
    knowledge = KnowledgeGraph(any_store, GraphSettings(), FixedClock(AT))
    knowledge.write(
        T,
        [
            NewNode(name="PostgreSQL", category="database", aliases=["Postgres"]),
            NewNode(kind=NodeKind.CONCEPT, name="ACID compliance"),
            NewNode(kind=NodeKind.FACT, name="Transactions are all-or-nothing"),
        ],
        [
            NewKnowledgeEdge(source="PostgreSQL", target="ACID compliance", relation="guarantees"),
            NewKnowledgeEdge(
                source="concept:acid-compliance", target="Transactions are all-or-nothing", relation="MEANS"
            ),
        ],
    )
    found = knowledge.query(T, "postgres", depth=2)
    assert [(n.node.id, n.distance) for n in found.nodes][:2] == [
        ("entity:postgresql", 0),
        ("concept:acid-compliance", 1),
    ]
    assert found.nodes[2].distance == 2 and found.nodes[2].node.kind is NodeKind.FACT
    assert {(e.source_id, e.relation) for e in found.edges} == {
        ("entity:postgresql", "GUARANTEES"),
        ("concept:acid-compliance", "MEANS"),
    }
    assert [n.node.id for n in knowledge.query(T, "postgres", depth=0).nodes] == ["entity:postgresql"]
    assert knowledge.query("tenant-b", "postgres").nodes == []
