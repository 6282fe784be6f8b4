"""Recall: hybrid search over one end user's memories, one use case read top to bottom (docs/recall.md)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from rapport.clock import Clock
from rapport.domain.lifecycle.decay import decayed_to
from rapport.domain.models import Memory, recalled_statuses
from rapport.domain.recall import (
    SCORE_PLACES,
    Placed,
    RecallHit,
    RecallQuery,
    RecallScoring,
    RelationScore,
    keeping_best_by_meaning,
    place_of,
    placed_order,
)
from rapport.domain.rendering import search_text
from rapport.domain.scope import Scope
from rapport.domain.scoring import RecallSignals, context_boosts, matched_terms, named_speakers, query_match
from rapport.domain.text import tokenize
from rapport.domain.vectors import cosine
from rapport.errors import InvalidInputError
from rapport.ports.embedder import Embedder
from rapport.ports.graph import MemoryGraph, RecallEdges
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import IndexQuery, VectorIndex
from rapport.settings import Settings


@dataclass(frozen=True)
class _Candidate:
    """A memory the index found for the query, with what the search itself says about it."""

    memory: Memory
    similarity: float  # cosine to the query
    keyword: float  # BM25 relative to the best keyword candidate, 0..1
    terms: tuple[str, ...]  # the query's words it contains


@dataclass(frozen=True)
class _Asked:
    """The query as one recall scores against it."""

    text: str
    vector: list[float]
    terms: int  # distinct query terms
    now: datetime


class Recall:
    def __init__(
        self,
        store: MemoryStore,
        index: VectorIndex,
        embedder: Embedder,
        settings: Settings,
        clock: Clock,
        graph: MemoryGraph | None = None,
    ) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder
        self._settings = settings
        self._clock = clock
        self._graph = graph
        self._scoring = RecallScoring.of(settings)

    def query_vector(self, query: str) -> list[float]:
        """The query's embedding as `recall` computes it: a caller recalling one text several ways embeds it once."""
        return self._embedder.embed([self._checked_text(query)])[0]

    def recall(self, scope: Scope, query: RecallQuery, *, vector: list[float] | None = None) -> list[RecallHit]:
        """The `limit` best memories for the query, then (`expand_relations`) what the graph reached from them.
        `vector` is the query's embedding when the caller has it already (`query_vector`)."""
        self._check_limit(query.limit)
        text = self._checked_text(query.query)
        if vector is None:
            vector = self._embedder.embed([text])[0]
        asked = _Asked(text=text, vector=vector, terms=len(dict.fromkeys(tokenize(text))), now=self._clock.now())
        candidates = self._candidates(scope, query, asked)
        signals = self._signals(candidates, asked)
        edges = self._graph.edges_for_recall(scope) if self._graph is not None else None
        if edges is not None:
            signals = self._with_relation(edges, signals, {c.memory.id: c.memory for c in candidates}, query.limit)
        hits = self._best(candidates, signals, query.limit)
        if edges is not None and query.expand_relations:
            hits += edges.expand(query, hits, lambda memory, relation: self._reached(memory, relation, asked))
        return hits

    def _best(self, candidates: list[_Candidate], signals: dict[str, RecallSignals], limit: int) -> list[RecallHit]:
        """The `limit` hits to return, boosts never burying a strong semantic match (`keeping_best_by_meaning`):
        ranked on scores alone, and only those returned built as hits."""
        memories = {c.memory.id: c.memory for c in candidates}
        weighed = {i: self._scoring.weighed(memories[i], s) for i, s in signals.items()}
        placed = placed_order(
            Placed(c.memory.id, self._scoring.score(weighed[c.memory.id]), round(c.similarity, SCORE_PLACES))
            for c in candidates
        )
        by_meaning = [c.memory.id for c in sorted(candidates, key=lambda c: (-c.similarity, c.memory.id))]
        settings = self._settings
        chosen = keeping_best_by_meaning(
            placed,
            limit,
            by_meaning,
            settings.recall_semantic_share,
            settings.recall_semantic_min_similarity,
            settings.recall_semantic_margin,
        )
        return [self._scoring.hit(memories[p.memory_id], weighed[p.memory_id]) for p in chosen]

    # validation

    def _check_limit(self, limit: int) -> None:
        if not 1 <= limit <= self._settings.max_page_size:
            raise InvalidInputError(f"limit must be between 1 and {self._settings.max_page_size}; got {limit}")

    def _checked_text(self, query: str) -> str:
        text = query.strip()
        if not text:
            raise InvalidInputError("query is empty: send the text to recall by")
        if len(text) > self._settings.max_content_chars:
            raise InvalidInputError(
                f"query has {len(text)} characters; the limit is {self._settings.max_content_chars}"
            )
        return text

    # candidates

    def _candidates(self, scope: Scope, query: RecallQuery, asked: _Asked) -> list[_Candidate]:
        """The `k` nearest by cosine and the `k` best by BM25, read from the store (the source of truth), less what
        the query's filters or a lagging index let through and what nothing ties to the query."""
        statuses = [s.value for s in recalled_statuses(query.include_archived)]
        pool = max(self._settings.recall_candidate_pool, query.limit * 4)
        index_query = IndexQuery(
            tenant_id=scope.tenant_id,
            user_id=scope.user_id,
            domains=query.domain.domains(),
            statuses=tuple(statuses),
            k=pool,
            agent_id=scope.agent_id,
        )
        # Keyword scores are read deeper than the pool (docs/recall.md): a memory found by meaning keeps its BM25
        # score when it ranks past the pool by keywords alone; only the pool's best by keywords become candidates.
        # Both searches go in one request to the index.
        found_by = self._index.hybrid_search(
            index_query, asked.vector, asked.text, keyword_k=max(pool, self._settings.recall_keyword_depth)
        )
        vector_hits = {h.memory_id: h.score for h in found_by.by_meaning}
        keyword_ranked = found_by.by_keywords
        keyword_hits = {h.memory_id: h.score for h in keyword_ranked}
        found = {*vector_hits, *(h.memory_id for h in keyword_ranked[:pool])}
        best_keyword = max(keyword_hits.values(), default=0.0)
        candidates: list[_Candidate] = []
        for stored in self._store.get_memories(scope, found):
            memory = decayed_to(stored, asked.now, self._settings.governance)  # scored and shown as of now
            if query.memory_type is not None and memory.type != query.memory_type:
                continue
            if memory.status.value not in statuses or not memory.visible_to(scope):
                continue  # the store decides, since a lagging index (a stream, another process) may not
            similarity = vector_hits.get(memory.id)
            if similarity is None:
                similarity = cosine(asked.vector, memory.embedding)  # a keyword-only candidate: its true cosine
            if similarity < query.min_similarity:
                continue
            terms = matched_terms(asked.text, search_text(memory))
            if similarity <= 0.0 and not terms:
                continue  # nothing ties it to the query: returning it would be noise
            keyword = keyword_hits.get(memory.id, 0.0) / best_keyword if best_keyword > 0 else 0.0
            candidates.append(_Candidate(memory, similarity, keyword, terms))
        return candidates

    # signals

    def _signals_of(self, candidate: _Candidate, asked: _Asked) -> RecallSignals:
        memory = candidate.memory
        return RecallSignals(
            similarity=candidate.similarity,
            keyword=candidate.keyword,
            matched_terms=candidate.terms,
            query_terms=asked.terms,
            age_days=(asked.now - (memory.occurred_at or memory.created_at)).total_seconds() / 86_400,
            importance=memory.importance,
            strength=memory.strength,  # decayed to now when the memory was read
        )

    def _signals(self, candidates: list[_Candidate], asked: _Asked) -> dict[str, RecallSignals]:
        """Each candidate's signals, then what its conversation adds, read from the candidates alone (answers,
        sittings, speakers, neighbours: docs/recall.md)."""
        own = {c.memory.id: self._signals_of(c, asked) for c in candidates}
        matches = {memory_id: query_match(s, self._settings.weights) for memory_id, s in own.items()}
        places = {c.memory.id: place_of(c.memory) for c in candidates}
        named = named_speakers(asked.text, {p.speaker for p in places.values() if p.speaker})
        boosts = context_boosts(matches, places, named, self._settings.recall_context)
        return {memory_id: replace(s, context=boosts[memory_id]) for memory_id, s in own.items()}

    def _with_relation(
        self, edges: RecallEdges, signals: dict[str, RecallSignals], memories: dict[str, Memory], limit: int
    ) -> dict[str, RecallSignals]:
        """The relation component of the `relation_score_pool` candidates that score best without it: edges cost
        reads, so they are read for the likeliest hits only, and not for one that cannot be returned whatever its
        edges: a full relation score adds at most its weight, so one that would stay below the `limit`-th best even
        then is left out (the `limit`-th best only rises when relation scores are added)."""
        by_score = sorted(signals, key=lambda memory_id: (-self._scoring.score(signals[memory_id]), memory_id))
        pool = by_score[: self._settings.graph.relation_score_pool]
        weighed = {i: self._scoring.score(self._scoring.weighed(memories[i], signals[i])) for i in signals}
        best = sorted(weighed.values(), reverse=True)
        cut = best[limit - 1] if len(best) >= limit else float("-inf")
        reach = self._settings.weights.relation
        relations = edges.relation_scores([i for i in pool if weighed[i] + reach >= cut])
        return {
            memory_id: _linked(s, relations[memory_id]) if memory_id in relations else s
            for memory_id, s in signals.items()
        }

    def _reached(self, memory: Memory, relation: RelationScore, asked: _Asked) -> RecallHit:
        """A memory expansion reached, scored as a candidate is, keyword part aside (BM25 did not rank it) and with
        no conversation context (that is read from the candidates)."""
        memory = decayed_to(memory, asked.now, self._settings.governance)
        candidate = _Candidate(
            memory,
            similarity=cosine(asked.vector, memory.embedding),
            keyword=0.0,
            terms=matched_terms(asked.text, search_text(memory)),
        )
        return self._scoring.hit(memory, _linked(self._signals_of(candidate, asked), relation))


def _linked(signals: RecallSignals, relation: RelationScore) -> RecallSignals:
    return replace(signals, relation=relation.score, linked_by=relation.edge_types)
