"""Port `VectorIndex`: the derived search index (k-NN plus BM25 keyword), rebuildable from the store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from rapport.domain.models import Domain, Memory
from rapport.domain.scope import DEFAULT_AGENT, Scope


class IndexHit(BaseModel):
    model_config = ConfigDict(frozen=True)

    memory_id: str
    score: float  # cosine similarity for vector search, raw BM25 for keyword search


class IndexQuery(BaseModel):
    """Every search is fenced to one tenant and end user, and to the asked domains and statuses; relational
    memories to those of one assistant (`agent_id`), user memories being every assistant's."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    user_id: str
    domains: tuple[Domain, ...]
    statuses: tuple[str, ...] = ("active",)
    k: int = 50
    agent_id: str = DEFAULT_AGENT


class HybridHits(BaseModel):
    """What one hybrid search found: the nearest by meaning and the best by keywords, each best first, as ids with
    their scores (what a recall reads of each: a mapping, not an `IndexHit` each to turn into one)."""

    model_config = ConfigDict(frozen=True)

    by_meaning: dict[str, float] = {}  # id: cosine
    # The best by keywords (id: BM25): the first `k` of them, then of the rest up to `keyword_k` at least those
    # `by_meaning` holds (what a recall reads past its candidates is their scores); an index may give every one.
    by_keywords: dict[str, float] = {}
    # The cosine to the query of the first `k` keyword hits (those a recall takes as candidates) that are not among
    # `by_meaning`, where the index has it at no cost (in process, from the matrix it searched); a caller computes
    # the others from the memory's vector.
    cosines: dict[str, float] = {}
    # What a memory of average length holding each of the query's words once would score by BM25 (the sum of their
    # idf), where the index has its term statistics at no extra request; None otherwise.
    keyword_ceiling: float | None = None


class RelationshipTally(BaseModel):
    """What the index holds of one assistant's relationships: how many people it has relational memories of, and
    how many such memories (every status)."""

    model_config = ConfigDict(frozen=True)

    people: int = 0
    relational_memories: int = 0


class VectorIndex(Protocol):
    def upsert(self, memory: Memory) -> None:
        """Index (or re-index) one memory; its `embedding` must be set."""

    def delete(self, scope: Scope, memory_id: str) -> None:
        """Remove one entry; a missing one is not an error."""

    def delete_user(self, scope: Scope) -> int:
        """Remove every entry of the end user; how many went."""

    def knn_search(self, query: IndexQuery, vector: list[float]) -> list[IndexHit]:
        """Nearest neighbours by cosine similarity, best first."""

    def knn_search_many(
        self, query: IndexQuery, vectors: Sequence[list[float]], *, min_score: float | None = None
    ) -> list[list[IndexHit]]:
        """For each vector, in order, what `knn_search(query, vector)` answers less its hits scoring below
        `min_score`: in a matrix product per chunk of vectors in process, in a `_msearch` per hundred where the index
        is remote (a batch's neighbours when enriching it), rather than one search per memory."""

    def keyword_search(self, query: IndexQuery, text: str) -> list[IndexHit]:
        """BM25 matches over the memory content, best first."""

    def hybrid_search(self, query: IndexQuery, vector: list[float], text: str, *, keyword_k: int) -> HybridHits:
        """`knn_search(query, vector)` and `keyword_search(query with k = keyword_k, text)` with the same answers, in
        one request where the index is remote (a recall's candidates); past the first `query.k` keyword hits, only
        those found by meaning too need be given (`HybridHits.by_keywords`)."""

    def vectors(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[float]]:
        """The vectors the index holds for these memories of one end user, by id, in one request: unit length, as
        the index searches with them. An id it does not hold (not indexed yet, or another user's) is left out."""

    def count(self, scope: Scope) -> int: ...

    def relationship_tallies(self, tenant_id: str) -> dict[str, RelationshipTally]:
        """Per assistant of the tenant, what it holds of its relationships, in one request (an aggregation)."""
