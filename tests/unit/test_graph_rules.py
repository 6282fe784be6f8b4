"""The graph's pure rules: the relation types and their properties, the relation score, patterns, merging, ids."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rapport.domain.relations import (
    BIDIRECTIONAL,
    PROPERTIES,
    SYMMETRIC,
    Edge,
    EnrichmentType,
    RelationType,
    allowed_properties,
    edge_type_of,
    type_properties,
)
from rapport.domain.scoring import RecallSignals, hybrid_score
from rapport.domain.text import tokenize
from rapport.graph.associations import merge
from rapport.graph.knowledge_models import NodeKind, node_id
from rapport.graph.patterns import key_terms, pattern_confidence
from rapport.graph.relation_score import RelationScoreRule
from rapport.settings import GraphSettings, RecallWeights

AT = datetime(2026, 1, 5, tzinfo=UTC)

# Each of the eleven types with every one of its own properties set: what docs/graph.md lists, and nothing more.
FULL_PROPERTIES: dict[RelationType, dict[str, object]] = {
    RelationType.RELATES_TO: {"context": "both about the database choice"},
    RelationType.LEADS_TO: {"reason": "the evaluation decided it"},
    RelationType.OCCURRED_BEFORE: {"time_gap": 3600},
    RelationType.PREFERS_OVER: {"context": "databases", "reason": "ACID compliance"},
    RelationType.EXEMPLIFIES: {"pattern_type": "decision", "confidence": 0.8, "key_terms": ["postgresql"]},
    RelationType.CONTRADICTS: {"resolution": "the newer one holds", "reason": "style changed"},
    RelationType.REINFORCES: {"observations": 3},
    RelationType.INVALIDATED_BY: {"reason": "moved to async/await"},
    RelationType.EVOLVED_INTO: {"confidence": 0.9, "reason": "learned promises"},
    RelationType.DERIVED_FROM: {"transformation": "summary", "confidence": 0.7},
    RelationType.PART_OF: {"role": "step", "context": "the migration"},
}


def edge(kind: RelationType | EnrichmentType = RelationType.RELATES_TO, strength: float = 1.0, **props: object) -> Edge:
    return Edge(source_id="a", target_id="b", type=kind, strength=strength, timestamp=AT, properties=props)


def test_there_are_eleven_relation_types_two_bidirectional_and_two_enrichment_types() -> None:
    assert len(RelationType) == 11 and set(FULL_PROPERTIES) == set(RelationType)
    assert {RelationType.RELATES_TO, RelationType.CONTRADICTS} == BIDIRECTIONAL
    assert {*BIDIRECTIONAL, EnrichmentType.SIMILAR_TO} == SYMMETRIC
    assert set(PROPERTIES) == {*RelationType, *EnrichmentType}
    assert edge_type_of("SIMILAR_TO") is EnrichmentType.SIMILAR_TO and edge_type_of("LEADS_TO") is RelationType.LEADS_TO
    with pytest.raises(ValueError):
        edge_type_of("LIKES")


@pytest.mark.parametrize("relation", list(RelationType))
def test_every_type_takes_its_own_properties_and_refuses_unknown_ones(relation: RelationType) -> None:
    assert type_properties(relation, FULL_PROPERTIES[relation]) == FULL_PROPERTIES[relation]
    assert set(allowed_properties(relation)) == set(FULL_PROPERTIES[relation])
    with pytest.raises(ValueError, match="allowed: strength, timestamp"):
        type_properties(relation, {"colour": "blue"})


@pytest.mark.parametrize(
    ("relation", "bad"),
    [
        (RelationType.EXEMPLIFIES, {"confidence": 1.5}),
        (RelationType.REINFORCES, {"observations": 0}),
        (RelationType.OCCURRED_BEFORE, {"time_gap": -1}),
        (RelationType.PREFERS_OVER, {"reason": ""}),
        (RelationType.EVOLVED_INTO, {"confidence": "sure"}),
    ],
)
def test_out_of_range_properties_are_refused(relation: RelationType, bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=f"invalid properties for {relation.value}"):
        type_properties(relation, bad)


def test_enrichment_types_require_their_measure() -> None:
    assert type_properties(EnrichmentType.PRECEDED_BY, {"time_gap": 60}) == {"time_gap": 60}
    with pytest.raises(ValueError):
        type_properties(EnrichmentType.SIMILAR_TO, {})


def test_reposting_merges_properties_keeps_the_higher_strength_and_counts_observations() -> None:
    old = edge(RelationType.PREFERS_OVER, 0.9, context="databases", reason="ACID")
    new = edge(RelationType.PREFERS_OVER, 0.4, reason="ACID and JSONB")
    merged = merge(old, new)
    assert merged.strength == 0.9
    assert merged.properties == {"context": "databases", "reason": "ACID and JSONB"}
    assert merge(None, new) == new
    twice = merge(edge(RelationType.REINFORCES, observations=2), edge(RelationType.REINFORCES, observations=1))
    assert twice.properties["observations"] == 3


# relation score

rule = RelationScoreRule()
strengths = st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), max_size=12)
kinds = st.sampled_from([*RelationType, *EnrichmentType])


def test_no_edges_score_zero_and_saturated_edges_score_one() -> None:
    assert rule.score([], []) == 0.0
    rich = [edge(kind) for kind in list(RelationType)[:5]]
    assert rule.score(rich, rich) == pytest.approx(1.0)


def test_the_parts_weigh_as_the_brief_says() -> None:
    # One incoming full-strength edge: 0.5 x 1/5 + diversity 0.2 x 1/4.
    assert rule.score([edge()], []) == pytest.approx(0.5 * 0.2 + 0.2 * 0.25)
    assert rule.score([], [edge()]) == pytest.approx(0.3 * 0.2 + 0.2 * 0.25)


def test_enrichments_automatic_links_do_not_count() -> None:
    automatic = [edge(EnrichmentType.PRECEDED_BY), edge(EnrichmentType.SIMILAR_TO)]
    assert rule.score(automatic, automatic) == 0.0
    assert RelationScoreRule.of(GraphSettings()).ignored == {"PRECEDED_BY", "SIMILAR_TO"}


@given(
    st.lists(st.tuples(kinds, st.floats(0, 1)), max_size=15), st.lists(st.tuples(kinds, st.floats(0, 1)), max_size=15)
)
def test_relation_score_stays_between_zero_and_one(incoming: list, outgoing: list) -> None:
    score = rule.score([edge(k, s) for k, s in incoming], [edge(k, s) for k, s in outgoing])
    assert 0.0 <= score <= 1.0 + 1e-9


@given(strengths, st.floats(0, 1))
def test_a_stronger_or_extra_edge_never_lowers_the_score(existing: list[float], extra: float) -> None:
    before = rule.score([edge(RelationType.LEADS_TO, s) for s in existing], [])
    after = rule.score([edge(RelationType.LEADS_TO, s) for s in [*existing, extra]], [])
    assert after >= before


def test_the_relation_component_enters_the_hybrid_score_with_weight_025() -> None:
    base = RecallSignals(0.5, 0.5, ("dog",), 2, 1.0, 0.5, 0.5)
    linked = RecallSignals(0.5, 0.5, ("dog",), 2, 1.0, 0.5, 0.5, relation=0.8)
    weights = RecallWeights()
    assert weights.relation == 0.25
    assert hybrid_score(linked, weights, 30) - hybrid_score(base, weights, 30) == pytest.approx(0.2)


def test_the_relation_names_the_edge_types_it_counted_and_not_enrichment_links() -> None:
    incoming = [edge(RelationType.PART_OF), edge(EnrichmentType.SIMILAR_TO)]
    outgoing = [edge(RelationType.LEADS_TO), edge(EnrichmentType.PRECEDED_BY), edge(RelationType.LEADS_TO)]
    relation = rule.relation(incoming, outgoing)
    assert relation.score == rule.score(incoming, outgoing)
    assert relation.edge_types == ("LEADS_TO", "PART_OF")
    assert rule.relation([edge(EnrichmentType.SIMILAR_TO)], []).score == 0.0


# patterns and knowledge ids


def test_key_terms_skip_phrasing_numbers_and_short_words_longest_first() -> None:
    stem = {word: tokenize(word)[0] for word in ("PostgreSQL", "services", "ACID")}
    assert key_terms("User prefers PostgreSQL for the 2 new ACID services", 3) == list(stem.values())


def test_pattern_confidence_starts_at_half_and_saturates() -> None:
    assert pattern_confidence(2, 3, 6) == 0.0
    assert pattern_confidence(3, 3, 6) == 0.5
    assert pattern_confidence(6, 3, 6) == 1.0 == pattern_confidence(60, 3, 6)


def test_knowledge_node_ids_are_stable_readable_and_bounded() -> None:
    assert node_id(NodeKind.ENTITY, "PostgreSQL") == "entity:postgresql" == node_id(NodeKind.ENTITY, "postgresql")
    assert node_id(NodeKind.CONCEPT, "ACID compliance") == "concept:acid-compliance"
    long_fact = "PostgreSQL supports transactional DDL, which lets a migration roll back cleanly " * 2
    other = long_fact.replace("cleanly", "safely")
    assert len(node_id(NodeKind.FACT, long_fact)) < 90 and node_id(NodeKind.FACT, long_fact) != node_id(
        NodeKind.FACT, other
    )
    assert "#" not in node_id(NodeKind.ENTITY, "C# #1")


def test_graph_settings_carry_the_brief_defaults() -> None:
    graph = GraphSettings()
    assert (graph.relation_limit, graph.expansion_limit) == (5, 25)
    assert (graph.preceded_by_window_hours, graph.similar_to_limit, graph.similar_to_min_similarity) == (24, 5, 0.8)
    assert (graph.relation_incoming_weight, graph.relation_outgoing_weight, graph.relation_diversity_weight) == (
        0.5,
        0.3,
        0.2,
    )
    with pytest.raises(ValueError):
        GraphSettings(knowledge_default_depth=4, knowledge_max_depth=3)
