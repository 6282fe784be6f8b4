"""The `VectorIndex` contract: one suite, run against the embedded index and (when one is reachable) OpenSearch."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from rapport.domain.models import Domain, Memory, MemoryStatus
from rapport.domain.scope import Scope
from rapport.errors import InvalidInputError
from rapport.ports.vector_index import IndexQuery, VectorIndex

pytestmark = pytest.mark.integration

DIMS = 8
TOLERANCE = 1e-4
OPENSEARCH_URL = os.environ.get("OPENSEARCH_URL")


def axis(i: int) -> list[float]:
    vector = [0.0] * DIMS
    vector[i] = 1.0
    return vector


QUERY_VECTOR = axis(0)


def at_cosine(cosine: float, other_axis: int) -> list[float]:
    """A unit vector whose cosine with QUERY_VECTOR is `cosine`; the rest of it lies along `other_axis`."""
    vector = [0.0] * DIMS
    vector[0] = cosine
    vector[other_axis] = math.sqrt(1.0 - cosine * cosine)
    return vector


# ---------------------------------------------------------------------------------------------------------------
# The adapters under contract


@dataclass
class Subject:
    index: VectorIndex
    reopen: Callable[[], VectorIndex] | None  # a fresh instance over the same storage, where that means anything


@pytest.fixture(scope="session")
def opensearch_index() -> Iterator[Any]:
    """One throwaway index for the session on the real cluster; each test fences itself with its own tenants."""
    from rapport.adapters.opensearch.index import OpenSearchVectorIndex, build_opensearch_client

    assert OPENSEARCH_URL
    client = build_opensearch_client(
        OPENSEARCH_URL,
        region=os.environ.get("AWS_REGION"),
        sigv4=os.environ.get("OPENSEARCH_SIGV4") == "1",
    )
    name = f"rapport-contract-{uuid4().hex[:12]}"
    index = OpenSearchVectorIndex(client, name, DIMS, refresh="wait_for")
    index.ensure_index()
    try:
        yield index
    finally:
        client.indices.delete(index=name, ignore_unavailable=True)


@pytest.fixture(
    params=[
        "embedded",
        pytest.param(
            "opensearch", marks=pytest.mark.skipif(not OPENSEARCH_URL, reason="set OPENSEARCH_URL to run on a cluster")
        ),
    ]
)
def subject(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Subject]:
    if request.param == "opensearch":
        yield Subject(request.getfixturevalue("opensearch_index"), reopen=None)
        return
    embedded = pytest.importorskip("rapport.adapters.local.embedded_index")
    path = tmp_path / "vectors.sqlite3"
    opened: list[Any] = []

    def open_index() -> VectorIndex:
        opened.append(embedded.EmbeddedVectorIndex(path, DIMS))
        return opened[-1]

    yield Subject(open_index(), reopen=open_index)
    for index in opened:
        if hasattr(index, "close"):
            index.close()


@pytest.fixture
def tenant() -> str:
    # Unique per test, so tests sharing one OpenSearch index never see each other's entries.
    return f"tenant-{uuid4().hex[:10]}"


@pytest.fixture
def index(subject: Subject) -> VectorIndex:
    return subject.index


def memory(
    tenant_id: str,
    memory_id: str,
    embedding: list[float],
    content: str = "A memory",
    *,
    user_id: str = "user-1",
    domain: Domain = Domain.USER,
    status: MemoryStatus = MemoryStatus.ACTIVE,
) -> Memory:
    at = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
    return Memory(
        id=memory_id,
        tenant_id=tenant_id,
        user_id=user_id,
        domain=domain,
        type="fact" if domain is Domain.USER else "shared_context",
        content=content,
        status=status,
        created_at=at,
        updated_at=at,
        last_reinforced_at=at,
        embedding=embedding,
    )


def query(tenant_id: str, *, user_id: str = "user-1", k: int = 10, **kwargs: Any) -> IndexQuery:
    return IndexQuery(
        tenant_id=tenant_id, user_id=user_id, domains=kwargs.pop("domains", (Domain.USER,)), k=k, **kwargs
    )


# ---------------------------------------------------------------------------------------------------------------
# k-NN


def test_knn_returns_the_nearest_first_with_cosine_scores(index: VectorIndex, tenant: str) -> None:
    # Given four memories at known angles from the query
    for memory_id, cosine, other in [("far", -0.6, 1), ("mid", 0.5, 2), ("near", 0.9, 3), ("orthogonal", 0.0, 4)]:
        index.upsert(memory(tenant, memory_id, at_cosine(cosine, other)))

    # When searching
    hits = index.knn_search(query(tenant), QUERY_VECTOR)

    # Then they come back best first, scored by cosine similarity
    assert [h.memory_id for h in hits] == ["near", "mid", "orthogonal", "far"]
    assert [h.score for h in hits] == pytest.approx([0.9, 0.5, 0.0, -0.6], abs=TOLERANCE)


def test_knn_respects_k(index: VectorIndex, tenant: str) -> None:
    for i, cosine in enumerate([0.95, 0.8, 0.6, 0.4, 0.2]):
        index.upsert(memory(tenant, f"m{i}", at_cosine(cosine, i + 1)))

    hits = index.knn_search(query(tenant, k=2), QUERY_VECTOR)

    assert [h.memory_id for h in hits] == ["m0", "m1"]


def test_search_never_crosses_the_fence(index: VectorIndex, tenant: str) -> None:
    # Given the caller's own memory, and four that match the query perfectly but are not the caller's to see
    index.upsert(memory(tenant, "mine", at_cosine(0.5, 1), "dog named Max"))
    index.upsert(memory(f"{tenant}-other", "other-tenant", QUERY_VECTOR, "dog named Max"))
    index.upsert(memory(tenant, "other-user", QUERY_VECTOR, "dog named Max", user_id="user-2"))
    index.upsert(memory(tenant, "relational", QUERY_VECTOR, "dog named Max", domain=Domain.RELATIONAL))
    index.upsert(memory(tenant, "archived", QUERY_VECTOR, "dog named Max", status=MemoryStatus.ARCHIVED))

    # When the caller searches its user domain for active memories, by vector and by keyword
    vector_hits = index.knn_search(query(tenant), QUERY_VECTOR)
    keyword_hits = index.keyword_search(query(tenant), "dog named Max")

    # Then only its own memory comes back
    assert [h.memory_id for h in vector_hits] == ["mine"]
    assert [h.memory_id for h in keyword_hits] == ["mine"]


def test_asking_for_more_domains_and_statuses_widens_the_search(index: VectorIndex, tenant: str) -> None:
    index.upsert(memory(tenant, "mine", at_cosine(0.5, 1)))
    index.upsert(memory(tenant, "relational", at_cosine(0.7, 2), domain=Domain.RELATIONAL))
    index.upsert(memory(tenant, "archived", at_cosine(0.9, 3), status=MemoryStatus.ARCHIVED))

    both = query(tenant, domains=(Domain.USER, Domain.RELATIONAL), statuses=("active", "archived"))
    hits = index.knn_search(both, QUERY_VECTOR)

    assert [h.memory_id for h in hits] == ["archived", "relational", "mine"]


def test_reupsert_replaces_the_entry(index: VectorIndex, tenant: str) -> None:
    index.upsert(memory(tenant, "m1", at_cosine(0.2, 1), "Works at Initech"))

    index.upsert(memory(tenant, "m1", at_cosine(0.8, 2), "Works at Acme"))

    hits = index.knn_search(query(tenant), QUERY_VECTOR)
    assert [(h.memory_id, round(h.score, 3)) for h in hits] == [("m1", 0.8)]
    assert index.count(Scope(tenant, "user-1")) == 1
    assert index.keyword_search(query(tenant), "Initech") == []
    assert [h.memory_id for h in index.keyword_search(query(tenant), "Acme")] == ["m1"]


def test_knn_search_many_answers_what_each_knn_search_answers(index: VectorIndex, tenant: str) -> None:
    # Given memories spread over the axes, another user's, and an archived one
    import random

    rng = random.Random(7)
    vectors = {f"m{i}": [rng.gauss(0.0, 1.0) for _ in range(DIMS)] for i in range(30)}
    for memory_id, vector in vectors.items():
        index.upsert(memory(tenant, memory_id, vector))
    index.upsert(memory(tenant, "archived", vectors["m3"], status=MemoryStatus.ARCHIVED))
    index.upsert(memory(tenant, "theirs", vectors["m4"], user_id="user-2"))
    asked = [vectors["m3"], vectors["m4"], QUERY_VECTOR, [rng.gauss(0.0, 1.0) for _ in range(DIMS)]]

    # When the same vectors are searched one by one and all at once
    one_by_one = [index.knn_search(query(tenant, k=6), vector) for vector in asked]
    together = index.knn_search_many(query(tenant, k=6), asked)

    # Then the answers are the same, in the order asked
    assert len(together) == len(asked)
    for single, batched in zip(one_by_one, together, strict=True):
        assert [h.memory_id for h in batched] == [h.memory_id for h in single]
        assert [h.score for h in batched] == pytest.approx([h.score for h in single], abs=TOLERANCE)


def test_knn_search_many_leaves_out_the_hits_below_min_score(index: VectorIndex, tenant: str) -> None:
    for memory_id, cosine, other in [("far", -0.6, 1), ("mid", 0.5, 2), ("near", 0.9, 3), ("close", 0.8, 4)]:
        index.upsert(memory(tenant, memory_id, at_cosine(cosine, other)))

    near_only, nothing = index.knn_search_many(query(tenant), [QUERY_VECTOR, axis(5)], min_score=0.75)
    everything = index.knn_search_many(query(tenant, k=2), [QUERY_VECTOR])

    assert [(h.memory_id, round(h.score, 3)) for h in near_only] == [("near", 0.9), ("close", 0.8)]
    assert nothing == []
    assert [[h.memory_id for h in hits] for hits in everything] == [["near", "close"]]
    assert index.knn_search_many(query(tenant), []) == []
    assert index.knn_search_many(query(f"{tenant}-empty"), [QUERY_VECTOR]) == [[]]


def test_wrong_dimensions_are_refused(index: VectorIndex, tenant: str) -> None:
    with pytest.raises(InvalidInputError):
        index.upsert(memory(tenant, "m1", [1.0] + [0.0] * (DIMS - 2)))
    with pytest.raises(InvalidInputError):
        index.knn_search(query(tenant), [1.0] + [0.0] * DIMS)
    with pytest.raises(InvalidInputError):
        index.knn_search_many(query(tenant), [QUERY_VECTOR, [1.0] + [0.0] * DIMS])


# ---------------------------------------------------------------------------------------------------------------
# Deletion


def test_delete_removes_one_entry(index: VectorIndex, tenant: str) -> None:
    index.upsert(memory(tenant, "keep", at_cosine(0.5, 1), "Prefers tea"))
    index.upsert(memory(tenant, "drop", at_cosine(0.9, 2), "Prefers coffee"))

    index.delete(Scope(tenant, "user-1"), "drop")

    assert [h.memory_id for h in index.knn_search(query(tenant), QUERY_VECTOR)] == ["keep"]
    assert index.keyword_search(query(tenant), "coffee") == []
    assert index.count(Scope(tenant, "user-1")) == 1


def test_delete_of_a_missing_entry_is_fine(index: VectorIndex, tenant: str) -> None:
    index.upsert(memory(tenant, "keep", at_cosine(0.5, 1)))

    index.delete(Scope(tenant, "user-1"), "never-indexed")
    index.delete(Scope(tenant, "nobody"), "never-indexed")

    assert index.count(Scope(tenant, "user-1")) == 1


def test_delete_user_removes_only_that_user(index: VectorIndex, tenant: str) -> None:
    # Given three memories of the user, one of a neighbour, and one of a same-named user in another tenant
    for i in range(3):
        index.upsert(memory(tenant, f"m{i}", at_cosine(0.5, i + 1), "Has a dog named Max"))
    index.upsert(memory(tenant, "neighbour", at_cosine(0.5, 4), "Has a dog named Max", user_id="user-2"))
    index.upsert(memory(f"{tenant}-other", "elsewhere", at_cosine(0.5, 5), "Has a dog named Max"))

    # When the user is erased
    removed = index.delete_user(Scope(tenant, "user-1"))

    # Then exactly their entries are gone, everywhere
    assert removed == 3
    assert index.count(Scope(tenant, "user-1")) == 0
    assert index.knn_search(query(tenant), QUERY_VECTOR) == []
    assert index.keyword_search(query(tenant), "dog") == []
    assert index.count(Scope(tenant, "user-2")) == 1
    assert index.count(Scope(f"{tenant}-other", "user-1")) == 1
    assert index.delete_user(Scope(tenant, "user-1")) == 0


# ---------------------------------------------------------------------------------------------------------------
# Keyword search and count


def test_keyword_search_ranks_the_memory_with_the_terms_first(index: VectorIndex, tenant: str) -> None:
    index.upsert(memory(tenant, "meetings", at_cosine(0.1, 1), "Prefers morning meetings before ten"))
    index.upsert(memory(tenant, "dog", at_cosine(0.1, 2), "Has a dog named Max who loves the park"))
    index.upsert(memory(tenant, "work", at_cosine(0.1, 3), "Works at Acme on the billing team"))

    hits = index.keyword_search(query(tenant), "what is the name of my dog")

    assert hits[0].memory_id == "dog"
    assert hits[0].score > 0
    assert "work" not in [h.memory_id for h in hits]
    assert index.keyword_search(query(tenant), "submarine") == []


def test_keyword_search_respects_k(index: VectorIndex, tenant: str) -> None:
    for i in range(4):
        index.upsert(memory(tenant, f"m{i}", at_cosine(0.1, i + 1), f"Walked the dog {'far ' * i}today"))

    assert len(index.keyword_search(query(tenant, k=2), "dog")) == 2


def test_count_counts_the_users_entries(index: VectorIndex, tenant: str) -> None:
    assert index.count(Scope(tenant, "user-1")) == 0

    index.upsert(memory(tenant, "a", at_cosine(0.1, 1)))
    index.upsert(memory(tenant, "b", at_cosine(0.2, 2), domain=Domain.RELATIONAL))
    index.upsert(memory(tenant, "c", at_cosine(0.3, 3), status=MemoryStatus.ARCHIVED))
    index.upsert(memory(tenant, "d", at_cosine(0.4, 4), user_id="user-2"))

    assert index.count(Scope(tenant, "user-1")) == 3


# ---------------------------------------------------------------------------------------------------------------
# Vectors by id (what enrichment searches with, since a listed memory carries none)


def test_vectors_are_read_by_id_at_unit_length(index: VectorIndex, tenant: str) -> None:
    # Given three entries, one of them written with a vector that is not of unit length
    index.upsert(memory(tenant, "near", at_cosine(0.9, 1)))
    index.upsert(memory(tenant, "long", [3.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0]))
    index.upsert(memory(tenant, "archived", axis(5), domain=Domain.RELATIONAL, status=MemoryStatus.ARCHIVED))

    # When two of them and one never indexed are asked for, one of them twice
    vectors = index.vectors(Scope(tenant, "user-1"), ["long", "near", "never-indexed", "near"])

    # Then each asked entry comes back once, as the index searches with it; the missing one is left out
    assert set(vectors) == {"near", "long"}
    assert vectors["near"] == pytest.approx(at_cosine(0.9, 1), abs=TOLERANCE)
    assert vectors["long"] == pytest.approx([0.6, 0.0, 0.8, 0.0, 0.0, 0.0, 0.0, 0.0], abs=TOLERANCE)
    # ...whatever the entry's domain or status: a read by id is fenced by user only
    assert index.vectors(Scope(tenant, "user-1"), ["archived"]) == {"archived": pytest.approx(axis(5), abs=TOLERANCE)}
    assert index.vectors(Scope(tenant, "user-1"), []) == {}


def test_vectors_read_with_them_find_what_the_entry_finds(index: VectorIndex, tenant: str) -> None:
    index.upsert(memory(tenant, "dog", at_cosine(0.9, 1)))
    index.upsert(memory(tenant, "cat", at_cosine(0.8, 1)))
    index.upsert(memory(tenant, "work", axis(3)))

    vector = index.vectors(Scope(tenant, "user-1"), ["dog"])["dog"]

    hits = index.knn_search(query(tenant), vector)
    assert [h.memory_id for h in hits][:2] == ["dog", "cat"]
    assert hits[0].score == pytest.approx(1.0, abs=TOLERANCE)


def test_vectors_never_cross_the_fence(index: VectorIndex, tenant: str) -> None:
    # Given the same memory id under another user and another tenant, with other vectors
    index.upsert(memory(tenant, "m1", axis(1)))
    index.upsert(memory(tenant, "m1", axis(2), user_id="user-2"))
    index.upsert(memory(f"{tenant}-other", "m1", axis(3)))
    index.upsert(memory(f"{tenant}-other", "theirs", axis(4)))

    # Then each scope reads its own entry, and nothing of another's
    assert index.vectors(Scope(tenant, "user-1"), ["m1", "theirs"]) == {"m1": pytest.approx(axis(1), abs=TOLERANCE)}
    assert index.vectors(Scope(tenant, "user-2"), ["m1"]) == {"m1": pytest.approx(axis(2), abs=TOLERANCE)}
    assert index.vectors(Scope(tenant, "nobody"), ["m1"]) == {}


def test_vectors_follow_a_reupsert_and_a_delete(index: VectorIndex, tenant: str) -> None:
    index.upsert(memory(tenant, "m1", axis(1)))
    index.upsert(memory(tenant, "m2", axis(2)))

    index.upsert(memory(tenant, "m1", axis(3)))
    index.delete(Scope(tenant, "user-1"), "m2")

    assert index.vectors(Scope(tenant, "user-1"), ["m1", "m2"]) == {"m1": pytest.approx(axis(3), abs=TOLERANCE)}
    index.delete_user(Scope(tenant, "user-1"))
    assert index.vectors(Scope(tenant, "user-1"), ["m1"]) == {}


# ---------------------------------------------------------------------------------------------------------------
# Persistence (the embedded index keeps its entries in a file; a cluster keeps them by being a cluster)


def test_a_new_instance_on_the_same_path_sees_the_same_entries(subject: Subject, tenant: str) -> None:
    if subject.reopen is None:
        pytest.skip("persistence across instances is the embedded index's own concern")
    subject.index.upsert(memory(tenant, "near", at_cosine(0.9, 1), "Has a dog named Max"))
    subject.index.upsert(memory(tenant, "mid", at_cosine(0.5, 2), "Prefers tea"))
    subject.index.delete(Scope(tenant, "user-1"), "mid")
    subject.index.upsert(memory(tenant, "far", at_cosine(-0.2, 3)))

    reopened = subject.reopen()

    hits = reopened.knn_search(query(tenant), QUERY_VECTOR)
    assert [h.memory_id for h in hits] == ["near", "far"]
    assert [h.score for h in hits] == pytest.approx([0.9, -0.2], abs=TOLERANCE)
    assert [h.memory_id for h in reopened.keyword_search(query(tenant), "dog")] == ["near"]
    assert reopened.count(Scope(tenant, "user-1")) == 2
    assert set(reopened.vectors(Scope(tenant, "user-1"), ["near", "mid", "far"])) == {"near", "far"}


def test_an_open_instance_sees_what_another_process_wrote_since(subject: Subject, tenant: str) -> None:
    # `rapport serve` holds one instance for hours; `rapport jobs run` (another process) opens its own and writes
    if subject.reopen is None:
        pytest.skip("a cluster is one index for every client")
    serving = subject.index
    serving.upsert(memory(tenant, "kept", at_cosine(0.5, 2), "Prefers tea"))
    assert serving.count(Scope(tenant, "user-1")) == 1
    other = subject.reopen()

    other.upsert(memory(tenant, "new", at_cosine(0.9, 1), "Has a dog named Max"))
    other.delete(Scope(tenant, "user-1"), "kept")

    assert [h.memory_id for h in serving.knn_search(query(tenant), QUERY_VECTOR)] == ["new"]
    assert [h.memory_id for h in serving.keyword_search(query(tenant), "dog")] == ["new"]
    assert serving.count(Scope(tenant, "user-1")) == 1
    assert set(serving.vectors(Scope(tenant, "user-1"), ["new", "kept"])) == {"new"}
    # ...and its own writes after the reload stay visible to both
    serving.upsert(memory(tenant, "mine", at_cosine(0.5, 2), "Likes dogs"))
    assert {h.memory_id for h in other.keyword_search(query(tenant), "dog")} == {"new", "mine"}
