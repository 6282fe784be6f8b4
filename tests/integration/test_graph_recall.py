"""Associations and recall expansion over the local stack: a decision and an evolution pattern end to end."""

from __future__ import annotations

from datetime import timedelta

import pytest

from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, DomainFilter, MemoryStatus
from rapport.domain.recall import RecallQuery
from rapport.domain.relations import Direction, RelationType
from rapport.domain.scope import Scope
from rapport.errors import InvalidInputError, NotFoundError
from rapport.graph.associations import InvalidRelationError, NewAssociation
from rapport.ports.items import ItemQuery, ItemScope
from rapport.services.edges import ADJACENCY_KIND
from rapport.services.memories import NewMemory
from rapport.services.recall import Recall
from rapport.settings import EnrichmentMode

pytestmark = pytest.mark.integration

T, U = "tenant-a", "user-1"


def remember(services: Services, content: str, domain: Domain = Domain.USER, **kw: object) -> str:
    return services.memories.remember(Scope(T, U), NewMemory(content=content, domain=domain, **kw)).id  # type: ignore[arg-type]


def link(services: Services, source: str, relation: str, target: str, **properties: object) -> bool:
    new = NewAssociation(memory_id=source, related_memory_id=target, relation=relation, properties=properties)
    return services.graph.associations.associate(Scope(T, U), new).created


def recall(services: Services, query: str, **kw: object) -> list:
    return services.recall.recall(Scope(T, U), RecallQuery(query=query, **kw))  # type: ignore[arg-type]


@pytest.fixture
def decision(services: Services, clock: FixedClock) -> dict[str, str]:
    """A decision pattern, three days after an unrelated memory (so no PRECEDED_BY ties them)."""
    remember(services, "Has a dog named Max")
    clock.advance(timedelta(days=3))
    ids = {
        "evaluated": remember(services, "Evaluated PostgreSQL vs MongoDB for the orders service"),
        "chose": remember(services, "Chose PostgreSQL for ACID compliance"),
        "notes": remember(services, "MongoDB evaluation notes: flexible schema, weaker transactions"),
    }
    assert link(services, ids["evaluated"], "LEADS_TO", ids["chose"], reason="the evaluation decided it")
    assert link(
        services, ids["chose"], "PREFERS_OVER", ids["notes"], context="orders database", reason="ACID compliance"
    )
    return ids


@pytest.fixture
def evolution(services: Services, clock: FixedClock) -> dict[str, str]:
    clock.advance(timedelta(days=3))
    old = remember(services, "Writes asynchronous JavaScript with callbacks")
    clock.advance(timedelta(days=2))
    new = remember(services, "Writes asynchronous JavaScript with async/await now")
    link(services, old, "EVOLVED_INTO", new, confidence=0.9, reason="moved to promises")
    link(services, old, "CONTRADICTS", new, resolution="async/await is current", reason="style changed")
    link(services, old, "INVALIDATED_BY", new, reason="no longer writes callbacks")
    return {"old": old, "new": new}


def test_recall_with_expansion_returns_the_decision_with_the_paths_that_reached_it(
    services: Services, decision: dict[str, str]
) -> None:
    # Given the decision pattern, when recall finds the choice and expands from it,
    hits = recall(services, "Which database did we choose for ACID compliance?", limit=1, expand_relations=True)
    # then the choice comes first, found by the query, and both linked memories follow with their paths.
    assert hits[0].memory.id == decision["chose"] and hits[0].path == []
    paths = {h.memory.id: [(s.from_id, s.relation, s.direction) for s in h.path] for h in hits[1:]}
    assert paths == {
        decision["notes"]: [(decision["chose"], RelationType.PREFERS_OVER, Direction.OUTGOING)],
        decision["evaluated"]: [(decision["chose"], RelationType.LEADS_TO, Direction.INCOMING)],
    }
    assert any("linked to" in reason for reason in hits[1].match_reasons)
    # Without expansion only the query's own hit comes back.
    assert [h.memory.id for h in recall(services, "Which database did we choose for ACID compliance?", limit=1)] == [
        decision["chose"]
    ]


def test_the_invalidated_memory_comes_back_only_when_history_is_asked_for(
    services: Services, evolution: dict[str, str]
) -> None:
    assert services.memories.get(Scope(T, U), evolution["old"]).status is MemoryStatus.INVALIDATED
    current = recall(services, "asynchronous JavaScript style", limit=1, expand_relations=True)
    assert [h.memory.id for h in current] == [evolution["new"]]

    history = recall(services, "async/await JavaScript", limit=1, expand_relations=True, include_archived=True)
    assert [h.memory.id for h in history] == [evolution["new"], evolution["old"]]
    step = history[1].path[0]
    assert step.from_id == evolution["new"]
    assert step.relation in {RelationType.EVOLVED_INTO, RelationType.CONTRADICTS, RelationType.INVALIDATED_BY}


def test_a_memory_lists_its_associations_both_ways_and_a_bidirectional_one_once(
    services: Services, evolution: dict[str, str]
) -> None:
    listed = services.graph.associations.list_for(Scope(T, U), evolution["old"])
    by_relation = {a.relation.value: a for a in listed if not a.enrichment}
    assert set(by_relation) == {"EVOLVED_INTO", "CONTRADICTS", "INVALIDATED_BY"}
    assert by_relation["EVOLVED_INTO"].direction is Direction.OUTGOING
    assert by_relation["EVOLVED_INTO"].properties == {"confidence": 0.9, "reason": "moved to promises"}
    assert by_relation["CONTRADICTS"].direction is None  # the same both ways
    from_new = services.graph.associations.list_for(Scope(T, U), evolution["new"], "EVOLVED_INTO")
    assert [(a.source_id, a.direction) for a in from_new] == [(evolution["old"], Direction.INCOMING)]


def test_the_same_edge_posted_twice_is_merged(services: Services, decision: dict[str, str]) -> None:
    created = link(services, decision["chose"], "PREFERS_OVER", decision["notes"], strength=0.4, reason="ACID only")
    assert created is False
    edges = [
        a
        for a in services.graph.associations.list_for(Scope(T, U), decision["chose"], "PREFERS_OVER")
        if a.target_id == decision["notes"]
    ]
    assert len(edges) == 1
    assert edges[0].strength == 1.0  # never weakened by a repeat
    assert edges[0].properties == {"context": "orders database", "reason": "ACID only"}
    # A bidirectional edge posted from its other end is the same edge too.
    assert link(services, decision["notes"], "RELATES_TO", decision["evaluated"]) is True
    assert link(services, decision["evaluated"], "RELATES_TO", decision["notes"]) is False


def test_bad_associations_are_refused_with_what_to_fix(services: Services, decision: dict[str, str]) -> None:
    chose, notes = decision["chose"], decision["notes"]
    with pytest.raises(InvalidRelationError) as unknown:
        link(services, chose, "LIKES", notes)
    assert unknown.value.details["valid_relations"] == [t.value for t in RelationType]
    with pytest.raises(InvalidRelationError):
        link(services, chose, "SIMILAR_TO", notes)  # enrichment's own type: not for clients
    with pytest.raises(InvalidInputError, match="allowed: strength, timestamp, context, reason"):
        link(services, chose, "PREFERS_OVER", notes, because="ACID")
    with pytest.raises(InvalidInputError, match="strength"):
        link(services, chose, "LEADS_TO", notes, strength=2)
    with pytest.raises(InvalidInputError, match="itself"):
        link(services, chose, "LEADS_TO", chose)
    with pytest.raises(NotFoundError):
        link(services, chose, "LEADS_TO", "01KE5Q8600Y4VXQG7QKPX7V7DH")
    with pytest.raises(NotFoundError):
        link(services, "01KE5Q8600Y4VXQG7QKPX7V7DH", "LEADS_TO", chose)
    # Another end user's memory is as absent as a made-up one, and so is another tenant's.
    stranger = services.memories.remember(Scope(T, "user-2"), NewMemory(content="Likes tea", domain=Domain.USER)).id
    with pytest.raises(NotFoundError):
        link(services, chose, "LEADS_TO", stranger)
    with pytest.raises(NotFoundError):
        services.graph.associations.associate(
            Scope("tenant-b", U), NewAssociation(memory_id=chose, related_memory_id=notes, relation="LEADS_TO")
        )


def test_removing_an_association_and_restoring_an_invalidated_memory(
    services: Services, evolution: dict[str, str]
) -> None:
    associations = services.graph.associations
    associations.remove(
        Scope(T, U), evolution["new"], evolution["old"], "contradicts"
    )  # either end of a bidirectional one
    assert not [
        a for a in associations.list_for(Scope(T, U), evolution["old"]) if a.relation is RelationType.CONTRADICTS
    ]
    with pytest.raises(NotFoundError):
        associations.remove(Scope(T, U), evolution["old"], evolution["new"], "CONTRADICTS")
    associations.remove(Scope(T, U), evolution["old"], evolution["new"], "INVALIDATED_BY")
    assert services.memories.get(Scope(T, U), evolution["old"]).status is MemoryStatus.ACTIVE


def test_deleting_a_memory_removes_its_edges_both_ways_and_their_mirrors(
    services: Services, decision: dict[str, str]
) -> None:
    chose = decision["chose"]
    services.memories.delete(Scope(T, U), chose)
    scope = ItemScope(tenant_id=T, user_id=U)
    nodes = services.items.list_items(scope, ItemQuery(kind=ADJACENCY_KIND, limit=1000)).items
    # Its own adjacency item is gone, and no other node keeps an edge to or from it.
    assert nodes and chose not in {node.key for node in nodes}
    assert not [name for node in nodes for name in node.body if name.split("|", 2)[2] == chose]
    assert services.graph.associations.list_for(Scope(T, U), decision["notes"], "PREFERS_OVER") == []


def test_the_relation_component_lifts_a_linked_memory(services: Services) -> None:
    plain = remember(services, "Deploys the orders service on Fridays")
    linked = remember(services, "Deploys the billing service on Fridays")
    reason = remember(services, "Friday deploys avoid the Monday traffic peak", domain=Domain.RELATIONAL)
    link(services, reason, "LEADS_TO", linked)
    link(services, linked, "PART_OF", reason, role="practice")
    hits = {h.memory.id: h for h in recall(services, "deploys on Fridays", limit=5)}
    # Same wording apart from one word: the graph's part is what separates them.
    assert hits[linked].score > hits[plain].score
    linked_reason = next(r for r in hits[linked].match_reasons if r.startswith("linked: "))
    assert {"LEADS_TO", "PART_OF"} <= set(linked_reason.removeprefix("linked: ").split(", "))


def test_expansion_honours_its_limits_strength_and_domain(
    services: Services, decision: dict[str, str], clock: FixedClock
) -> None:
    query = "Which database did we choose for ACID compliance?"
    assert len(recall(services, query, limit=1, expand_relations=True, relation_limit=1)) == 2
    assert len(recall(services, query, limit=1, expand_relations=True, expansion_limit=0)) == 1
    assert len(recall(services, query, limit=1, expand_relations=True, domain=DomainFilter.RELATIONAL)) == 0
    clock.advance(timedelta(days=2))  # out of PRECEDED_BY's reach: only the weak link ties it to the others
    weak = remember(services, "A hunch about CockroachDB", domain=Domain.RELATIONAL)
    link(services, decision["chose"], "RELATES_TO", weak, strength=0.2)
    reached = {h.memory.id for h in recall(services, query, limit=1, expand_relations=True)}
    assert weak not in reached  # below expand_min_strength 0.3
    reached = {h.memory.id for h in recall(services, query, limit=1, expand_relations=True, expand_min_strength=0.1)}
    assert weak in reached


def test_without_edges_recall_is_what_it_was_before_the_graph(services: Services, clock: FixedClock) -> None:
    off = services.settings.model_copy(
        update={"graph": services.settings.graph.model_copy(update={"enrichment": EnrichmentMode.OFF})}
    )
    quiet = build_services(off, clock=clock, store=services.store, index=services.index, embedder=services.embedder)
    for content in ("Has a dog named Max", "Works at Acme", "Max likes the beach"):
        quiet.memories.remember(Scope(T, U), NewMemory(content=content, domain=Domain.USER))
    plain = Recall(services.store, services.index, services.embedder, services.settings, clock)
    query = RecallQuery(query="Max the dog", limit=5, expand_relations=True)
    assert quiet.recall.recall(Scope(T, U), query) == plain.recall(Scope(T, U), query)
