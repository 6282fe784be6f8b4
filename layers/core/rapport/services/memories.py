"""The memory service: remember, get, update, delete, list and recall one end user's memories."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel, Field

from rapport.clock import Clock
from rapport.domain.lifecycle.decay import effective_strength, reinforce
from rapport.domain.lifecycle.derived import without_archived
from rapport.domain.models import (
    DEFAULT_TYPE,
    TYPES_BY_DOMAIN,
    Domain,
    DomainFilter,
    Memory,
    MemoryPatch,
    MemoryStatus,
    Page,
    PrecedingMessage,
    Provenance,
    SourceKind,
    Tier,
)
from rapport.domain.relations import PathStep
from rapport.domain.rendering import search_text
from rapport.domain.scoring import (
    ContextBoost,
    MatchStrength,
    RecallSignals,
    TurnPlace,
    asks_question,
    context_boosts,
    context_reasons,
    hybrid_score,
    match_reasons,
    match_strength,
    matched_terms,
    named_speakers,
    query_match,
    relevance,
)
from rapport.domain.text import tokenize
from rapport.domain.vectors import cosine
from rapport.errors import ConflictError, InvalidInputError, NotFoundError, RapportError
from rapport.ids import new_id
from rapport.ports.embedder import Embedder
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import IndexQuery, VectorIndex
from rapport.services.embedding import embed_memories
from rapport.services.index_sync import indexed_view
from rapport.settings import Settings


class NewMemory(BaseModel):
    content: str
    domain: Domain
    type: str | None = None
    importance: float | None = Field(None, ge=0.0, le=1.0)
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    tier: Tier | None = None
    metadata: dict[str, Any] | None = None
    occurred_at: datetime | None = None
    source: Provenance = Field(default_factory=Provenance)
    in_reply_to: PrecedingMessage | None = None  # an episode's preceding message (InteractionService)


class RecallQuery(BaseModel):
    query: str
    domain: DomainFilter = DomainFilter.BOTH
    limit: int = Field(5, ge=1)
    min_similarity: float = Field(0.0, ge=-1.0, le=1.0)
    memory_type: str | None = None
    include_archived: bool = False
    # Graph expansion (issue 7, docs/graph.md): follow edges from the hits; None takes the graph settings' value.
    expand_relations: bool = False
    relation_limit: int | None = Field(None, ge=0, le=50)
    expansion_limit: int | None = Field(None, ge=0, le=200)
    expand_min_strength: float | None = Field(None, ge=0.0, le=1.0)
    expand_min_importance: float | None = Field(None, ge=0.0, le=1.0)


class RecallHit(BaseModel):
    memory: Memory
    similarity: float
    score: float
    match_strength: MatchStrength
    match_reasons: list[str]
    matched_terms: list[str]
    # Empty for a hit the query found; for one expansion reached, the edges followed from a seed hit to it.
    path: list[PathStep] = Field(default_factory=list)


# --- the relationship graph's hooks (issue 7: rapport/graph/hooks.py implements this) -----------------------------
class MemoryGraph(Protocol):
    def memories_stored(self, tenant_id: str, user_id: str, memories: list[Memory]) -> None:
        """After memories are stored and indexed (enrichment); must not raise for a stored memory."""

    def memory_deleted(self, tenant_id: str, user_id: str, memory_id: str) -> None:
        """After a memory is deleted: its edges go too."""

    def finish_recall(
        self,
        tenant_id: str,
        user_id: str,
        query: RecallQuery,
        hits: list[RecallHit],
        vector: list[float],
        now: datetime,
    ) -> list[RecallHit]:
        """Adds the relation component, ranks, cuts to the limit and appends what expansion reached."""


class MemoryService:
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

    # validation rules

    def _check_content(self, content: str) -> str:
        content = content.strip()
        if not content:
            raise InvalidInputError("content is empty: send the text of the memory")
        if len(content) > self._settings.max_content_chars:
            raise InvalidInputError(
                f"content has {len(content)} characters; the limit is {self._settings.max_content_chars}"
            )
        return content

    def _check_type(self, domain: Domain, memory_type: str | None) -> str:
        if memory_type is None:
            return DEFAULT_TYPE[domain]
        if memory_type not in TYPES_BY_DOMAIN[domain]:
            valid = ", ".join(sorted(TYPES_BY_DOMAIN[domain]))
            raise InvalidInputError(f"type {memory_type!r} is not a {domain.value} memory type; valid: {valid}")
        return memory_type

    def _check_metadata(self, metadata: dict[str, Any] | None) -> dict[str, Any]:
        if not metadata:
            return {}
        try:
            size = len(json.dumps(metadata).encode())
        except (TypeError, ValueError) as exc:
            raise InvalidInputError("metadata must be a JSON object") from exc
        if size > self._settings.max_metadata_bytes:
            raise InvalidInputError(f"metadata is {size} bytes; the limit is {self._settings.max_metadata_bytes}")
        return metadata

    # commands

    def build(self, tenant_id: str, user_id: str, new: NewMemory) -> Memory:
        """A validated, not yet embedded memory; lets callers validate a batch before writing any of it."""
        now = self._clock.now()
        importance = 0.5 if new.importance is None else new.importance
        return Memory(
            id=new_id(now),
            tenant_id=tenant_id,
            user_id=user_id,
            domain=new.domain,
            type=self._check_type(new.domain, new.type),
            content=self._check_content(new.content),
            importance=importance,
            confidence=1.0 if new.confidence is None else new.confidence,
            tier=new.tier or _tier_for(importance),
            metadata=self._check_metadata(new.metadata),
            source=new.source,
            in_reply_to=new.in_reply_to,
            created_at=now,
            updated_at=now,
            occurred_at=new.occurred_at,
            last_reinforced_at=now,
        )

    def remember(self, tenant_id: str, user_id: str, new: NewMemory) -> Memory:
        return self.remember_many(tenant_id, user_id, [self.build(tenant_id, user_id, new)])[0]

    def remember_many(self, tenant_id: str, user_id: str, memories: list[Memory]) -> list[Memory]:
        """Embed (one call), store, index. Embedding first: if the model fails, nothing has been written."""
        if not memories:
            return []
        vectors = embed_memories(self._embedder, memories, self._settings.episode_reply_weight)
        embedded = [m.model_copy(update={"embedding": v}) for m, v in zip(memories, vectors, strict=True)]
        self._store.register_user(tenant_id, user_id)
        written: list[Memory] = []
        try:
            for memory in embedded:
                self._store.put_memory(memory)
                written.append(memory)
                self._index.upsert(memory)
        except RapportError:
            # Keep store and index in step: undo this call's writes rather than leave half of them.
            for memory in written:
                self._forget_quietly(memory)
            raise
        if self._graph is not None:
            self._graph.memories_stored(tenant_id, user_id, embedded)  # graph (issue 7): enrichment
        return embedded

    def store_embedded(self, memory: Memory) -> Memory:
        """Write one new memory that is already embedded (the pipeline embeds a batch before placing it) to the store
        and the index. The graph hears of it through `announce_stored`, once per batch."""
        self._store.put_memory(memory)
        self._index.upsert(memory)
        return memory

    def announce_stored(self, tenant_id: str, user_id: str, memories: list[Memory]) -> None:
        """The graph links newly stored memories (enrichment); it never fails a write that has happened."""
        if self._graph is not None and memories:
            self._graph.memories_stored(tenant_id, user_id, memories)

    def save(self, updated: Memory, *, previous: Memory) -> Memory:
        """Write a changed memory over `previous`; the index is written only when what it holds changed (status,
        text, embedding), so a change of strength or associations costs no index request."""
        self._store.put_memory(updated)
        if updated.embedding and indexed_view(updated) != indexed_view(previous):
            self._index.upsert(updated)
        return updated

    def set_status(self, memory: Memory, status: MemoryStatus, now: datetime) -> Memory:
        """Archive (or restore) a memory: the index filters by status, so recall stops (or starts) seeing it at once."""
        return self.save(memory.model_copy(update={"status": status, "updated_at": now}), previous=memory)

    def rewrite(self, memory: Memory, change: Callable[[Memory], Memory | None], *, attempts: int = 4) -> Memory:
        """`change(current)` gives the memory to write (None: nothing to do). It is written only while the stored
        memory's `last_reinforced_at` is the one `current` has, so a concurrent reinforcement is never lost: on a
        conflict the memory is read again and `change` applied to what is stored now. Returns what was written (or
        the memory as read when there was nothing to do). NotFoundError when the memory is gone; ConflictError after
        `attempts` conflicts in a row (four in a row is a bug to hear about, not contention)."""
        current = memory
        for _ in range(attempts):
            updated = change(current)
            if updated is None:
                return current
            try:
                self._store.put_memory(updated, if_reinforced_at=current.last_reinforced_at)
            except ConflictError:
                current = self._store.get_memory(current.tenant_id, current.user_id, current.id)
                continue
            if updated.embedding and indexed_view(updated) != indexed_view(current):
                self._index.upsert(updated)
            return updated
        raise ConflictError(f"memory {memory.id} kept being reinforced concurrently; try again")

    def _forget_quietly(self, memory: Memory) -> None:
        try:
            self._index.delete(memory.tenant_id, memory.user_id, memory.id)
            self._store.delete_memory(memory.tenant_id, memory.user_id, memory.id)
        except RapportError:
            pass  # the index is derived; `rapport reindex` repairs what a failed undo leaves

    def get(self, tenant_id: str, user_id: str, memory_id: str) -> Memory:
        return self._store.get_memory(tenant_id, user_id, memory_id)

    def update(self, tenant_id: str, user_id: str, memory_id: str, patch: MemoryPatch) -> Memory:
        memory = self._store.get_memory(tenant_id, user_id, memory_id)
        changes: dict[str, Any] = {"updated_at": self._clock.now()}
        if patch.content is not None:
            changes["content"] = self._check_content(patch.content)
        if patch.type is not None:
            changes["type"] = self._check_type(memory.domain, patch.type)
        if patch.metadata is not None:
            changes["metadata"] = self._check_metadata(patch.metadata)
        for name in ("importance", "confidence", "tier", "status"):
            value = getattr(patch, name)
            if value is not None:
                changes[name] = value
        updated = memory.model_copy(update=changes)
        if "content" in changes and changes["content"] != memory.content:
            updated.embedding = embed_memories(self._embedder, [updated], self._settings.episode_reply_weight)[0]
        self._store.put_memory(updated)
        self._index.upsert(updated)
        return updated

    def delete(self, tenant_id: str, user_id: str, memory_id: str) -> None:
        self._store.delete_memory(tenant_id, user_id, memory_id)
        self._index.delete(tenant_id, user_id, memory_id)
        if self._graph is not None:
            self._graph.memory_deleted(tenant_id, user_id, memory_id)  # graph (issue 7): its edges, both ways

    def list_memories(
        self,
        tenant_id: str,
        user_id: str,
        *,
        domain: DomainFilter,
        memory_type: str | None,
        limit: int,
        cursor: str | None,
        include_archived: bool = False,
    ) -> Page[Memory]:
        self._check_limit(limit)
        # governance (issue 8): archived memories are listed only when asked for
        return without_archived(
            lambda size, after: self._store.list_memories(
                tenant_id, user_id, domains=domain.domains(), memory_type=memory_type, limit=size, cursor=after
            ),
            limit,
            cursor,
            include_archived,
        )

    def count(self, tenant_id: str, user_id: str) -> int:
        return self._store.count_memories(tenant_id, user_id)

    def reinforce(self, tenant_id: str, user_id: str, memory_ids: list[str], boost: float) -> list[Memory]:
        """Memories used in a reply grow stronger (bounded at 1.0) and count as reinforced now, which restarts
        their decay. The index is not touched: it holds no strength."""
        now = self._clock.now()
        reinforced: list[Memory] = []
        for memory in self._store.get_memories(tenant_id, user_id, dict.fromkeys(memory_ids)):
            # governance (issue 8): the boost adds to today's decayed strength, not to a stale stored one; written
            # over the value it was computed from, so a concurrent reinforcement is not lost
            try:
                updated = self.rewrite(
                    memory, lambda current: reinforce(current, now, boost, self._settings.governance)
                )
            except NotFoundError:
                continue  # deleted since it was read: nothing to reinforce
            reinforced.append(updated.without_embedding())
        return reinforced

    def _check_limit(self, limit: int) -> None:
        if not 1 <= limit <= self._settings.max_page_size:
            raise InvalidInputError(f"limit must be between 1 and {self._settings.max_page_size}; got {limit}")

    # recall

    def recall(self, tenant_id: str, user_id: str, query: RecallQuery) -> list[RecallHit]:
        self._check_limit(query.limit)
        text = query.query.strip()
        if not text:
            raise InvalidInputError("query is empty: send the text to recall by")
        if len(text) > self._settings.max_content_chars:
            raise InvalidInputError(
                f"query has {len(text)} characters; the limit is {self._settings.max_content_chars}"
            )
        statuses = [MemoryStatus.ACTIVE.value, MemoryStatus.COMPRESSED.value]  # governance: compact memories are live
        if query.include_archived:
            statuses += [s.value for s in MemoryStatus if s.value not in statuses]
        pool = max(self._settings.recall_candidate_pool, query.limit * 4)
        index_query = IndexQuery(
            tenant_id=tenant_id,
            user_id=user_id,
            domains=query.domain.domains(),
            statuses=tuple(statuses),
            k=pool,
        )
        vector = self._embedder.embed([text])[0]
        vector_hits = {h.memory_id: h.score for h in self._index.knn_search(index_query, vector)}
        # Keyword scores are read deeper than the pool (docs/recall.md): a memory found by meaning keeps its BM25
        # score when it ranks past the pool by keywords alone; only the pool's best by keywords become candidates.
        deeper = index_query.model_copy(update={"k": max(pool, self._settings.recall_keyword_depth)})
        keyword_ranked = self._index.keyword_search(deeper, text)
        keyword_hits = {h.memory_id: h.score for h in keyword_ranked}
        found = {*vector_hits, *(h.memory_id for h in keyword_ranked[:pool])}
        candidates = self._store.get_memories(tenant_id, user_id, found)
        best_keyword = max(keyword_hits.values(), default=0.0)
        now = self._clock.now()
        query_terms = len(dict.fromkeys(tokenize(text)))
        weights = self._settings.weights
        half_life = self._settings.recall_recency_half_life_days
        scored: list[tuple[Memory, float, RecallSignals]] = []
        for memory in candidates:
            if query.memory_type is not None and memory.type != query.memory_type:
                continue
            if memory.status.value not in statuses:
                continue  # governance: the store decides, since a lagging index (a stream, another process) may not
            similarity = vector_hits.get(memory.id)
            if similarity is None:
                similarity = cosine(vector, memory.embedding)
            if similarity < query.min_similarity:
                continue
            terms = matched_terms(text, search_text(memory))
            if similarity <= 0.0 and not terms:
                continue  # nothing ties it to the query: returning it would be noise
            signals = RecallSignals(
                similarity=similarity,
                keyword=keyword_hits.get(memory.id, 0.0) / best_keyword if best_keyword > 0 else 0.0,
                matched_terms=terms,
                query_terms=query_terms,
                age_days=(now - (memory.occurred_at or memory.created_at)).total_seconds() / 86_400,
                importance=memory.importance,
                strength=effective_strength(memory, now, self._settings.governance),  # governance: decayed to now
            )
            scored.append((memory, similarity, signals))
        # issue 6: a message is read in its conversation (answers, sittings, speakers): docs/recall.md
        boosts = self._context_boosts(text, scored)
        hits: list[RecallHit] = []
        for memory, similarity, signals in scored:
            boost = boosts[memory.id]
            hits.append(
                RecallHit(
                    memory=memory.without_embedding(),
                    similarity=round(similarity, 6),
                    score=round(hybrid_score(signals, weights, half_life) + boost.total, 6),
                    match_strength=match_strength(
                        relevance(signals, weights),
                        self._settings.strong_match_score,
                        self._settings.moderate_match_score,
                    ),
                    match_reasons=match_reasons(signals, half_life) + context_reasons(boost),
                    matched_terms=list(signals.matched_terms),
                )
            )
        if self._graph is not None:
            # Graph (issue 7): relation component, ranking and cut, then expansion along edges.
            return self._graph.finish_recall(tenant_id, user_id, query, hits, vector, now)
        hits.sort(key=lambda hit: (-hit.score, hit.memory.id))
        return hits[: query.limit]

    def _context_boosts(self, text: str, scored: list[tuple[Memory, float, RecallSignals]]) -> dict[str, ContextBoost]:
        matches = {memory.id: query_match(signals, self._settings.weights) for memory, _, signals in scored}
        places = {memory.id: _place_of(memory) for memory, _, _ in scored}
        named = named_speakers(text, {p.speaker for p in places.values() if p.speaker})
        return context_boosts(matches, places, named, self._settings.recall_context)


def _place_of(memory: Memory) -> TurnPlace:
    """A message's place in its conversation; a memory made from a conversation (pipeline) belongs to its sitting."""
    source = memory.source
    conversation = source.session_id or source.interaction_id
    if source.kind is not SourceKind.INTERACTION:
        return TurnPlace(conversation=conversation)
    return TurnPlace(
        conversation=conversation,
        interaction_id=source.interaction_id,
        message_index=source.message_index,
        speaker=source.speaker,
        asks=asks_question(memory.content),
    )


def _tier_for(importance: float) -> Tier:
    """The brief's formation rule: importance above 0.8 goes to long-term memory."""
    return Tier.LONG_TERM if importance > 0.8 else Tier.SHORT_TERM
