"""Automatic enrichment after memories are stored: PRECEDED_BY, SIMILAR_TO, and EXEMPLIFIES links to Pattern nodes."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from rapport.clock import Clock
from rapport.domain.models import Domain, Memory, MemoryStatus, UserMemoryType
from rapport.domain.relations import Edge, EdgeType, EnrichmentType, RelationType
from rapport.domain.scope import Scope
from rapport.domain.text import term_set
from rapport.graph.patterns import (
    PATTERN_PREFIX,
    PATTERN_TYPE,
    Pattern,
    PatternRepository,
    key_terms,
    pattern_confidence,
    pattern_id,
)
from rapport.ports.items import ItemPut
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import IndexQuery, VectorIndex
from rapport.services.edges import EdgeRepository
from rapport.settings import GraphSettings

_ALL_DOMAINS = (Domain.USER, Domain.RELATIONAL)
_ACTIVE = (MemoryStatus.ACTIVE.value,)


# The event a writer publishes in `event` mode, and the enrichment function's rule matches (infra/constructs/graph.py).
ENRICHMENT_SOURCE = "rapport.graph"
MEMORIES_STORED = "Memories Stored"


class EnrichmentRequest(BaseModel):
    """What the asynchronous enrichment function receives (the `detail` of an EventBridge event, or a direct call)."""

    tenant_id: str = Field(min_length=1)
    user_id: str = Field(min_length=1)
    memory_ids: list[str] = Field(min_length=1, max_length=500)

    @property
    def scope(self) -> Scope:
        return Scope(tenant_id=self.tenant_id, user_id=self.user_id)


class EnrichmentOutcome(BaseModel):
    """How many edges of each type one enrichment run wrote (an edge written again counts again)."""

    preceded_by: int = 0
    similar_to: int = 0
    exemplifies: int = 0
    patterns: list[str] = Field(default_factory=list)
    skipped: int = 0  # memories left alone: missing, not active, or episodes when episodes are not enriched

    def edges(self) -> int:
        return self.preceded_by + self.similar_to + self.exemplifies

    def add(self, other: EnrichmentOutcome) -> None:
        self.preceded_by += other.preceded_by
        self.similar_to += other.similar_to
        self.exemplifies += other.exemplifies
        self.patterns = sorted({*self.patterns, *other.patterns})
        self.skipped += other.skipped


def _when(memory: Memory) -> datetime:
    return memory.occurred_at or memory.created_at


def _is_episode(memory: Memory) -> bool:
    return memory.type == UserMemoryType.EPISODE.value


def preceding(
    batch: Sequence[Memory], earlier: Sequence[Memory], window: timedelta, limit: int
) -> list[tuple[Memory, Memory]]:
    """(memory, one that precedes it) for each batch member, up to `limit` each, nearest first: a memory stored
    before the batch (`earlier`) or earlier in it, within `window` before it. Memories stored before the batch
    precede a batch member of the same time; within the batch, order decides. Among equal times the one stored
    last comes first (in a conversation, the previous message), then the one created last, then `earlier` order.

    All candidates sorted once, oldest first, so each member's predecessors are the ones just before its place:
    a batch costs a sort and a short walk back per member, not a pass over every candidate per member."""
    position = {m.id: i for i, m in enumerate(batch)}
    candidates = [*earlier, *batch]
    # Walking back over this order meets candidates nearest first, equal keys in their order in `candidates`.
    order = sorted(
        range(len(candidates)),
        key=lambda i: (_when(candidates[i]), position.get(candidates[i].id, -1), candidates[i].created_at, -i),
    )
    ranked = [candidates[i] for i in order]
    places = [(_when(c), position.get(c.id, -1)) for c in ranked]
    pairs: list[tuple[Memory, Memory]] = []
    for memory in batch:
        when = _when(memory)
        # Everything before (when, own position) precedes it: earlier times, and its own time stored before it.
        spot = bisect.bisect_left(places, (when, position[memory.id]))
        found = 0
        while spot > 0 and found < limit:
            spot -= 1
            previous = ranked[spot]
            if _when(previous) < when - window:
                break
            if previous.id != memory.id:
                pairs.append((memory, previous))
                found += 1
    return pairs


class Enricher:
    """Every write is an upsert on a deterministic key, so enriching the same memories twice changes nothing.
    Reads are bounded: one page of recent memories, one read of vectors from the index, one batched k-NN request
    for the batch, one keyword query per key term."""

    def __init__(
        self,
        store: MemoryStore,
        index: VectorIndex,
        edges: EdgeRepository,
        patterns: PatternRepository,
        settings: GraphSettings,
        clock: Clock,
    ) -> None:
        self._store = store
        self._index = index
        self._edges = edges
        self._patterns = patterns
        self._settings = settings
        self._clock = clock

    def recount_pattern(self, scope: Scope, node_id: str) -> Pattern | None:
        """A pattern's occurrences and confidence from the memories that still exemplify it (after one is deleted).
        Below the minimum its confidence is 0: kept, so a later memory with the term revives it with its history."""
        term = node_id.removeprefix(PATTERN_PREFIX)
        existing = self._patterns.get(scope, term)
        if existing is None:
            return None
        occurrences = len(self._edges.incoming(scope, node_id, RelationType.EXEMPLIFIES))
        settings = self._settings
        recounted = existing.model_copy(
            update={
                "occurrences": occurrences,
                "exemplars": occurrences,
                "confidence": pattern_confidence(
                    occurrences, settings.pattern_min_occurrences, settings.pattern_full_confidence
                ),
                "updated_at": self._clock.now(),
            }
        )
        return self._patterns.put(scope, term, recounted)

    def enrich(self, scope: Scope, memory_ids: Sequence[str]) -> EnrichmentOutcome:
        """The asynchronous entry point (the enrichment function in AWS): re-reads the memories, in the given order.
        Just stored, they are usually on the page of recent memories PRECEDED_BY reads anyway; the others are read by
        id. The page carries no vectors: SIMILAR_TO takes those from the index (`_Run.vectors`)."""
        recent = self._recent(scope)
        wanted = set(memory_ids)
        found = {m.id: m for m in recent if m.id in wanted}
        missing = [i for i in dict.fromkeys(memory_ids) if i not in found]
        if missing:
            found.update((m.id, m) for m in self._store.get_memories(scope, missing))
        outcome = self._enrich(scope, [found[i] for i in memory_ids if i in found], recent)
        outcome.skipped += len(set(memory_ids) - set(found))
        return outcome

    def enrich_memories(self, scope: Scope, batch: Sequence[Memory]) -> EnrichmentOutcome:
        """`batch`: memories just stored together, in the order they were stored (it orders equal times)."""
        return self._enrich(scope, batch, None)

    def _recent(self, scope: Scope) -> list[Memory]:
        limit = self._settings.enrich_candidate_limit
        return list(self._store.list_memories(scope, domains=_ALL_DOMAINS, limit=limit).items)

    def _enrich(self, scope: Scope, batch: Sequence[Memory], recent: list[Memory] | None) -> EnrichmentOutcome:
        """Reads what it needs (one page of recent memories, the batch's vectors from the index in one request, the
        few others by id in one read, the patterns in one read), then writes every edge and pattern of the batch in
        one write."""
        settings = self._settings
        chosen = [
            m for m in batch if m.status is MemoryStatus.ACTIVE and (settings.enrich_episodes or not _is_episode(m))
        ]
        outcome = EnrichmentOutcome(skipped=len(batch) - len(chosen))
        if not chosen:
            return outcome
        now = self._clock.now()
        if recent is None:
            recent = self._recent(scope) if settings.preceded_by_limit > 0 else []
        run = _Run(self._store, self._index, scope, recent)
        run.know(chosen)
        outcome.preceded_by = self._link_preceding(run, chosen, now)
        outcome.similar_to = self._link_similar(run, chosen, now)
        outcome.add(self._link_patterns(run, [m for m in chosen if not _is_episode(m)], now))
        self._edges.put_many(scope, run.edges, with_items=run.patterns)
        return outcome

    # PRECEDED_BY

    def _link_preceding(self, run: _Run, batch: Sequence[Memory], now: datetime) -> int:
        settings = self._settings
        if settings.preceded_by_limit == 0:
            return 0
        window = timedelta(hours=settings.preceded_by_window_hours)
        batch_ids = {m.id for m in batch}
        earlier = [m for m in run.recent if m.id not in batch_ids and self._eligible(m)]
        written = 0
        for memory, previous in preceding(batch, earlier, window, settings.preceded_by_limit):
            gap = (_when(memory) - _when(previous)).total_seconds()
            strength = max(0.0, 1.0 - gap / window.total_seconds())
            run.link(memory.id, EnrichmentType.PRECEDED_BY, previous.id, now, strength, {"time_gap": gap})
            written += 1
        return written

    def _eligible(self, memory: Memory) -> bool:
        return memory.status is MemoryStatus.ACTIVE and (self._settings.enrich_episodes or not _is_episode(memory))

    # SIMILAR_TO

    def _link_similar(self, run: _Run, batch: Sequence[Memory], now: datetime) -> int:
        settings = self._settings
        if settings.similar_to_limit == 0:
            return 0
        query = IndexQuery(
            tenant_id=run.scope.tenant_id,
            user_id=run.scope.user_id,
            domains=_ALL_DOMAINS,
            statuses=_ACTIVE,
            k=settings.similar_to_limit + 1,
        )
        vectors = run.vectors(batch)
        searched = [memory.id for memory in batch if vectors.get(memory.id)]
        # The whole batch in one request: the index passes over its entries once for the batch, not once a memory.
        found = self._index.knn_search_many(
            query, [vectors[memory_id] for memory_id in searched], min_score=settings.similar_to_min_similarity
        )
        hits_of = {
            memory_id: [h for h in hits if h.memory_id != memory_id]
            for memory_id, hits in zip(searched, found, strict=True)
        }
        if not settings.enrich_episodes:
            known = run.memories({h.memory_id for hits in hits_of.values() for h in hits})
            hits_of = {
                memory_id: [h for h in hits if h.memory_id in known and not _is_episode(known[h.memory_id])]
                for memory_id, hits in hits_of.items()
            }
        written = 0
        for memory_id, hits in hits_of.items():
            for hit in hits[: settings.similar_to_limit]:
                score = round(hit.score, 4)
                run.link(
                    memory_id,
                    EnrichmentType.SIMILAR_TO,
                    hit.memory_id,
                    now,
                    min(1.0, max(0.0, score)),
                    {"similarity_score": min(1.0, score)},
                )
                written += 1
        return written

    # EXEMPLIFIES -> Pattern

    def _link_patterns(self, run: _Run, batch: Sequence[Memory], now: datetime) -> EnrichmentOutcome:
        settings = self._settings
        outcome = EnrichmentOutcome()
        if settings.pattern_max_terms == 0 or not batch:
            return outcome
        terms_of = {m.id: key_terms(m.content, settings.pattern_max_terms) for m in batch}
        query = IndexQuery(
            tenant_id=run.scope.tenant_id,
            user_id=run.scope.user_id,
            domains=_ALL_DOMAINS,
            statuses=_ACTIVE,
            k=settings.pattern_candidate_limit,
        )
        hits_of = {
            term: [h.memory_id for h in self._index.keyword_search(query, term)]
            for term in dict.fromkeys(t for terms in terms_of.values() for t in terms)
        }
        hits_of = {term: ids for term, ids in hits_of.items() if len(ids) >= settings.pattern_min_occurrences}
        existing_of = self._patterns.get_many(run.scope, list(hits_of)) if hits_of else {}
        # A pattern that holds all the memories it may is left as it is: none of its term's memories are read, and
        # nothing is written for it, so what a memory costs stops growing with the memories that share its words.
        hits_of = {
            term: ids
            for term, ids in hits_of.items()
            if term not in existing_of or (existing_of[term].exemplars or 0) < settings.pattern_exemplar_limit
        }
        candidates = run.memories({i for ids in hits_of.values() for i in ids} | {m.id for m in batch})
        members_of: dict[str, list[Memory]] = {}
        for term, ids in hits_of.items():
            # The keyword index may match a longer word or the rendered date; only the memory's own words count.
            members = [
                candidates[i]
                for i in dict.fromkeys(ids)
                if i in candidates and not _is_episode(candidates[i]) and term in term_set(candidates[i].content)
            ]
            if len(members) >= settings.pattern_min_occurrences:
                members_of[term] = members
        for term, members in members_of.items():
            confidence = pattern_confidence(
                len(members), settings.pattern_min_occurrences, settings.pattern_full_confidence
            )
            existing = existing_of.get(term)
            # A new pattern gathers every memory that shows it; later, only the memories that carry the term, while
            # the pattern has room for them.
            linked = members if existing is None else [m for m in members if m.id in terms_of]
            already = 0 if existing is None else (existing.exemplars or existing.occurrences)
            linked = linked[: max(0, settings.pattern_exemplar_limit - already)]
            pattern = Pattern(
                id=pattern_id(term),
                key_terms=[term],
                occurrences=len(members),
                exemplars=already + len(linked),
                confidence=confidence,
                created_at=existing.created_at if existing else now,
                updated_at=now,
            )
            run.patterns.append(self._patterns.write(term, pattern))
            outcome.patterns.append(pattern.id)
            for memory in linked:
                run.link(
                    memory.id,
                    RelationType.EXEMPLIFIES,
                    pattern.id,
                    now,
                    confidence,
                    {"pattern_type": PATTERN_TYPE, "confidence": confidence, "key_terms": [term]},
                )
                outcome.exemplifies += 1
        return outcome


class _Run:
    """What one enrichment run has read (memories by id, so none is read twice) and the writes it gathers."""

    def __init__(self, store: MemoryStore, index: VectorIndex, scope: Scope, recent: list[Memory]) -> None:
        self._store = store
        self._index = index
        self.scope = scope
        self.recent = recent
        self._known: dict[str, Memory] = {m.id: m for m in recent}
        self.edges: list[Edge] = []
        self.patterns: list[ItemPut] = []

    def know(self, memories: Iterable[Memory]) -> None:
        self._known.update((m.id, m) for m in memories)

    def memories(self, ids: Iterable[str]) -> dict[str, Memory]:
        """The memories among `ids` that exist; those not read yet, in one read."""
        wanted = set(ids)
        missing = [i for i in wanted if i not in self._known]
        if missing:
            self.know(self._store.get_memories(self.scope, missing))
        return {i: self._known[i] for i in wanted if i in self._known}

    def vectors(self, batch: Sequence[Memory]) -> dict[str, list[float]]:
        """The vectors to search with, by memory id: a memory's own when it carries one (a batch stored in process);
        otherwise the index's, all in one request, since every memory is indexed before the graph hears of it. A
        memory the index does not hold yet (an index that lags the store) is read from the store, by id; one without
        a vector anywhere is left out."""
        vectors = {m.id: m.embedding for m in batch if m.embedding is not None}
        lacking = [m.id for m in batch if m.embedding is None]
        if lacking:
            vectors.update(self._index.vectors(self.scope, lacking))
        lagging = [i for i in lacking if i not in vectors]
        if lagging:
            read = self._store.get_memories(self.scope, lagging)
            vectors.update((m.id, m.embedding) for m in read if m.embedding is not None)
        return vectors

    def link(
        self,
        source_id: str,
        relation: EdgeType,
        target_id: str,
        at: datetime,
        strength: float,
        properties: dict[str, object],
    ) -> None:
        edge = Edge(
            source_id=source_id,
            target_id=target_id,
            type=relation,
            strength=strength,
            timestamp=at,
            properties=properties,
        )
        self.edges.append(edge)
