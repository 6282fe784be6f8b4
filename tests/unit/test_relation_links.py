"""Recall scores a node's edges from their stored types and strengths (`Adjacency.links`) without validating them:
the score must be the one the validated edges give, cut at the read limit as expansion cuts them."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from rapport.domain.relations import Edge, EnrichmentType, RelationType
from rapport.graph.relation_score import RelationScoreRule
from rapport.services.edges import Adjacency, EdgeRepository
from rapport.settings import GraphSettings

AT = datetime(2026, 1, 5, tzinfo=UTC)
TYPES = [*RelationType, *EnrichmentType]

edges = st.lists(
    st.builds(
        lambda kind, other, strength, outgoing: Edge(
            source_id="node" if outgoing else other,
            target_id=other if outgoing else "node",
            type=kind,
            strength=strength,
            timestamp=AT,
        ),
        st.sampled_from(TYPES),
        st.sampled_from([f"m{n}" for n in range(8)]),
        st.floats(0.0, 1.0),
        st.booleans(),
    ),
    max_size=30,
)


def adjacency_of(stored: list[Edge]) -> Adjacency:
    """The node's adjacency item as the repository writes it."""
    body: dict[str, object] = {}
    for write in EdgeRepository(items=None).writes(stored):  # type: ignore[arg-type]  # writes() reads nothing
        if write.key == "node":
            body.update(write.set)  # type: ignore[union-attr]
    return Adjacency(body)


@given(edges, st.integers(1, 12))
def test_the_score_from_stored_fields_is_the_score_of_the_validated_edges(stored: list[Edge], limit: int) -> None:
    rule = RelationScoreRule.of(GraphSettings())
    adjacency = adjacency_of(stored)
    every = adjacency.edges()
    outgoing, incoming = adjacency.links(limit)
    assert rule.relation_of_links(incoming, outgoing) == rule.relation(every.incoming[:limit], every.outgoing[:limit])


@given(edges, st.integers(1, 12), st.integers(1, 12))
def test_a_shared_adjacency_keeps_each_limits_score_apart(stored: list[Edge], limit: int, other: int) -> None:
    # Given one adjacency scored at two limits, as recalls that share it might (kept per limit and score)
    rule = RelationScoreRule.of(GraphSettings())
    adjacency = adjacency_of(stored)
    every = adjacency.edges()
    first = adjacency.relation(limit, rule.relation_of_links)
    second = adjacency.relation(other, rule.relation_of_links)
    # Then each is the score of the validated edges cut at its own limit, and asking again gives the same object
    assert first == rule.relation(every.incoming[:limit], every.outgoing[:limit])
    assert second == rule.relation(every.incoming[:other], every.outgoing[:other])
    assert adjacency.relation(limit, rule.relation_of_links) is first


@given(edges, st.integers(1, 12))
def test_an_adjacency_kept_between_reads_reads_as_the_item_read(stored: list[Edge], limit: int) -> None:
    rule = RelationScoreRule.of(GraphSettings())
    read = adjacency_of(stored)
    kept = Adjacency.kept(dict(read._body or {}))
    assert kept.edges() == read.edges()
    assert kept.links(limit) == read.links(limit)
    assert kept.relation(limit, rule.relation_of_links) == read.relation(limit, rule.relation_of_links)
    # each reader validates its own edges
    assert kept.edges() is not kept.edges()


def test_links_are_the_edges_in_key_order_cut_per_direction() -> None:
    stored = [
        Edge(source_id="node", target_id=f"m{n}", type=RelationType.REINFORCES, strength=n / 10, timestamp=AT)
        for n in range(5)
    ] + [Edge(source_id="m9", target_id="node", type=RelationType.LEADS_TO, strength=0.9, timestamp=AT)]
    outgoing, incoming = adjacency_of(stored).links(3)
    assert outgoing == [("REINFORCES", 0.0), ("REINFORCES", 0.1), ("REINFORCES", 0.2)]
    assert incoming == [("LEADS_TO", 0.9)]


def test_only_enrichment_links_score_nothing_and_name_no_type() -> None:
    rule = RelationScoreRule.of(GraphSettings())
    links = [("SIMILAR_TO", 0.9), ("PRECEDED_BY", 1.0)]
    relation = rule.relation_of_links(links, links)
    assert (relation.score, relation.edge_types) == (0.0, ())
    assert rule.relation_of_links([("REINFORCES", 1.0)], []).score > 0
