"""Graph work at recall: the relation component of candidates, from their edges, and expansion from the seed hits."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapport.domain.models import recalled_statuses
from rapport.domain.recall import RecallHit, RecallQuery, RelationScore, rank_key
from rapport.domain.relations import Direction, Edge, EnrichmentType, PathStep, RelationType
from rapport.domain.scope import Scope
from rapport.graph.patterns import is_pattern_id
from rapport.graph.relation_score import RelationScoreRule
from rapport.ports.graph import ScoreReached
from rapport.ports.store import MemoryStore
from rapport.services.edges import Adjacency, EdgeRepository, NodeEdges
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


class RecallGraph:
    """Reads edges per recall, never writes: the candidates' adjacency items in one batched read, then (expansion)
    the reached nodes' in another."""

    def __init__(self, store: MemoryStore, edges: EdgeRepository, settings: Settings) -> None:
        self._store = store
        self._edges = edges
        self._settings = settings
        self._rule = RelationScoreRule.of(settings.graph)

    def edges_for_recall(self, scope: Scope) -> UserEdges | None:
        # No "any edges?" read first: the batched read of the candidates' edges answers that too, at the same cost.
        return UserEdges(self._store, self._edges, self._settings, self._rule, scope)


class UserEdges:
    """One end user's edges as one recall reads them (`RecallEdges`): each node's at most once, cached for the
    relation scores and expansion alike."""

    def __init__(
        self,
        store: MemoryStore,
        edges: EdgeRepository,
        settings: Settings,
        rule: RelationScoreRule,
        scope: Scope,
    ) -> None:
        self._store = store
        self._edges = edges
        self._settings = settings
        self._rule = rule
        self._score = rule.relation_of_links  # pure: an adjacency shared across recalls keeps what it returns
        self._scope = scope
        self._read: dict[str, Adjacency] = {}
        self._cache: dict[str, NodeEdges] = {}

    def _load(self, node_ids: Iterable[str]) -> None:
        """The nodes' edges not read yet, in one batched read."""
        missing = [n for n in dict.fromkeys(node_ids) if n not in self._read]
        self._read.update(self._edges.adjacency_of(self._scope, missing))

    def _edges_of(self, node_id: str) -> NodeEdges:
        """The node's edges, each direction cut at the read limit."""
        edges = self._cache.get(node_id)
        if edges is None:
            self._load([node_id])
            limit = self._settings.graph.expand_edge_read_limit
            every = self._read[node_id].edges()
            edges = self._cache[node_id] = NodeEdges(outgoing=every.outgoing[:limit], incoming=every.incoming[:limit])
        return edges

    # relation score

    def relation_scores(self, memory_ids: Sequence[str]) -> dict[str, RelationScore]:
        self._load(memory_ids)
        return {memory_id: self._relation(memory_id) for memory_id in memory_ids}

    def _relation(self, memory_id: str) -> RelationScore:
        """From the edges' types and strengths, as `_edges_of` cuts them, without validating the edges."""
        adjacency = self._read.get(memory_id)
        if adjacency is None:
            self._load([memory_id])
            adjacency = self._read[memory_id]
        return adjacency.relation(self._settings.graph.expand_edge_read_limit, self._score)

    # expansion

    def expand(self, query: RecallQuery, seeds: Sequence[RecallHit], score: ScoreReached) -> list[RecallHit]:
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
        self._load(seen)
        # The seeds' neighbours (the memories reached directly, whose relation scores need their edges, and the
        # pattern nodes a second hop goes through) in one read.
        self._load(other for seed in seen for _, other, _ in _neighbours(seed, self._edges_of(seed)))
        reaches = {seed.memory.id: self._reach(seed.memory.id, min_strength, seen) for seed in seeds}
        wanted = {r.memory_id for found in reaches.values() for r in found}
        # Another assistant's relational memory may be linked to a fact both read: it is not this assistant's to see.
        memories = {m.id: m for m in self._store.get_memories(self._scope, wanted) if m.visible_to(self._scope)}
        self._load(wanted)  # those reached through a pattern: their edges for their relation scores
        # As recall's own candidates: compressed memories are live; the rest is history, for include_archived.
        statuses = set(recalled_statuses(query.include_archived))
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
                    scored[memory.id] = score(memory, self._relation(memory.id))
                options.append((reach, scored[memory.id]))
            options.sort(key=lambda option: (option[0].preference, *rank_key(option[1])))
            for reach, hit in options[:per_seed]:
                if hit.memory.id in seen:
                    continue  # reached from a better seed already
                seen.add(hit.memory.id)
                step = reach.path[0]
                via = f"linked to {step.from_id} by {step.relation.value} ({step.direction.value})"
                expanded.append(
                    hit.model_copy(update={"path": list(reach.path), "match_reasons": [via, *hit.match_reasons]})
                )
        expanded.sort(key=rank_key)
        return expanded[:total]

    def _reach(self, seed_id: str, min_strength: float, seen: set[str]) -> list[_Reach]:
        """Neighbours of a seed; through a Pattern node, the other memories that exemplify it (one extra hop)."""
        found: dict[str, _Reach] = {}
        for step, other, edge in _neighbours(seed_id, self._edges_of(seed_id)):
            if edge.strength < min_strength:
                continue
            if is_pattern_id(other):
                pattern_edges = self._edges_of(other)
                for second, sibling, via in _neighbours(other, pattern_edges):
                    if sibling != seed_id and via.strength >= min_strength:
                        _keep(found, _Reach(sibling, (step, second), min(edge.strength, via.strength), 1))
                continue
            _keep(found, _Reach(other, (step,), edge.strength, _PREFERENCE.get(edge.type, 0)))
        return [r for r in found.values() if r.memory_id not in seen]


def _neighbours(node_id: str, edges: NodeEdges) -> Iterable[tuple[PathStep, str, Edge]]:
    for edge in edges.outgoing:
        yield PathStep(from_id=node_id, relation=edge.type, direction=Direction.OUTGOING), edge.target_id, edge
    for edge in edges.incoming:
        yield PathStep(from_id=node_id, relation=edge.type, direction=Direction.INCOMING), edge.source_id, edge


def _keep(found: dict[str, _Reach], reach: _Reach) -> None:
    """One way to each memory: the preferred kind of link, then the strongest."""
    current = found.get(reach.memory_id)
    if current is None or (reach.preference, -reach.strength) < (current.preference, -current.strength):
        found[reach.memory_id] = reach
