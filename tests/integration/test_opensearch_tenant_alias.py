"""The OpenSearch adapter's tenant fence, against the recorded fake cluster: reads go through the tenant's filtered
alias on the tenant's client, the alias is made once when missing, and a call naming another tenant is refused."""

from __future__ import annotations

import pytest

from rapport.adapters.opensearch.index import OpenSearchVectorIndex, tenant_alias, tenant_alias_definition
from rapport.domain.scope import Scope
from rapport.errors import TenantFenceError
from rapport.tenancy import acting_for, tenant_digest
from tests.integration.test_opensearch_index import (
    COUNTED,
    DELETED_BY_QUERY,
    DIMS,
    INDEX,
    INDEX_NOT_FOUND,
    INDEXED_DOC,
    QUERY,
    USER_FILTERS,
    FakeCluster,
    RecordedRequest,
    make_client,
    make_memory,
    search_answer,
)

pytestmark = pytest.mark.integration

ALIAS = f"rapport-t-{tenant_digest('tenant-a')}"


@pytest.fixture
def own() -> FakeCluster:
    """What the function's own role sends."""
    return FakeCluster()


@pytest.fixture
def tenant() -> FakeCluster:
    """What the tenant's session sends."""
    return FakeCluster()


@pytest.fixture
def index(own: FakeCluster, tenant: FakeCluster) -> OpenSearchVectorIndex:
    return OpenSearchVectorIndex(make_client(own), INDEX, DIMS, tenant_client=make_client(tenant))


def test_the_alias_is_named_by_the_tenant_s_digest_and_filtered_on_its_id() -> None:
    assert tenant_alias("tenant-a") == ALIAS
    assert tenant_alias("Tenant-A") != tenant_alias("tenant-a")  # ids differing in case never share an alias
    assert tenant_alias_definition("tenant-a") == {"filter": {"term": {"tenant_id": "tenant-a"}}}


def test_searches_and_counts_go_through_the_tenant_s_alias_on_its_session(
    index: OpenSearchVectorIndex, own: FakeCluster, tenant: FakeCluster
) -> None:
    tenant.on("POST", f"/{ALIAS}/_search", 200, search_answer(("m1", 1.5)))
    tenant.on("POST", f"/{ALIAS}/_count", 200, COUNTED)
    tenant.on("POST", f"/{ALIAS}/_delete_by_query", 200, DELETED_BY_QUERY)
    with acting_for("tenant-a"):
        assert [hit.memory_id for hit in index.knn_search(QUERY, [1.0, 0.0, 0.0, 0.0])] == ["m1"]
        assert [hit.memory_id for hit in index.keyword_search(QUERY, "dog")] == ["m1"]
        assert index.count(Scope("tenant-a", "user-1")) == 7
        assert index.delete_user(Scope("tenant-a", "user-1")) == 3
    assert [r.path for r in tenant.requests] == [
        f"/{ALIAS}/_search",
        f"/{ALIAS}/_search",
        f"/{ALIAS}/_count",
        f"/{ALIAS}/_delete_by_query",
    ]
    # The query keeps its own tenant and user filters inside the alias's: two fences, not one.
    assert tenant.requests[2].body == USER_FILTERS
    assert own.requests == []


def test_a_missing_alias_is_made_by_the_function_s_own_role_then_the_read_is_sent_again(
    index: OpenSearchVectorIndex, own: FakeCluster, tenant: FakeCluster
) -> None:
    tenant.on("POST", f"/{ALIAS}/_count", 404, {**INDEX_NOT_FOUND, "error": {**INDEX_NOT_FOUND["error"]}})
    own.on("PUT", f"/{INDEX}/_alias/{ALIAS}", 200, {"acknowledged": True})
    # Once the alias is made, the tenant's count is answered
    original_put = own.answer

    def make_alias(request: RecordedRequest) -> tuple[int, object]:
        tenant.on("POST", f"/{ALIAS}/_count", 200, COUNTED)
        return original_put(request)

    own.answer = make_alias  # type: ignore[method-assign]
    with acting_for("tenant-a"):
        assert index.count(Scope("tenant-a", "user-1")) == 7
    (made,) = own.requests
    assert (made.method, made.path, made.body) == (
        "PUT",
        f"/{INDEX}/_alias/{ALIAS}",
        tenant_alias_definition("tenant-a"),
    )
    assert [r.path for r in tenant.requests] == [f"/{ALIAS}/_count", f"/{ALIAS}/_count"]


def test_a_recall_s_hybrid_search_is_one_multi_search_of_the_tenant_s_alias(
    index: OpenSearchVectorIndex, own: FakeCluster, tenant: FakeCluster
) -> None:
    answer = {"took": 3, "responses": [{**search_answer(("m1", 1.5)), "status": 200}] * 2}
    tenant.on("POST", f"/{ALIAS}/_msearch", 200, answer)
    with acting_for("tenant-a"):
        found = index.hybrid_search(QUERY, [1.0, 0.0, 0.0, 0.0], "dog", keyword_k=5)
    assert [*found.by_meaning, *found.by_keywords] == ["m1", "m1"]
    (request,) = tenant.requests
    assert request.path == f"/{ALIAS}/_msearch"
    # No header names an index: the alias in the path is the only one the search reaches.
    assert request.body[0] == {} and request.body[2] == {}
    assert own.requests == []


def test_a_missing_alias_inside_a_multi_search_is_made_then_the_search_is_sent_again(
    index: OpenSearchVectorIndex, own: FakeCluster, tenant: FakeCluster
) -> None:
    # A multi-search answers 200 with each search's 404; that is the missing alias all the same.
    missing = {"took": 1, "responses": [INDEX_NOT_FOUND, INDEX_NOT_FOUND]}
    answered = {"took": 3, "responses": [{**search_answer(("m1", 1.5)), "status": 200}] * 2}
    tenant.on("POST", f"/{ALIAS}/_msearch", 200, missing)
    own.on("PUT", f"/{INDEX}/_alias/{ALIAS}", 200, {"acknowledged": True})
    original_put = own.answer

    def make_alias(request: RecordedRequest) -> tuple[int, object]:
        tenant.on("POST", f"/{ALIAS}/_msearch", 200, answered)
        return original_put(request)

    own.answer = make_alias  # type: ignore[method-assign]
    with acting_for("tenant-a"):
        found = index.hybrid_search(QUERY, [1.0, 0.0, 0.0, 0.0], "dog", keyword_k=5)
    assert list(found.by_meaning) == ["m1"]
    assert [r.path for r in own.requests] == [f"/{INDEX}/_alias/{ALIAS}"]
    assert [r.path for r in tenant.requests] == [f"/{ALIAS}/_msearch", f"/{ALIAS}/_msearch"]


def test_one_document_writes_stay_on_the_function_s_own_role(
    index: OpenSearchVectorIndex, own: FakeCluster, tenant: FakeCluster
) -> None:
    own.on("PUT", r"/rapport-memories/_doc/[0-9a-f]{64}", 201, INDEXED_DOC)
    with acting_for("tenant-a"):
        index.upsert(make_memory())
    assert [r.method for r in own.requests] == ["PUT"] and tenant.requests == []


@pytest.mark.parametrize(
    "call",
    [
        lambda index: index.knn_search(QUERY.model_copy(update={"tenant_id": "tenant-b"}), [1.0, 0.0, 0.0, 0.0]),
        lambda index: index.keyword_search(QUERY.model_copy(update={"tenant_id": "tenant-b"}), "dog"),
        lambda index: index.hybrid_search(
            QUERY.model_copy(update={"tenant_id": "tenant-b"}), [1.0, 0.0, 0.0, 0.0], "dog", keyword_k=5
        ),
        lambda index: index.count(Scope("tenant-b", "user-1")),
        lambda index: index.delete_user(Scope("tenant-b", "user-1")),
        lambda index: index.vectors(Scope("tenant-b", "user-1"), ["m1"]),
        lambda index: index.delete(Scope("tenant-b", "user-1"), "m1"),
        lambda index: index.upsert(make_memory(tenant="tenant-b")),
    ],
    ids=["knn", "keyword", "hybrid", "count", "erase", "vectors", "delete", "upsert"],
)
def test_a_call_naming_another_tenant_is_refused_before_it_is_sent(
    index: OpenSearchVectorIndex, own: FakeCluster, tenant: FakeCluster, call: object
) -> None:
    with acting_for("tenant-a"), pytest.raises(TenantFenceError):
        call(index)  # type: ignore[operator]
    assert own.requests == [] and tenant.requests == []


def test_without_a_tenant_client_reads_go_to_the_index_and_the_fence_still_holds(own: FakeCluster) -> None:
    # An unsigned cluster: no alias, the query's own filters; the adapter still refuses another tenant.
    plain = OpenSearchVectorIndex(make_client(own), INDEX, DIMS)
    own.on("POST", f"/{INDEX}/_count", 200, COUNTED)
    with acting_for("tenant-a"):
        assert plain.count(Scope("tenant-a", "user-1")) == 7
        with pytest.raises(TenantFenceError):
            plain.count(Scope("tenant-b", "user-1"))
    assert [r.path for r in own.requests] == [f"/{INDEX}/_count"]


def test_tenant_reads_outside_any_tenant_s_work_are_refused(index: OpenSearchVectorIndex) -> None:
    with pytest.raises(TenantFenceError):
        index.count(Scope("tenant-a", "user-1"))
