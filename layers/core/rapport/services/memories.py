"""The memory service: remember, get, update, delete and list one end user's memories, as their one writer."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from rapport.clock import Clock
from rapport.domain.lifecycle.decay import decayed_to, reinforce
from rapport.domain.lifecycle.derived import without_archived
from rapport.domain.lifecycle.tiers import tier_for
from rapport.domain.models import (
    DEFAULT_TYPE,
    TYPES_BY_DOMAIN,
    DateSpan,
    Domain,
    DomainFilter,
    Interaction,
    Memory,
    MemoryPatch,
    MemoryStatus,
    Page,
    PrecedingMessage,
    Provenance,
    Tier,
    Trust,
    trust_of,
)
from rapport.domain.scope import Scope
from rapport.domain.webhooks import OutboundEventType
from rapport.errors import ConflictError, InvalidInputError, NotFoundError, RapportError
from rapport.ids import new_id
from rapport.ports.embedder import Embedder
from rapport.ports.graph import MemoryGraph
from rapport.ports.items import ItemWrite
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import VectorIndex
from rapport.ports.webhooks import OutboundEvents
from rapport.services.assistants import AssistantDirectory
from rapport.services.embedding import embed_memories, embed_memories_with
from rapport.services.index_sync import indexed_view
from rapport.settings import Settings

logger = logging.getLogger(__name__)


class NewMemory(BaseModel):
    id: str | None = None  # fixed by the caller when retries must name it the same way (keyed requests, episodes)
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
    mentioned_dates: list[DateSpan] = Field(default_factory=list)  # its time phrases, resolved
    trust: Trust | None = None  # None: what the source implies (rapport.domain.models.trust_of)
    status: MemoryStatus = MemoryStatus.ACTIVE  # QUARANTINED for words that read as instructions to the assistant


class BatchItem(BaseModel):
    """One memory of a batch: stored (`memory`), or refused with the reason (`error`)."""

    index: int
    memory: Memory | None = None
    error: str | None = None


class MemoryService:
    def __init__(
        self,
        store: MemoryStore,
        index: VectorIndex,
        embedder: Embedder,
        settings: Settings,
        clock: Clock,
        graph: MemoryGraph | None = None,
        events: OutboundEvents | None = None,
        assistants: AssistantDirectory | None = None,
    ) -> None:
        self._events = events  # the tenant's webhooks hear of stored memories (ids only)
        self._assistants = assistants  # a named assistant's first write registers it with its tenant
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

    def build(self, scope: Scope, new: NewMemory) -> Memory:
        """A validated, not yet embedded memory; lets callers validate a batch before writing any of it."""
        now = self._clock.now()
        importance = 0.5 if new.importance is None else new.importance
        return Memory(
            id=new.id or new_id(now),
            tenant_id=scope.tenant_id,
            user_id=scope.user_id,
            domain=new.domain,
            type=self._check_type(new.domain, new.type),
            content=self._check_content(new.content),
            importance=importance,
            confidence=1.0 if new.confidence is None else new.confidence,
            tier=new.tier or _tier_for(importance, self._settings),
            metadata=self._check_metadata(new.metadata),
            source=new.source,
            trust=new.trust or trust_of(new.source),
            status=new.status,
            in_reply_to=new.in_reply_to,
            mentioned_dates=new.mentioned_dates,
            created_at=now,
            updated_at=now,
            occurred_at=new.occurred_at,
            last_reinforced_at=now,
            agent_id=scope.agent_id,
        )

    def remember(self, scope: Scope, new: NewMemory) -> Memory:
        return self.remember_many(scope, [self.build(scope, new)])[0]

    def remember_batch(self, scope: Scope, news: list[NewMemory]) -> list[BatchItem]:
        """Each memory validated on its own; the valid ones embedded in one call and written together (all of them,
        or none when a write fails). One result per memory sent, in order."""
        results: list[BatchItem] = []
        valid: list[Memory] = []
        for position, new in enumerate(news):
            try:
                valid.append(self.build(scope, new))
                results.append(BatchItem(index=position))
            except InvalidInputError as exc:
                results.append(BatchItem(index=position, error=str(exc)))
        stored = iter(self.remember_many(scope, valid))
        return [r if r.error else r.model_copy(update={"memory": next(stored).without_embedding()}) for r in results]

    def remember_many(self, scope: Scope, memories: list[Memory]) -> list[Memory]:
        """Embed (one call), store, index, then tell the graph. Embedding first: if the model fails, nothing has been
        written; a failure of any kind while writing takes this call's writes back before it is raised."""
        if not memories:
            return []
        embedded = self._write_embedded(scope, self.embedded(memories))
        self.announce_stored(scope, embedded)
        return embedded

    def restore_many(self, scope: Scope, memories: list[Memory]) -> list[Memory]:
        """`remember_many` for memories brought back from an export under their ids: the same writes, and the graph
        is not told, as their links come with them (enrichment would add others beside)."""
        if not memories:
            return []
        return self._write_embedded(scope, self.embedded(memories))

    def _write_embedded(self, scope: Scope, embedded: list[Memory]) -> list[Memory]:
        self._store.register_user(scope)
        self.note_assistant(scope)
        written: list[Memory] = []
        try:
            for memory in embedded:
                self._store.put_memory(memory)
                written.append(memory)
                self._index.upsert(memory)
        except Exception:
            for memory in written:
                self._forget_quietly(memory)
            raise
        return embedded

    def embedded(self, memories: list[Memory]) -> list[Memory]:
        """The memories with their vectors, from one embedder call; nothing is written."""
        return self.embedded_with(memories, ())[0]

    def embedded_with(self, memories: list[Memory], also: Sequence[str]) -> tuple[list[Memory], list[list[float]]]:
        """`embedded`, and the vectors of `also` (texts a later step will embed) from the same call."""
        vectors, extra = embed_memories_with(self._embedder, memories, self._settings.episode_reply_weight, also)
        return [m.model_copy(update={"embedding": v}) for m, v in zip(memories, vectors, strict=True)], extra

    def remember_interaction(
        self,
        interaction: Interaction,
        episodes: list[Memory],
        *,
        with_items: Sequence[ItemWrite] = (),
        known_user: bool = False,
        undo_items: Callable[[], None] | None = None,
    ) -> None:
        """The history item, its (embedded) episodes, the registration and `with_items` in one atomic store write
        (`MemoryStore.put_interaction`), then the episodes indexed; an index failure takes the write back, the items
        through `undo_items`. The graph hears of the episodes through `announce_stored`."""
        self._store.put_interaction(interaction, episodes, with_items=with_items, known_user=known_user)
        try:
            for memory in episodes:
                self._index.upsert(memory)
        except Exception:
            self.forget_interaction(interaction)
            if undo_items is not None:
                undo_items()
            raise

    def forget_interaction(self, interaction: Interaction) -> None:
        """Undo `remember_interaction` (a later step of the request failed): index entries, episodes, history item."""
        for memory_id in interaction.memory_ids:
            # The index is derived: `rapport reindex` repairs what a failed undo leaves there.
            with contextlib.suppress(RapportError):
                self._index.delete(interaction.scope, memory_id)
        self._store.remove_interaction(interaction)

    def store_embedded(self, memory: Memory) -> Memory:
        """Write one new memory that is already embedded (the pipeline embeds a batch before placing it) to the store
        and the index. The graph hears of it through `announce_stored`, once per batch."""
        self._store.put_memory(memory)
        self._index.upsert(memory)
        return memory

    def announce_stored(self, scope: Scope, memories: list[Memory]) -> None:
        """The graph links newly stored memories (enrichment). Links are derived and a later enrichment run can still
        add them, so no failure here, of any kind, turns a stored write into a failed request. The tenant's
        webhooks hear of them too (`memory.stored`: ids and a count, never the text), under the same policy."""
        if not memories:
            return
        if self._events is not None:
            data = {"user_id": scope.user_id, "memory_ids": [m.id for m in memories], "count": len(memories)}
            self._events.emit(scope.tenant_id, OutboundEventType.MEMORY_STORED, data)
        if self._graph is None:
            return
        try:
            self._graph.memories_stored(scope, memories)
        except Exception:
            logger.warning("enrichment failed; the memories are stored without links", exc_info=True)

    def save(self, updated: Memory, *, previous: Memory) -> Memory:
        """Write a changed memory over `previous`; the index is written only when what it holds changed (status,
        text, embedding), so a change of strength or associations costs no index request. Without a new embedding
        (`updated` has none, or the one `previous` has) the stored vector stays and is not written again."""
        if _new_embedding(updated, previous):
            self._store.put_memory(updated)
        else:
            self._store.update_memory(updated)
        self._index_if_changed(updated, previous)
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
            write = self._store.put_memory if _new_embedding(updated, current) else self._store.update_memory
            try:
                write(updated, if_reinforced_at=current.last_reinforced_at)
            except ConflictError:
                current = self._store.get_memory(current.scope, current.id)
                continue
            self._index_if_changed(updated, current)
            return updated
        raise ConflictError(f"memory {memory.id} kept being reinforced concurrently; try again")

    def _index_if_changed(self, updated: Memory, previous: Memory) -> None:
        """Upsert the index entry when what it holds changed. A memory read from a listing carries no vector, which
        the index needs: it is read then, and only then (a change of status or text, never one of strength)."""
        unchanged = indexed_view(updated.without_embedding()) == indexed_view(previous.without_embedding())
        if unchanged and not _new_embedding(updated, previous):
            return
        vector = updated.embedding if updated.embedding is not None else previous.embedding
        if vector is None:
            try:
                vector = self._store.get_memory(updated.scope, updated.id).embedding
            except NotFoundError:
                return  # deleted since: nothing to index
        if vector:
            self._index.upsert(updated.model_copy(update={"embedding": vector}))

    def _forget_quietly(self, memory: Memory) -> None:
        try:
            self._index.delete(memory.scope, memory.id)
            self._store.delete_memory(memory.scope, memory.id)
        except RapportError:
            pass  # the index is derived; `rapport reindex` repairs what a failed undo leaves

    def note_assistant(self, scope: Scope) -> None:
        """A named assistant writing for the first time in this process is registered with its tenant."""
        if self._assistants is not None:
            self._assistants.note(scope)

    def _visible(self, scope: Scope, memory_id: str) -> Memory:
        """The memory as this assistant may see it: another assistant's relational memory is not found, as a memory
        of another person would not be."""
        memory = self._store.get_memory(scope, memory_id)
        if not memory.visible_to(scope):
            raise NotFoundError(f"memory {memory_id} not found")
        return memory

    def get(self, scope: Scope, memory_id: str) -> Memory:
        """The memory as of now: its strength decayed since it was stored (docs/governance.md)."""
        return self.as_of_now(self._visible(scope, memory_id))

    def as_of_now(self, memory: Memory) -> Memory:
        """What a reader is shown: the stored strength decayed to the clock's now."""
        return decayed_to(memory, self._clock.now(), self._settings.governance)

    def update(self, scope: Scope, memory_id: str, patch: MemoryPatch) -> Memory:
        memory = self._visible(scope, memory_id)
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
            vector = embed_memories(self._embedder, [updated], self._settings.episode_reply_weight)[0]
            updated = updated.model_copy(update={"embedding": vector})
        return self.as_of_now(self.save(updated, previous=memory))

    def delete(self, scope: Scope, memory_id: str) -> None:
        self._visible(scope, memory_id)
        self._store.delete_memory(scope, memory_id)
        self._index.delete(scope, memory_id)
        if self._graph is not None:
            self._graph.memory_deleted(scope, memory_id)  # its edges, both ways

    def list_memories(
        self,
        scope: Scope,
        *,
        domain: DomainFilter,
        memory_type: str | None,
        limit: int,
        cursor: str | None,
        include_archived: bool = False,
    ) -> Page[Memory]:
        self._check_limit(limit)
        # archived memories are listed only when asked for
        page = without_archived(
            lambda size, after: self._store.list_memories(
                scope,
                domains=domain.domains(),
                memory_type=memory_type,
                limit=size,
                cursor=after,
            ),
            limit,
            cursor,
            include_archived,
        )
        return page.model_copy(update={"items": [self.as_of_now(m) for m in page.items]})

    def count(self, scope: Scope) -> int:
        return self._store.count_memories(scope)

    def reinforce(self, scope: Scope, memory_ids: list[str], boost: float) -> list[Memory]:
        """Memories used in a reply grow stronger (bounded at 1.0) and count as reinforced now, which restarts
        their decay. The index is not touched: it holds no strength."""
        now = self._clock.now()
        reinforced: list[Memory] = []
        for memory in self._store.get_memories(scope, dict.fromkeys(memory_ids)):
            if not memory.visible_to(scope):
                continue  # another assistant's relational memory: not this one's to reinforce
            # the boost adds to today's decayed strength, not to a stale stored one; written
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


def _new_embedding(updated: Memory, previous: Memory) -> bool:
    """Whether a write must carry the vector: `updated` has one, and it is not the one `previous` was read with."""
    return updated.embedding is not None and updated.embedding != previous.embedding


def _tier_for(importance: float, settings: Settings) -> Tier:
    """A memory a client stores has no session to live in, so the formation rule keeps it at least short-term: the
    client asked for it to be stored."""
    return tier_for(
        importance,
        in_session=False,
        long_term_above=settings.pipeline_long_term_importance,
        short_term_above=settings.pipeline_short_term_importance,
    )
