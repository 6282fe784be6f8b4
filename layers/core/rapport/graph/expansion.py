"""Graph work at recall: the relation component of each hit's score, and expansion along edges from the seed hits."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from rapport.domain.lifecycle.decay import effective_strength
from rapport.domain.models import Memory, MemoryStatus
from rapport.domain.relations import Direction, Edge, EnrichmentType, PathStep, RelationType
from rapport.domain.rendering import search_text
from rapport.domain.scoring import (
    RecallSignals,
    hybrid_score,
    match_reasons,
    match_strength,
    matched_terms,
    relevance,
)
from rapport.domain.text import tokenize
from rapport.graph.patterns import is_pattern_id
from rapport.graph.relation_score import RelationScoreRule
from rapport.ports.store import MemoryStore
from rapport.services.edges import EdgeRepository
from rapport.services.memories import RecallHit, RecallQuery
from rapport.settings import Settings

# Which links expansion prefers when a seed has more than `relation_limit`: what someone asserted, then what
# enrichment found by meaning or pattern, then mere adjacency in time.
_PREFERENCE = {EnrichmentType.SIMILAR_TO: 1, RelationType.EXEMPLIFIES: 1, EnrichmentType.PRECEDED_BY: 2}


@dataclass(frozen=True)
class _Reach:
    """A memory one seed can reach, with the path and the weakest edge strength along it."""

    memory_id: str
    path: tuple[PathStep, ...]
    strength: float
    preference: int


@dataclass
class _Edges:
    incoming: list[Edge]
    outgoing: list[Edge]


class RecallGraph:
    """Reads edges per recall, never writes. A user with no edges costs one single-item read."""

    def __init__(self, store: MemoryStore, edges: EdgeRepository, settings: Settings) -> None:
        self._store = store
        self._edges = edges
        self._settings = settings
        self._rule = RelationScoreRule.of(settings.graph)

    def finish_recall(
        self,
        tenant_id: str,
        user_id: str,
        query: RecallQuery,
        hits: list[RecallHit],
        vector: list[float],
        now: datetime,
    ) -> list[RecallHit]:
        """Adds the relation component to the best candidates, ranks and cuts to the limit, then appends what
        expansion reached (each with its path), best first, at most `expansion_limit` of them."""
        graph = self._settings.graph
        hits = sorted(hits, key=_rank)
        if not self._edges.has_any(tenant_id, user_id):
            return hits[: query.limit]
        cache: dict[str, _Edges] = {}
        pool = hits[: max(graph.relation_score_pool, 0)]
        rescored = [self._with_relation(tenant_id, user_id, hit, cache) for hit in pool]
        seeds = sorted(rescored + hits[len(pool) :], key=_rank)[: query.limit]
        if not query.expand_relations:
            return seeds
        return seeds + self._expand(tenant_id, user_id, query, seeds, vector, now, cache)

    # relation score

    def _edges_of(self, tenant_id: str, user_id: str, node_id: str, cache: dict[str, _Edges]) -> _Edges:
        if node_id not in cache:
            limit = self._settings.graph.expand_edge_read_limit
            cache[node_id] = _Edges(
                incoming=self._edges.incoming(tenant_id, user_id, node_id, limit=limit),
                outgoing=self._edges.outgoing(tenant_id, user_id, node_id, limit=limit),
            )
        return cache[node_id]

    def _with_relation(self, tenant_id: str, user_id: str, hit: RecallHit, cache: dict[str, _Edges]) -> RecallHit:
        edges = self._edges_of(tenant_id, user_id, hit.memory.id, cache)
        relation = self._rule.score(edges.incoming, edges.outgoing)
        if relation <= 0.0:
            return hit
        reasons = [*hit.match_reasons, _linked_reason(edges.incoming + edges.outgoing, self._rule.ignored)]
        score = round(hit.score + self._settings.weights.relation * relation, 6)
        return hit.model_copy(update={"score": score, "match_reasons": reasons})

    # expansion

    def _expand(
        self,
        tenant_id: str,
        user_id: str,
        query: RecallQuery,
        seeds: list[RecallHit],
        vector: list[float],
        now: datetime,
        cache: dict[str, _Edges],
    ) -> list[RecallHit]:
        graph = self._settings.graph
        per_seed = graph.relation_limit if query.relation_limit is None else query.relation_limit
        total = graph.expansion_limit if query.expansion_limit is None else query.expansion_limit
        if per_seed == 0 or total == 0:
            return []
        min_strength = graph.expand_min_strength if query.expand_min_strength is None else query.expand_min_strength
        min_importance = (
            graph.expand_min_importance if query.expand_min_importance is None else query.expand_min_importance
        )
        seen = {hit.memory.id for hit in seeds}
        reaches = {
            seed.memory.id: self._reach(tenant_id, user_id, seed.memory.id, min_strength, seen, cache) for seed in seeds
        }
        wanted = {r.memory_id for found in reaches.values() for r in found}
        memories = {m.id: m for m in self._store.get_memories(tenant_id, user_id, wanted)}
        # As recall's own candidates: compressed memories are live; the rest is history, for include_archived.
        statuses = set(MemoryStatus) if query.include_archived else {MemoryStatus.ACTIVE, MemoryStatus.COMPRESSED}
        domains = set(query.domain.domains())
        scored: dict[str, RecallHit] = {}
        expanded: list[RecallHit] = []
        for seed in seeds:
            options: list[tuple[_Reach, RecallHit]] = []
            for reach in reaches[seed.memory.id]:
                memory = memories.get(reach.memory_id)
                if (
                    memory is None
                    or memory.status not in statuses
                    or memory.domain not in domains
                    or (query.memory_type is not None and memory.type != query.memory_type)
                    or memory.importance < min_importance
                ):
                    continue
                if memory.id not in scored:
                    scored[memory.id] = self._score(tenant_id, user_id, query.query, memory, vector, now, cache)
                options.append((reach, scored[memory.id]))
            options.sort(key=lambda option: (option[0].preference, *_rank(option[1])))
            for reach, hit in options[:per_seed]:
                if hit.memory.id in seen:
                    continue  # reached from a better seed already
                seen.add(hit.memory.id)
                step = reach.path[0]
                via = f"linked to {step.from_id} by {step.relation.value} ({step.direction.value})"
                expanded.append(
                    hit.model_copy(update={"path": list(reach.path), "match_reasons": [via, *hit.match_reasons]})
                )
        expanded.sort(key=_rank)
        return expanded[:total]

    def _reach(
        self,
        tenant_id: str,
        user_id: str,
        seed_id: str,
        min_strength: float,
        seen: set[str],
        cache: dict[str, _Edges],
    ) -> list[_Reach]:
        """Neighbours of a seed; through a Pattern node, the other memories that exemplify it (one extra hop)."""
        found: dict[str, _Reach] = {}
        for step, other, edge in _neighbours(seed_id, self._edges_of(tenant_id, user_id, seed_id, cache)):
            if edge.strength < min_strength:
                continue
            if is_pattern_id(other):
                pattern_edges = self._edges_of(tenant_id, user_id, other, cache)
                for second, sibling, via in _neighbours(other, pattern_edges):
                    if sibling != seed_id and via.strength >= min_strength:
                        _keep(found, _Reach(sibling, (step, second), min(edge.strength, via.strength), 1))
                continue
            _keep(found, _Reach(other, (step,), edge.strength, _PREFERENCE.get(edge.type, 0)))
        return [r for r in found.values() if r.memory_id not in seen]

    def _score(
        self,
        tenant_id: str,
        user_id: str,
        text: str,
        memory: Memory,
        vector: list[float],
        now: datetime,
        cache: dict[str, _Edges],
    ) -> RecallHit:
        """The same hybrid score as a candidate's, keyword part aside: expansion reached it, BM25 did not rank it."""
        settings = self._settings
        edges = self._edges_of(tenant_id, user_id, memory.id, cache)
        relation = self._rule.score(edges.incoming, edges.outgoing)
        similarity = _cosine(vector, memory.embedding)
        signals = RecallSignals(
            similarity=similarity,
            keyword=0.0,
            matched_terms=matched_terms(text, search_text(memory)),
            query_terms=len(dict.fromkeys(tokenize(text))),
            age_days=(now - (memory.occurred_at or memory.created_at)).total_seconds() / 86_400,
            importance=memory.importance,
            strength=effective_strength(memory, now, settings.governance),  # decayed to now, as recall's candidates
            relation=relation,
        )
        half_life = settings.recall_recency_half_life_days
        reasons = match_reasons(signals, half_life)
        if relation > 0:
            reasons.append(_linked_reason(edges.incoming + edges.outgoing, self._rule.ignored))
        return RecallHit(
            memory=memory.without_embedding(),
            similarity=round(similarity, 6),
            score=round(hybrid_score(signals, settings.weights, half_life), 6),
            match_strength=match_strength(
                relevance(signals, settings.weights), settings.strong_match_score, settings.moderate_match_score
            ),
            match_reasons=reasons,
            matched_terms=list(signals.matched_terms),
        )


def _rank(hit: RecallHit) -> tuple[float, str]:
    return (-hit.score, hit.memory.id)


def _neighbours(node_id: str, edges: _Edges) -> Iterable[tuple[PathStep, str, Edge]]:
    for edge in edges.outgoing:
        yield PathStep(from_id=node_id, relation=edge.type, direction=Direction.OUTGOING), edge.target_id, edge
    for edge in edges.incoming:
        yield PathStep(from_id=node_id, relation=edge.type, direction=Direction.INCOMING), edge.source_id, edge


def _keep(found: dict[str, _Reach], reach: _Reach) -> None:
    """One way to each memory: the preferred kind of link, then the strongest."""
    current = found.get(reach.memory_id)
    if current is None or (reach.preference, -reach.strength) < (current.preference, -current.strength):
        found[reach.memory_id] = reach


def _linked_reason(edges: list[Edge], ignored: frozenset[str]) -> str:
    types = sorted({e.type.value for e in edges if e.type.value not in ignored})
    return "linked: " + ", ".join(types)


def _cosine(vector: list[float], other: list[float] | None) -> float:
    if not other or len(other) != len(vector):
        return 0.0
    return float(sum(a * b for a, b in zip(vector, other, strict=True)))
