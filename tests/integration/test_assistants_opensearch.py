"""The OpenSearch adapter keeps each assistant's relational memories apart in the `domain` keyword: the default
assistant's documents and queries are what they were, a named one's carry `relational@{agent}`, and the tenant's
assistants are tallied in one aggregation (over the fake cluster of test_opensearch_index)."""

from __future__ import annotations

import pytest

from rapport.adapters.opensearch.index import OpenSearchVectorIndex
from rapport.domain.models import Domain
from rapport.ports.vector_index import IndexQuery, RelationshipTally
from tests.integration.test_opensearch_index import (  # noqa: F401 (fixtures)
    INDEX,
    INDEXED_DOC,
    FakeCluster,
    cluster,
    index,
    make_memory,
    search_answer,
)

pytestmark = pytest.mark.integration


def test_a_named_assistants_relational_memory_is_indexed_and_searched_under_its_own_term(
    cluster: FakeCluster,  # noqa: F811 (the fixture imported above)
    index: OpenSearchVectorIndex,  # noqa: F811
) -> None:
    cluster.on("PUT", f"/{INDEX}/_doc/[0-9a-f]{{64}}", 201, INDEXED_DOC)
    memory = make_memory("01JREL", embedding=[1.0, 0.0, 0.0, 0.0], domain=Domain.RELATIONAL)
    index.upsert(memory.model_copy(update={"type": "shared_context", "agent_id": "coach"}))
    assert cluster.only("PUT").body["domain"] == "relational@coach"
    assert "agent_id" not in cluster.only("PUT").body  # the strict mapping is unchanged

    cluster.on("POST", f"/{INDEX}/_search", 200, search_answer())
    query = IndexQuery(tenant_id="tenant-a", user_id="user-1", domains=(Domain.USER, Domain.RELATIONAL), k=3)
    index.knn_search(query.model_copy(update={"agent_id": "coach"}), [0.0, 1.0, 0.0, 0.0])
    filters = cluster.only("POST").body["query"]["knn"]["embedding"]["filter"]["bool"]["filter"]
    assert {"terms": {"domain": ["user", "relational@coach"]}} in filters


def test_the_tenants_assistants_are_tallied_in_one_aggregation(
    cluster: FakeCluster,  # noqa: F811 (the fixture imported above)
    index: OpenSearchVectorIndex,  # noqa: F811
) -> None:
    buckets = [
        {"key": "relational", "doc_count": 4, "people": {"value": 2}},
        {"key": "relational@coach", "doc_count": 7, "people": {"value": 3}},
    ]
    answer = {**search_answer(), "aggregations": {"agents": {"buckets": buckets}}}
    cluster.on("POST", f"/{INDEX}/_search", 200, answer)

    tallies = index.relationship_tallies("tenant-a")

    assert tallies == {
        "default": RelationshipTally(people=2, relational_memories=4),
        "coach": RelationshipTally(people=3, relational_memories=7),
    }
    body = cluster.only("POST").body
    assert body["size"] == 0
    assert {"term": {"tenant_id": "tenant-a"}} in body["query"]["bool"]["filter"]
    assert body["aggs"]["agents"]["terms"]["field"] == "domain"
