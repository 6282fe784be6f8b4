"""The tenant's shared knowledge graph: bounded queries, clear refusals, and never an end user's private memories."""

from __future__ import annotations

import json

import pytest

from rapport.composition.services import Services
from rapport.domain.models import Domain
from rapport.domain.scope import Scope
from rapport.errors import InvalidInputError, NotFoundError
from rapport.graph.knowledge import KnowledgeGraph
from rapport.graph.knowledge_models import EntityMention, NewKnowledgeEdge, NewNode, NodeKind
from rapport.ports.items import ItemQuery, ItemScope
from rapport.services.memories import NewMemory

pytestmark = pytest.mark.integration

T = "tenant-a"
KG_KINDS = ("KG_NODE", "KG_EDGE", "KG_EDGE_IN", "KG_TERM")


def tenant_items(services: Services, tenant: str = T) -> list[str]:
    """Every knowledge item of the tenant, serialised: what another assistant of the tenant could come to read."""
    scope = ItemScope(tenant_id=tenant)
    return [
        json.dumps({"key": item.key, "body": item.body})
        for kind in KG_KINDS
        for item in services.items.list_items(scope, ItemQuery(kind=kind, limit=1000)).items
    ]


def test_depth_is_bounded_by_a_setting(services: Services) -> None:
    knowledge = services.graph.knowledge
    knowledge.write(
        T,
        [NewNode(name="Rome"), NewNode(name="Italy")],
        [NewKnowledgeEdge(source="Rome", target="Italy", relation="LOCATED_IN")],
    )
    assert knowledge.query(T, "rome").depth == 2  # the default
    assert knowledge.query(T, "rome", depth=3).nodes[1].node.id == "entity:italy"
    with pytest.raises(InvalidInputError, match="depth must be between 0 and 3"):
        knowledge.query(T, "rome", depth=4)
    with pytest.raises(InvalidInputError, match="no searchable words"):
        knowledge.query(T, "the of")


def test_the_walk_stops_at_the_node_cap(services: Services) -> None:
    settings = services.settings.graph.model_copy(update={"knowledge_max_nodes": 3})
    small = KnowledgeGraph(services.items, settings, services.clock)
    small.write(
        T,
        [NewNode(name="Hub"), *(NewNode(name=f"Spoke {i}") for i in range(5))],
        [NewKnowledgeEdge(source="Hub", target=f"Spoke {i}", relation="HAS") for i in range(5)],
    )
    result = small.query(T, "hub", depth=1)
    assert len(result.nodes) == 3 and result.truncated


def test_bad_writes_are_refused_before_anything_is_stored(services: Services) -> None:
    knowledge = services.graph.knowledge
    with pytest.raises(InvalidInputError, match="is no node"):
        knowledge.write(
            T, [NewNode(name="Rome")], [NewKnowledgeEdge(source="Rome", target="Atlantis", relation="NEAR")]
        )
    assert tenant_items(services) == []
    with pytest.raises(InvalidInputError, match="UPPER_SNAKE"):
        knowledge.write(
            T,
            [NewNode(name="Rome"), NewNode(name="Italy")],
            [NewKnowledgeEdge(source="Rome", target="Italy", relation="is in!")],
        )
    with pytest.raises(InvalidInputError, match="nothing to store"):
        knowledge.write(T, [], [])


def test_nodes_merge_and_edges_keep_their_strongest_statement(services: Services) -> None:
    knowledge = services.graph.knowledge
    knowledge.write(T, [NewNode(name="PostgreSQL", attributes={"license": "PostgreSQL"})], [])
    knowledge.write(T, [NewNode(name="postgresql", aliases=["Postgres"], description="An open-source database")], [])
    node = knowledge.get_node(T, "entity:postgresql")
    assert node is not None and node.name == "PostgreSQL" and node.aliases == ["Postgres"]
    assert node.attributes == {"license": "PostgreSQL"} and node.description == "An open-source database"
    knowledge.write(
        T,
        [NewNode(kind=NodeKind.CONCEPT, name="SQL")],
        [NewKnowledgeEdge(source="PostgreSQL", target="SQL", relation="SPEAKS", strength=0.9)],
    )
    written = knowledge.write(
        T, [], [NewKnowledgeEdge(source="entity:postgresql", target="concept:sql", relation="SPEAKS", strength=0.5)]
    )
    assert written.edges[0].strength == 0.9


def test_the_pipeline_feed_keeps_things_not_people_and_nothing_about_the_user(services: Services) -> None:
    # Given an end user's private memories that mention a technology and their mother,
    secret = "Is worried her mother Sarah will find out about the PostgreSQL outage at Acme"
    services.memories.remember(Scope(T, "dana"), NewMemory(content=secret, domain=Domain.USER))
    # when the pipeline hands the entities it found to the shared graph,
    ids = services.graph.knowledge.add_entities(
        T,
        [
            EntityMention(name="PostgreSQL", category="technology"),
            EntityMention(name="Acme", category="organization"),
            EntityMention(name="Sarah", category="person"),
        ],
    )
    # then only the things are shared, and no user id, memory id or memory text is in any knowledge item.
    assert ids == ["entity:postgresql", "entity:acme"]
    stored = "\n".join(tenant_items(services))
    assert "sarah" not in stored.casefold() and "dana" not in stored and "worried" not in stored
    memory_ids = [m.id for m in services.store.list_memories(Scope(T, "dana"), domains=(Domain.USER,), limit=10).items]
    assert memory_ids and not any(memory_id in stored for memory_id in memory_ids)
    # and erasing the end user leaves the tenant's knowledge as it was.
    before = tenant_items(services)
    services.privacy.erase_user(Scope(T, "dana"), actor="test")
    assert tenant_items(services) == before


def test_erasure_removes_every_edge_of_the_end_user(services: Services) -> None:
    remember = services.memories.remember
    first = remember(Scope(T, "dana"), NewMemory(content="Has a dog named Max", domain=Domain.USER)).id
    second = remember(Scope(T, "dana"), NewMemory(content="Has a dog named Max at home", domain=Domain.USER)).id
    linked = services.graph.associations.list_for(Scope(T, "dana"), first)
    assert {a.target_id for a in linked} | {a.source_id for a in linked} >= {second}  # enrichment linked them
    services.privacy.erase_user(Scope(T, "dana"), actor="test")
    scope = ItemScope(tenant_id=T, user_id="dana")
    for kind in ("EDGES", "PATTERN"):
        assert services.items.list_items(scope, ItemQuery(kind=kind, limit=10)).items == []


def test_deleting_a_node_removes_its_edges_both_ways_and_its_search_terms(services: Services) -> None:
    knowledge = services.graph.knowledge
    knowledge.write(
        T,
        [NewNode(name="Rome", aliases=["Roma"]), NewNode(name="Italy"), NewNode(name="Lazio")],
        [
            NewKnowledgeEdge(source="Rome", target="Italy", relation="LOCATED_IN"),
            NewKnowledgeEdge(source="Lazio", target="Rome", relation="CONTAINS"),
            NewKnowledgeEdge(source="Lazio", target="Italy", relation="PART_OF"),
        ],
    )
    assert knowledge.delete_node(T, "entity:rome") == 2
    # Nothing of Rome is left among the tenant's items; the edge that did not touch it stays
    assert not [item for item in tenant_items(services) if "entity:rome" in item or '"roma#' in item]
    assert [(e.source_id, e.target_id) for e in knowledge.query(T, "lazio", depth=1).edges] == [
        ("entity:lazio", "entity:italy")
    ]
    assert knowledge.query(T, "roma").nodes == []
    with pytest.raises(NotFoundError):
        knowledge.delete_node(T, "entity:rome")
