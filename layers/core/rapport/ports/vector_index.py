"""Port `VectorIndex`: the derived search index (k-NN plus BM25 keyword), rebuildable from the store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from rapport.domain.models import Domain, Memory
from rapport.domain.scope import Scope


class IndexHit(BaseModel):
    model_config = ConfigDict(frozen=True)

    memory_id: str
    score: float  # cosine similarity for vector search, raw BM25 for keyword search


class IndexQuery(BaseModel):
    """Every search is fenced to one tenant and end user, and to the asked domains and statuses."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    user_id: str
    domains: tuple[Domain, ...]
    statuses: tuple[str, ...] = ("active",)
    k: int = 50


class VectorIndex(Protocol):
    def upsert(self, memory: Memory) -> None:
        """Index (or re-index) one memory; its `embedding` must be set."""

    def delete(self, scope: Scope, memory_id: str) -> None:
        """Remove one entry; a missing one is not an error."""

    def delete_user(self, scope: Scope) -> int:
        """Remove every entry of the end user; how many went."""

    def knn_search(self, query: IndexQuery, vector: list[float]) -> list[IndexHit]:
        """Nearest neighbours by cosine similarity, best first."""

    def keyword_search(self, query: IndexQuery, text: str) -> list[IndexHit]:
        """BM25 matches over the memory content, best first."""

    def vectors(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[float]]:
        """The vectors the index holds for these memories of one end user, by id, in one request: unit length, as
        the index searches with them. An id it does not hold (not indexed yet, or another user's) is left out."""

    def count(self, scope: Scope) -> int: ...
