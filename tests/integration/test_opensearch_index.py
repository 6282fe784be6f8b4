"""The OpenSearch adapter against a recorded fake cluster: the requests it sends and how it reads the answers."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlparse

import boto3
import pytest
import requests
from opensearchpy import Connection, OpenSearch, RequestsAWSV4SignerAuth, RequestsHttpConnection
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError

from rapport.adapters.opensearch.index import (
    OpenSearchVectorIndex,
    build_opensearch_client,
    document_id,
)
from rapport.domain.models import Domain, Memory, MemoryStatus, Provenance, SourceKind
from rapport.domain.scope import Scope
from rapport.errors import InvalidInputError, StorageError
from rapport.ports.vector_index import HybridHits, IndexHit, IndexQuery

pytestmark = pytest.mark.integration

INDEX = "rapport-memories"
DIMS = 4

# ---------------------------------------------------------------------------------------------------------------
# Canned answers, in the shapes OpenSearch 2.x returns them.

SHARDS = {"total": 2, "successful": 2, "skipped": 0, "failed": 0}
CREATED_INDEX = {"acknowledged": True, "shards_acknowledged": True, "index": INDEX}
INDEXED_DOC = {
    "_index": INDEX,
    "_id": "ignored",
    "_version": 1,
    "result": "created",
    "forced_refresh": True,
    "_shards": {"total": 2, "successful": 2, "failed": 0},
    "_seq_no": 0,
    "_primary_term": 1,
}
DELETED_DOC = {**INDEXED_DOC, "_version": 2, "result": "deleted", "_seq_no": 1}
MISSING_DOC = {**INDEXED_DOC, "result": "not_found", "_seq_no": 2}
INDEX_NOT_FOUND = {
    "error": {
        "root_cause": [
            {"type": "index_not_found_exception", "reason": f"no such index [{INDEX}]", "index": INDEX},
        ],
        "type": "index_not_found_exception",
        "reason": f"no such index [{INDEX}]",
        "index": INDEX,
    },
    "status": 404,
}
ALREADY_EXISTS = {
    "error": {
        "root_cause": [{"type": "resource_already_exists_exception", "reason": f"index [{INDEX}/abc] already exists"}],
        "type": "resource_already_exists_exception",
        "reason": f"index [{INDEX}/abc] already exists",
    },
    "status": 400,
}
SEARCH_PHASE_FAILED = {
    "error": {
        "root_cause": [],
        "type": "search_phase_execution_exception",
        "reason": "all shards failed",
        "phase": "query",
        "grouped": True,
        "failed_shards": [],
    },
    "status": 503,
}
FORBIDDEN = {
    "error": {
        "root_cause": [{"type": "security_exception", "reason": "no permissions for [indices:data/read/search]"}],
        "type": "security_exception",
        "reason": "no permissions for [indices:data/read/search]",
    },
    "status": 403,
}
DELETED_BY_QUERY = {
    "took": 147,
    "timed_out": False,
    "total": 3,
    "deleted": 3,
    "batches": 1,
    "version_conflicts": 0,
    "noops": 0,
    "retries": {"bulk": 0, "search": 0},
    "throttled_millis": 0,
    "requests_per_second": -1.0,
    "throttled_until_millis": 0,
    "failures": [],
}
COUNTED = {"count": 7, "_shards": SHARDS}


def search_answer(*hits: tuple[str, float]) -> dict[str, Any]:
    return {
        "took": 4,
        "timed_out": False,
        "_shards": SHARDS,
        "hits": {
            "total": {"value": len(hits), "relation": "eq"},
            "max_score": max((score for _, score in hits), default=None),
            "hits": [
                {
                    "_index": INDEX,
                    "_id": hashlib.sha256(m.encode()).hexdigest(),
                    "_score": s,
                    "_source": {"memory_id": m},
                }
                for m, s in hits
            ],
        },
    }


def mapping_answer(dimension: int) -> dict[str, Any]:
    return {
        f"{INDEX}-v1": {
            "mappings": {"properties": {"embedding": {"type": "knn_vector", "dimension": dimension}}},
        }
    }


# ---------------------------------------------------------------------------------------------------------------
# The recorded fake: a Connection that answers from a script and keeps every request.


@dataclass
class RecordedRequest:
    method: str
    path: str
    params: dict[str, str]
    body: Any


@dataclass
class FakeCluster:
    """Canned answers by method and path pattern (the latest matching rule wins), plus the log of requests."""

    requests: list[RecordedRequest] = field(default_factory=list)
    _rules: list[tuple[str, re.Pattern[str], int, Any]] = field(default_factory=list)

    def on(self, method: str, path: str, status: int = 200, body: Any = None) -> None:
        self._rules.insert(0, (method, re.compile(path), status, body))

    def answer(self, request: RecordedRequest) -> tuple[int, Any]:
        for method, pattern, status, body in self._rules:
            if method == request.method and pattern.fullmatch(request.path):
                return status, body
        raise AssertionError(f"the fake cluster has no answer for {request.method} {request.path}")

    def only(self, method: str) -> RecordedRequest:
        matching = [r for r in self.requests if r.method == method]
        assert len(matching) == 1, self.requests
        return matching[0]


def _decoded_body(body: Any) -> Any:
    """JSON, or newline-delimited JSON (`_msearch`, `_bulk`) as the list of its lines."""
    if not body:
        return None
    text = body.decode() if isinstance(body, bytes) else str(body)
    if text.endswith("\n"):
        return [json.loads(line) for line in text.splitlines() if line]
    return json.loads(text)


class RecordingConnection(Connection):
    """Stands where the HTTP connection stands: everything above it (client, transport, serializer) is real."""

    def __init__(self, *, cluster: FakeCluster, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cluster = cluster

    def perform_request(  # type: ignore[override]
        self,
        method: str,
        url: str,
        params: Any = None,
        body: Any = None,
        timeout: Any = None,
        ignore: Any = (),
        headers: Any = None,
    ) -> tuple[int, dict[str, str], str]:
        decoded = {k: v.decode() if isinstance(v, bytes) else str(v) for k, v in (params or {}).items()}
        request = RecordedRequest(method, url, decoded, _decoded_body(body))
        self.cluster.requests.append(request)
        status, payload = self.cluster.answer(request)
        if isinstance(payload, Exception):
            raise payload
        raw = "" if payload is None else json.dumps(payload)
        if not 200 <= status < 300 and status not in ignore:
            self._raise_error(status, raw, "application/json")
        return status, {"content-type": "application/json"}, raw


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster()


def make_client(cluster: FakeCluster) -> OpenSearch:
    return OpenSearch(
        hosts=[{"host": "search-rapport.eu-west-1.es.amazonaws.com", "port": 443}],
        use_ssl=True,
        connection_class=RecordingConnection,
        cluster=cluster,
        max_retries=0,
    )


@pytest.fixture
def index(cluster: FakeCluster) -> OpenSearchVectorIndex:
    return OpenSearchVectorIndex(make_client(cluster), INDEX, DIMS, refresh="wait_for")


def make_memory(
    memory_id: str = "01JMEM",
    *,
    embedding: list[float] | None = None,
    tenant: str = "tenant-a",
    user: str = "user-1",
    domain: Domain = Domain.USER,
    status: MemoryStatus = MemoryStatus.ACTIVE,
) -> Memory:
    at = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
    return Memory(
        id=memory_id,
        tenant_id=tenant,
        user_id=user,
        domain=domain,
        type="fact",
        status=status,
        content="Has a dog named Max",
        created_at=at,
        updated_at=at,
        last_reinforced_at=at,
        embedding=[3.0, 0.0, 4.0, 0.0] if embedding is None else embedding,
    )


QUERY = IndexQuery(
    tenant_id="tenant-a", user_id="user-1", domains=(Domain.USER, Domain.RELATIONAL), statuses=("active",), k=3
)
EXPECTED_FILTERS = [
    {"term": {"tenant_id": "tenant-a"}},
    {"term": {"user_id": "user-1"}},
    {"terms": {"domain": ["user", "relational"]}},
    {"terms": {"status": ["active"]}},
]
USER_FILTERS = {"query": {"bool": {"filter": EXPECTED_FILTERS[:2]}}}


# ---------------------------------------------------------------------------------------------------------------
# ensure_index


def test_constructing_the_adapter_sends_nothing(cluster: FakeCluster) -> None:
    OpenSearchVectorIndex(make_client(cluster), INDEX, DIMS)
    assert cluster.requests == []


def test_ensure_index_creates_the_knn_mapping_when_missing(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("HEAD", f"/{INDEX}", 404)
    cluster.on("PUT", f"/{INDEX}", 200, CREATED_INDEX)

    assert index.ensure_index() is True

    body = cluster.only("PUT").body
    assert body["settings"]["index"]["knn"] is True
    properties = body["mappings"]["properties"]
    assert properties["embedding"] == {
        "type": "knn_vector",
        "dimension": DIMS,
        "method": {
            "name": "hnsw",
            "engine": "faiss",
            "space_type": "innerproduct",
            # fp16 scalar quantization in faiss: half the graph memory, the same top 10 on the bench data.
            "parameters": {
                "m": 16,
                "ef_construction": 128,
                "encoder": {"name": "sq", "parameters": {"type": "fp16", "clip": False}},
            },
        },
    }
    # Compression is the engine's: what is sent (and rescored from) stays the full-precision unit vector.
    assert "mode" not in properties["embedding"] and "compression_level" not in properties["embedding"]
    assert properties["content"] == {"type": "text", "analyzer": "english"}
    for name in ("tenant_id", "user_id", "domain", "status", "memory_id", "type"):
        assert properties[name] == {"type": "keyword"}, name
    assert properties["created_at"] == {"type": "date"}


def test_ensure_index_leaves_an_existing_index_of_the_same_dimension(
    cluster: FakeCluster, index: OpenSearchVectorIndex
) -> None:
    cluster.on("HEAD", f"/{INDEX}", 200)
    cluster.on("GET", f"/{INDEX}/_mapping", 200, mapping_answer(DIMS))

    assert index.ensure_index() is False
    assert [r.method for r in cluster.requests] == ["HEAD", "GET"]


def test_ensure_index_refuses_an_index_of_another_dimension(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("HEAD", f"/{INDEX}", 200)
    cluster.on("GET", f"/{INDEX}/_mapping", 200, mapping_answer(1536))

    with pytest.raises(StorageError, match="reindex"):
        index.ensure_index()


def test_ensure_index_losing_a_creation_race_is_fine(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("HEAD", f"/{INDEX}", 404)
    cluster.on("PUT", f"/{INDEX}", 400, ALREADY_EXISTS)

    assert index.ensure_index() is False


def test_ensure_index_maps_a_refusal_to_storage_error(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("HEAD", f"/{INDEX}", 403, FORBIDDEN)

    with pytest.raises(StorageError, match="403"):
        index.ensure_index()


# ---------------------------------------------------------------------------------------------------------------
# upsert and delete


def test_upsert_writes_a_normalised_document_under_a_tenant_scoped_id(
    cluster: FakeCluster, index: OpenSearchVectorIndex
) -> None:
    cluster.on("PUT", f"/{INDEX}/_doc/[0-9a-f]{{64}}", 201, INDEXED_DOC)

    index.upsert(make_memory("01JMEM", embedding=[3.0, 0.0, 4.0, 0.0]))

    request = cluster.only("PUT")
    assert request.path == f"/{INDEX}/_doc/{document_id('tenant-a', 'user-1', '01JMEM')}"
    assert request.params == {"refresh": "wait_for"}
    assert request.body == {
        "memory_id": "01JMEM",
        "tenant_id": "tenant-a",
        "user_id": "user-1",
        "domain": "user",
        "status": "active",
        "type": "fact",
        "content": "Has a dog named Max",
        "created_at": "2025-03-01T09:30:00+00:00",
        # L2-normalised so faiss inner product equals cosine
        "embedding": [0.6, 0.0, 0.8, 0.0],
    }


def test_upsert_indexes_an_episode_with_its_speaker_and_date(
    cluster: FakeCluster, index: OpenSearchVectorIndex
) -> None:
    cluster.on("PUT", f"/{INDEX}/_doc/.+", 201, INDEXED_DOC)
    episode = make_memory().model_copy(
        update={
            "occurred_at": datetime(2025, 2, 14, tzinfo=UTC),
            "source": Provenance(kind=SourceKind.INTERACTION, interaction_id="01JINT", speaker="Alice"),
        }
    )

    index.upsert(episode)

    # Questions name people and times, so keyword search must see them, as in the embedded index.
    assert cluster.only("PUT").body["content"] == "[14 February 2025] Alice: Has a dog named Max"


def test_upsert_without_refresh_sends_no_refresh_parameter(cluster: FakeCluster) -> None:
    cluster.on("PUT", f"/{INDEX}/_doc/.+", 201, INDEXED_DOC)
    OpenSearchVectorIndex(make_client(cluster), INDEX, DIMS).upsert(make_memory())

    assert cluster.only("PUT").params == {}


@pytest.mark.parametrize(
    "embedding",
    [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0], [float("nan"), 0.0, 0.0, 1.0], [float("inf"), 0.0, 0.0, 1.0]],
    ids=["too-short", "too-long", "nan", "inf"],
)
def test_upsert_refuses_a_bad_embedding_without_a_request(
    cluster: FakeCluster, index: OpenSearchVectorIndex, embedding: list[float]
) -> None:
    with pytest.raises(InvalidInputError):
        index.upsert(make_memory(embedding=embedding))
    assert cluster.requests == []


def test_upsert_refuses_a_memory_without_embedding(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    memory = make_memory().without_embedding()
    with pytest.raises(InvalidInputError, match="no embedding"):
        index.upsert(memory)
    assert cluster.requests == []


def test_delete_removes_the_tenant_scoped_document(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("DELETE", f"/{INDEX}/_doc/.+", 200, DELETED_DOC)

    index.delete(Scope("tenant-a", "user-1"), "01JMEM")

    assert cluster.only("DELETE").path == f"/{INDEX}/_doc/{document_id('tenant-a', 'user-1', '01JMEM')}"


@pytest.mark.parametrize("answer", [MISSING_DOC, INDEX_NOT_FOUND], ids=["missing-document", "missing-index"])
def test_delete_of_something_missing_is_not_an_error(
    cluster: FakeCluster, index: OpenSearchVectorIndex, answer: dict[str, Any]
) -> None:
    cluster.on("DELETE", f"/{INDEX}/_doc/.+", 404, answer)

    index.delete(Scope("tenant-a", "user-1"), "never-indexed")  # no exception


def test_delete_failure_is_a_storage_error(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("DELETE", f"/{INDEX}/_doc/.+", 403, FORBIDDEN)

    with pytest.raises(StorageError, match="delete document failed: 403 security_exception"):
        index.delete(Scope("tenant-a", "user-1"), "01JMEM")


# ---------------------------------------------------------------------------------------------------------------
# knn and keyword search


def test_knn_search_filters_inside_the_knn_clause(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("POST", f"/{INDEX}/_search", 200, search_answer())

    index.knn_search(QUERY, [0.0, 2.0, 0.0, 0.0])

    body = cluster.only("POST").body
    assert body["size"] == 3
    assert body["_source"] == ["memory_id"]
    # Efficient filtering: the tenant fence lives in the knn clause, and there is no post_filter or outer bool.
    assert set(body) == {"size", "_source", "query"}
    assert body["query"] == {
        "knn": {
            "embedding": {
                "vector": [0.0, 1.0, 0.0, 0.0],
                "k": 3,
                "filter": {"bool": {"filter": EXPECTED_FILTERS}},
            }
        }
    }


def test_knn_search_returns_ids_best_first_with_cosine_scores(
    cluster: FakeCluster, index: OpenSearchVectorIndex
) -> None:
    cluster.on("POST", f"/{INDEX}/_search", 200, search_answer(("m-near", 1.8), ("m-orthogonal", 1.0), ("m-far", 0.5)))

    hits = index.knn_search(QUERY, [1.0, 0.0, 0.0, 0.0])

    assert [h.memory_id for h in hits] == ["m-near", "m-orthogonal", "m-far"]
    assert [h.score for h in hits] == pytest.approx([0.8, 0.0, -1.0])


def test_knn_search_refuses_a_query_vector_of_the_wrong_dimension(
    cluster: FakeCluster, index: OpenSearchVectorIndex
) -> None:
    with pytest.raises(InvalidInputError, match="3 dimensions"):
        index.knn_search(QUERY, [1.0, 0.0, 0.0])
    assert cluster.requests == []


def test_search_for_no_status_or_k_zero_asks_nothing(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    assert index.knn_search(QUERY.model_copy(update={"statuses": ()}), [1.0, 0.0, 0.0, 0.0]) == []
    assert index.keyword_search(QUERY.model_copy(update={"k": 0}), "dog") == []
    assert index.keyword_search(QUERY, "   ") == []
    assert cluster.requests == []


def test_keyword_search_matches_content_within_the_same_fence(
    cluster: FakeCluster, index: OpenSearchVectorIndex
) -> None:
    cluster.on("POST", f"/{INDEX}/_search", 200, search_answer(("m-dog", 2.876), ("m-max", 0.913)))

    hits = index.keyword_search(QUERY, "dog named Max")

    assert hits == [IndexHit(memory_id="m-dog", score=2.876), IndexHit(memory_id="m-max", score=0.913)]
    assert cluster.only("POST").body == {
        "size": 3,
        "_source": ["memory_id"],
        "query": {
            "bool": {
                "must": [{"match": {"content": {"query": "dog named Max", "operator": "or"}}}],
                "filter": EXPECTED_FILTERS,
            }
        },
    }


def msearch_answer(*responses: dict[str, Any]) -> dict[str, Any]:
    """`_msearch` answers 200 with each search's own answer and status, in the order sent."""
    return {"took": 6, "responses": [{**r, "status": r.get("status", 200)} for r in responses]}


def test_hybrid_search_is_one_request_holding_the_two_searches_bodies(cluster: FakeCluster) -> None:
    # Given the bodies the two single searches send
    single = FakeCluster()
    single.on("POST", f"/{INDEX}/_search", 200, search_answer())
    alone = OpenSearchVectorIndex(make_client(single), INDEX, DIMS)
    alone.knn_search(QUERY, [0.0, 2.0, 0.0, 0.0])
    alone.keyword_search(QUERY.model_copy(update={"k": 7}), "dog named Max")
    knn_body, keyword_body = (r.body for r in single.requests)
    cluster.on("POST", f"/{INDEX}/_msearch", 200, msearch_answer(search_answer(), search_answer()))
    index = OpenSearchVectorIndex(make_client(cluster), INDEX, DIMS)

    # When a recall asks for both
    index.hybrid_search(QUERY, [0.0, 2.0, 0.0, 0.0], "dog named Max", keyword_k=7)

    # Then one multi-search carries both bodies, unchanged, each after an empty header (the index is the path's)
    (request,) = cluster.requests
    assert (request.method, request.path) == ("POST", f"/{INDEX}/_msearch")
    assert request.body == [{}, knn_body, {}, keyword_body]
    assert knn_body["query"]["knn"]["embedding"]["k"] == 3 and keyword_body["size"] == 7


def test_hybrid_search_answers_what_the_two_searches_answer(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    by_meaning = search_answer(("m-near", 1.8), ("m-orthogonal", 1.0), ("m-far", 0.5))
    by_words = search_answer(("m-dog", 2.876), ("m-max", 0.913))
    cluster.on("POST", f"/{INDEX}/_msearch", 200, msearch_answer(by_meaning, by_words))
    cluster.on("POST", f"/{INDEX}/_search", 200, by_meaning)
    knn = index.knn_search(QUERY, [1.0, 0.0, 0.0, 0.0])
    cluster.on("POST", f"/{INDEX}/_search", 200, by_words)
    keyword = index.keyword_search(QUERY, "dog named Max")

    found = index.hybrid_search(QUERY, [1.0, 0.0, 0.0, 0.0], "dog named Max", keyword_k=3)

    assert found.by_meaning == {h.memory_id: h.score for h in knn}
    assert found.by_keywords == {h.memory_id: h.score for h in keyword}
    assert list(found.by_meaning.values()) == pytest.approx([0.8, 0.0, -1.0])  # cosines, not `_score`s


def test_knn_search_many_sends_the_single_searches_bodies_in_one_msearch(cluster: FakeCluster) -> None:
    # Given the bodies knn_search sends for two vectors
    single = FakeCluster()
    single.on("POST", f"/{INDEX}/_search", 200, search_answer())
    alone = OpenSearchVectorIndex(make_client(single), INDEX, DIMS)
    alone.knn_search(QUERY, [0.0, 2.0, 0.0, 0.0])
    alone.knn_search(QUERY, [1.0, 0.0, 0.0, 0.0])
    first, second = (r.body for r in single.requests)
    near, far = search_answer(("m-near", 1.8), ("m-orthogonal", 1.0)), search_answer(("m-far", 0.5))
    cluster.on("POST", f"/{INDEX}/_msearch", 200, msearch_answer(near, far))
    index = OpenSearchVectorIndex(make_client(cluster), INDEX, DIMS)

    # When both are searched at once, keeping cosines of 0.5 and more
    found = index.knn_search_many(QUERY, [[0.0, 2.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]], min_score=0.5)

    # Then one multi-search carried both bodies, and the answers are cosines, those below 0.5 left out
    (request,) = cluster.requests
    assert (request.method, request.path) == ("POST", f"/{INDEX}/_msearch")
    assert request.body == [{}, first, {}, second]
    assert [[(h.memory_id, round(h.score, 3)) for h in hits] for hits in found] == [[("m-near", 0.8)], []]


def test_knn_search_many_sends_a_hundred_searches_a_request(
    cluster: FakeCluster, index: OpenSearchVectorIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rapport.adapters.opensearch.index as adapter

    monkeypatch.setattr(adapter, "_MSEARCH_VECTORS", 2)
    answer = cluster.answer

    def one_answer_per_search(request: RecordedRequest) -> tuple[int, Any]:
        if request.path.endswith("/_msearch"):
            searches = len(request.body) // 2
            return 200, msearch_answer(*[search_answer((f"m{len(cluster.requests)}", 1.5))] * searches)
        return answer(request)

    monkeypatch.setattr(cluster, "answer", one_answer_per_search)

    found = index.knn_search_many(QUERY, [[1.0, 0.0, 0.0, 0.0]] * 3)

    assert [len(r.body) for r in cluster.requests] == [4, 2]
    assert [[h.memory_id for h in hits] for hits in found] == [["m1"], ["m1"], ["m2"]]
    assert index.knn_search_many(QUERY.model_copy(update={"statuses": ()}), [[1.0, 0.0, 0.0, 0.0]]) == [[]]
    assert len(cluster.requests) == 2  # nothing to find: nothing sent
    with pytest.raises(InvalidInputError, match="3 dimensions"):
        index.knn_search_many(QUERY, [[1.0, 0.0, 0.0]])


def test_hybrid_search_sends_only_the_searches_that_can_find_something(
    cluster: FakeCluster, index: OpenSearchVectorIndex
) -> None:
    cluster.on("POST", f"/{INDEX}/_msearch", 200, msearch_answer(search_answer(("m1", 1.5))))

    found = index.hybrid_search(QUERY, [1.0, 0.0, 0.0, 0.0], "   ", keyword_k=5)

    assert list(found.by_meaning) == ["m1"] and found.by_keywords == {}
    assert len(cluster.only("POST").body) == 2  # one header, one k-NN body
    nothing = index.hybrid_search(QUERY.model_copy(update={"statuses": ()}), [1.0, 0.0, 0.0, 0.0], "dog", keyword_k=5)
    assert nothing == HybridHits()
    assert len(cluster.requests) == 1  # nothing to find: nothing sent
    with pytest.raises(InvalidInputError, match="3 dimensions"):
        index.hybrid_search(QUERY, [1.0, 0.0, 0.0], "dog", keyword_k=5)
    assert len(cluster.requests) == 1


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({**SEARCH_PHASE_FAILED}, "hybrid search failed: 503 search_phase_execution_exception"),
        ({**FORBIDDEN}, "hybrid search failed: 403 security_exception"),
        ({**INDEX_NOT_FOUND}, "hybrid search failed: 404 index_not_found_exception"),
    ],
)
def test_a_failed_search_inside_the_multi_search_is_a_storage_error(
    cluster: FakeCluster, index: OpenSearchVectorIndex, answer: dict[str, Any], message: str
) -> None:
    # The request answers 200; the failure is one search's own status, and must not pass for "nothing found".
    cluster.on("POST", f"/{INDEX}/_msearch", 200, msearch_answer(search_answer(("m1", 1.5)), answer))

    with pytest.raises(StorageError, match=message):
        index.hybrid_search(QUERY, [1.0, 0.0, 0.0, 0.0], "dog", keyword_k=5)


def test_a_refused_multi_search_is_a_storage_error(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("POST", f"/{INDEX}/_msearch", 403, FORBIDDEN)

    with pytest.raises(StorageError, match="hybrid search failed: 403 security_exception"):
        index.hybrid_search(QUERY, [1.0, 0.0, 0.0, 0.0], "dog", keyword_k=5)


@pytest.mark.parametrize(
    ("status", "answer", "message"),
    [
        (503, SEARCH_PHASE_FAILED, "503 search_phase_execution_exception"),
        (403, FORBIDDEN, "403 security_exception"),
        (404, INDEX_NOT_FOUND, "404 index_not_found_exception"),
    ],
)
def test_search_failures_become_storage_errors(
    cluster: FakeCluster, index: OpenSearchVectorIndex, status: int, answer: dict[str, Any], message: str
) -> None:
    cluster.on("POST", f"/{INDEX}/_search", status, answer)

    with pytest.raises(StorageError, match=message) as raised:
        index.knn_search(QUERY, [1.0, 0.0, 0.0, 0.0])
    assert raised.value.__cause__ is not None  # raised from the client's exception, for the logs


def test_an_unreachable_cluster_is_a_storage_error(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    refused = OpenSearchConnectionError("N/A", "Connection refused", OSError(111, "Connection refused"))
    cluster.on("POST", f"/{INDEX}/_search", 0, refused)

    with pytest.raises(StorageError, match="N/A"):
        index.keyword_search(QUERY, "dog")


# ---------------------------------------------------------------------------------------------------------------
# vectors: one multi-get by document id


def found_doc(
    memory_id: str, embedding: list[float], *, tenant: str = "tenant-a", user: str = "user-1"
) -> dict[str, Any]:
    return {
        "_index": INDEX,
        "_id": document_id(tenant, user, memory_id),
        "_version": 1,
        "_seq_no": 0,
        "_primary_term": 1,
        "found": True,
        "_source": {"memory_id": memory_id, "tenant_id": tenant, "user_id": user, "embedding": embedding},
    }


def missing_doc(memory_id: str) -> dict[str, Any]:
    return {"_index": INDEX, "_id": document_id("tenant-a", "user-1", memory_id), "found": False}


def test_vectors_asks_for_the_users_documents_and_only_their_vector_fields(
    cluster: FakeCluster, index: OpenSearchVectorIndex
) -> None:
    cluster.on("POST", f"/{INDEX}/_mget", 200, {"docs": []})

    index.vectors(Scope("tenant-a", "user-1"), ["m1", "m2", "m1"])

    request = cluster.only("POST")
    # One request, each id once, under the tenant-scoped document ids upsert writes: never another user's document
    assert request.path == f"/{INDEX}/_mget"
    assert request.body == {"ids": [document_id("tenant-a", "user-1", "m1"), document_id("tenant-a", "user-1", "m2")]}
    # No content, no status: the vector and the fence it is checked against. No refresh: a get is real time.
    assert request.params == {"_source_includes": "memory_id,tenant_id,user_id,embedding"}


def test_vectors_returns_what_was_found_and_leaves_out_the_rest(
    cluster: FakeCluster, index: OpenSearchVectorIndex
) -> None:
    failed = {
        "_index": INDEX,
        "_id": document_id("tenant-a", "user-1", "m-failed"),
        "error": {"type": "index_not_found_exception", "reason": f"no such index [{INDEX}]"},
    }
    answer = {"docs": [found_doc("m1", [0.6, 0.0, 0.8, 0.0]), missing_doc("m-lagging"), failed]}
    cluster.on("POST", f"/{INDEX}/_mget", 200, answer)

    vectors = index.vectors(Scope("tenant-a", "user-1"), ["m1", "m-lagging", "m-failed"])

    assert vectors == {"m1": [0.6, 0.0, 0.8, 0.0]}


def test_vectors_drops_a_document_whose_stored_fence_is_not_the_callers(
    cluster: FakeCluster, index: OpenSearchVectorIndex
) -> None:
    # Whatever the cluster answers, a vector of another tenant or user, or under another id, is not handed out
    impostor = found_doc("m1", [1.0, 0.0, 0.0, 0.0], tenant="tenant-b")
    impostor["_id"] = document_id("tenant-a", "user-1", "m1")
    stray = found_doc("m2", [0.0, 1.0, 0.0, 0.0])
    stray["_source"]["memory_id"] = "m-other"
    cluster.on("POST", f"/{INDEX}/_mget", 200, {"docs": [impostor, stray]})

    assert index.vectors(Scope("tenant-a", "user-1"), ["m1", "m2"]) == {}


def test_vectors_of_nothing_asks_nothing(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    assert index.vectors(Scope("tenant-a", "user-1"), []) == {}
    assert cluster.requests == []


def test_vectors_without_an_index_are_none(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("POST", f"/{INDEX}/_mget", 404, INDEX_NOT_FOUND)

    assert index.vectors(Scope("tenant-a", "user-1"), ["m1"]) == {}


def test_vectors_failure_is_a_storage_error(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("POST", f"/{INDEX}/_mget", 403, FORBIDDEN)

    with pytest.raises(StorageError, match="multi-get failed: 403 security_exception") as raised:
        index.vectors(Scope("tenant-a", "user-1"), ["m1"])
    assert raised.value.__cause__ is not None


# ---------------------------------------------------------------------------------------------------------------
# delete_user and count


def test_delete_user_deletes_by_query_and_returns_the_count(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("POST", f"/{INDEX}/_delete_by_query", 200, DELETED_BY_QUERY)

    assert index.delete_user(Scope("tenant-a", "user-1")) == 3

    request = cluster.only("POST")
    assert request.params == {"refresh": "true", "conflicts": "proceed"}
    assert request.body == USER_FILTERS


def test_delete_user_with_failures_is_not_reported_done(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    failure = {"index": INDEX, "id": "x", "cause": {"type": "es_rejected_execution_exception"}, "status": 429}
    cluster.on("POST", f"/{INDEX}/_delete_by_query", 200, {**DELETED_BY_QUERY, "deleted": 2, "failures": [failure]})

    with pytest.raises(StorageError, match="1 failures"):
        index.delete_user(Scope("tenant-a", "user-1"))


def test_delete_user_without_an_index_removed_nothing(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("POST", f"/{INDEX}/_delete_by_query", 404, INDEX_NOT_FOUND)

    assert index.delete_user(Scope("tenant-a", "user-1")) == 0


def test_count_counts_the_users_entries(cluster: FakeCluster, index: OpenSearchVectorIndex) -> None:
    cluster.on("POST", f"/{INDEX}/_count", 200, COUNTED)

    assert index.count(Scope("tenant-a", "user-1")) == 7
    assert cluster.only("POST").body == USER_FILTERS


# ---------------------------------------------------------------------------------------------------------------
# build_opensearch_client: SigV4 for es, nothing on the network at construction


class CapturingAdapter(requests.adapters.BaseAdapter):
    """A requests transport that keeps the final (signed) request and answers from a canned body: no socket."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__()
        self.body = body
        self.sent: list[requests.PreparedRequest] = []

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        self.sent.append(request)
        response = requests.Response()
        response.status_code = 200
        response.headers["content-type"] = "application/json"
        response._content = json.dumps(self.body).encode()
        response.request = request
        response.url = request.url or ""
        return response

    def close(self) -> None:
        pass


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)  # the region must come from the call under test
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def only_connection(client: OpenSearch) -> RequestsHttpConnection:
    connection = client.transport.get_connection()
    assert isinstance(connection, RequestsHttpConnection)
    return connection


def test_sigv4_client_signs_for_the_domain_service(aws_credentials: None) -> None:
    service, url = "es", "https://search-rapport-abc123.eu-west-1.es.amazonaws.com"
    client = build_opensearch_client(url, region="eu-west-1")
    connection = only_connection(client)
    auth = connection.session.auth
    assert isinstance(auth, RequestsAWSV4SignerAuth)
    assert (auth.service, auth.signer.region) == (service, "eu-west-1")
    assert connection.use_ssl and connection.port == 443
    assert connection.session.verify is not False

    # When the adapter talks through it, the request that leaves carries a signature for that service.
    adapter = CapturingAdapter(COUNTED)
    connection.session.mount("https://", adapter)
    assert OpenSearchVectorIndex(client, INDEX, DIMS).count(Scope("tenant-a", "user-1")) == 7

    (sent,) = adapter.sent
    assert (urlparse(sent.url).hostname, urlparse(sent.url).path) == (urlparse(url).hostname, f"/{INDEX}/_count")
    assert sent.headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert f"/eu-west-1/{service}/aws4_request" in sent.headers["Authorization"]
    body = sent.body if isinstance(sent.body, bytes) else str(sent.body).encode()
    assert sent.headers["X-Amz-Content-SHA256"] == hashlib.sha256(body).hexdigest()


def test_missing_credentials_surface_at_the_first_request_not_at_construction(
    monkeypatch: pytest.MonkeyPatch, aws_credentials: None
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    client = build_opensearch_client("https://search-abc.eu-west-1.es.amazonaws.com", region="eu-west-1")
    adapter = CapturingAdapter(COUNTED)
    only_connection(client).session.mount("https://", adapter)

    with pytest.raises(StorageError, match="no AWS credentials"):
        OpenSearchVectorIndex(client, INDEX, DIMS).count(Scope("tenant-a", "user-1"))
    assert adapter.sent == []


def test_region_falls_back_to_the_session_and_is_required(aws_credentials: None) -> None:
    client = build_opensearch_client(
        "https://search-x.us-east-2.es.amazonaws.com", region=None, session=boto3.Session(region_name="us-east-2")
    )
    auth = only_connection(client).session.auth
    assert isinstance(auth, RequestsAWSV4SignerAuth)
    assert auth.signer.region == "us-east-2"

    with pytest.raises(ValueError, match="region"):
        build_opensearch_client("https://search-x.es.amazonaws.com", region=None, session=boto3.Session())


def test_unsigned_client_for_a_local_cluster_uses_the_url_as_given() -> None:
    client = build_opensearch_client("http://admin:s%40cret@localhost:9200/prefix/", region=None, sigv4=False)
    connection = only_connection(client)

    assert connection.session.auth == ("admin", "s@cret")
    assert not connection.use_ssl
    assert connection.base_url == "http://localhost:9200/prefix"


@pytest.mark.parametrize(
    ("url", "kwargs"),
    [
        ("localhost:9200", {"sigv4": False}),
        ("ftp://localhost", {"sigv4": False}),
        ("https://admin:pw@search-x.es.amazonaws.com", {}),
    ],
)
def test_misconfiguration_is_refused_up_front(aws_credentials: None, url: str, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        build_opensearch_client(url, region="eu-west-1", **kwargs)
