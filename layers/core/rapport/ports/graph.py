"""Port `MemoryGraph`: what the memory lifecycle and recall ask of the relationship graph (rapport/graph/hooks.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from rapport.domain.models import Memory
from rapport.domain.recall import RecallHit, RecallQuery, RelationScore
from rapport.domain.scope import Scope

# How recall scores a memory that expansion reached, given its relation score: the graph follows edges, recall scores.
ScoreReached = Callable[[Memory, RelationScore], RecallHit]


class RecallEdges(Protocol):
    """One end user's edges as one recall reads them: each node's at most once, for the relation scores and
    expansion alike."""

    def relation_scores(self, memory_ids: Sequence[str]) -> dict[str, RelationScore]:
        """The relation component of each memory, from its edges."""

    def expand(self, query: RecallQuery, seeds: Sequence[RecallHit], score: ScoreReached) -> list[RecallHit]:
        """The memories linked to the seeds that the query's filters allow and that are not seeds themselves, each
        scored by `score` and carrying the path that reached it; best first, within the query's (or the settings')
        per-seed and total limits."""


class MemoryGraph(Protocol):
    def memories_stored(self, scope: Scope, memories: list[Memory]) -> None:
        """After memories are stored and indexed (enrichment); must not raise for a stored memory."""

    def memory_deleted(self, scope: Scope, memory_id: str) -> None:
        """After a memory is deleted: its edges go too."""

    def edges_for_recall(self, scope: Scope) -> RecallEdges | None:
        """The end user's edges for one recall (None: recall without the graph); reading them costs nothing until
        `relation_scores`, which reads the edges of all the memories it is given in one batched read."""
