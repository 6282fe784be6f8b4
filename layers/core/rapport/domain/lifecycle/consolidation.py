"""Consolidation rules: which memories may merge, clustering by cosine, and what the merged memory carries."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from datetime import datetime

from rapport.domain.lifecycle.decay import effective_strength
from rapport.domain.lifecycle.derived import is_derived
from rapport.domain.models import Domain, Memory, MemoryStatus
from rapport.settings import GovernanceSettings


def consolidatable_types(domain: Domain, settings: GovernanceSettings) -> frozenset[str]:
    """Facts for user memories, patterns for relational ones (the lists are settings)."""
    if domain is Domain.USER:
        return frozenset(settings.user_consolidation_types)
    return frozenset(settings.relational_consolidation_types)


def may_consolidate(memory: Memory, settings: GovernanceSettings) -> bool:
    """Everything but the vector: an active original of a consolidatable type (listings carry no vectors, so the
    job reads them for these memories only)."""
    return (
        memory.status is MemoryStatus.ACTIVE
        and not is_derived(memory)
        and memory.type in consolidatable_types(memory.domain, settings)
    )


def is_consolidatable(memory: Memory, settings: GovernanceSettings) -> bool:
    return may_consolidate(memory, settings) and bool(memory.embedding)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 for vectors of different widths or a zero vector (nothing to compare)."""
    if len(a) != len(b):
        return 0.0
    norms = math.sqrt(sum(map(operator.mul, a, a))) * math.sqrt(sum(map(operator.mul, b, b)))
    return sum(map(operator.mul, a, b)) / norms if norms else 0.0


def cluster(
    vectors: Sequence[tuple[str, Sequence[float]]],
    min_similarity: float,
    *,
    max_cluster: int,
    apart: frozenset[frozenset[str]] = frozenset(),
) -> list[list[str]]:
    """Clusters of two or more ids, every pair of a cluster at least `min_similarity` apart in cosine.

    Greedy complete linkage in the order given (callers pass the strongest first, so the strongest memory leads its
    cluster): each item joins the first cluster it is similar enough to as a whole, or starts one. Complete rather
    than single linkage, so a chain of near neighbours cannot merge two things that are not alike. Pairs in
    `apart` (members of a consolidation that was undone) never share a cluster again.
    """
    clusters: list[list[int]] = []
    similarity: dict[tuple[int, int], float] = {}

    def similar(i: int, j: int) -> bool:
        key = (min(i, j), max(i, j))
        if key not in similarity:
            similarity[key] = cosine(vectors[i][1], vectors[j][1])
        return similarity[key] >= min_similarity

    for index, (item_id, _) in enumerate(vectors):
        for members in clusters:
            if (
                len(members) < max_cluster
                and all(frozenset((item_id, vectors[m][0])) not in apart for m in members)
                and all(similar(index, m) for m in members)
            ):
                members.append(index)
                break
        else:
            clusters.append([index])
    return [[vectors[i][0] for i in members] for members in clusters if len(members) > 1]


def strongest_first(memories: Sequence[Memory], now: datetime, settings: GovernanceSettings) -> list[Memory]:
    """Effective strength, then importance, then the newest: the order clustering reads memories in."""
    return sorted(
        memories,
        key=lambda m: (-effective_strength(m, now, settings), -m.importance, -m.created_at.timestamp(), m.id),
    )
