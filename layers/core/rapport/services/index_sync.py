"""Keeping the derived vector index in step with the store: stream changes applied one by one, or a full rebuild."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from rapport.domain.memory_changes import MemoryChange
from rapport.domain.models import Memory
from rapport.domain.rendering import search_text
from rapport.domain.scope import Scope
from rapport.errors import NotFoundError
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import VectorIndex


def indexed_view(memory: Memory) -> tuple[object, ...]:
    """What the index stores of a memory (both adapters): a change outside these fields leaves the entry as is."""
    return (
        memory.domain,
        memory.type,
        memory.status,
        search_text(memory),
        memory.created_at,
        tuple(memory.embedding or ()),
    )


class IndexSync:
    def __init__(self, index: VectorIndex, store: MemoryStore | None = None) -> None:
        self._index = index
        # Where the vector is read when a change carries none (DynamoDB keeps it in an item of its own, which a
        # change of the memory does not rewrite).
        self._store = store

    def apply(self, change: MemoryChange) -> bool:
        """Apply one change; True when the index was written. Idempotent, so a redelivered change is harmless."""
        if change.removed is not None:
            ref = change.removed
            # Erasures arrive here too: erase_user deletes every item, and each memory's removal is one change.
            self._index.delete(Scope(ref.tenant_id, ref.user_id), ref.memory_id)
            return True
        memory = change.memory
        assert memory is not None  # the validator guarantees it
        if change.previous is not None and indexed_view(change.previous) == indexed_view(memory):
            return False
        if memory.embedding is None and self._store is not None:
            try:
                stored = self._store.get_memory(memory.scope, memory.id)
            except NotFoundError:
                return False  # deleted since: its removal is a change of its own
            memory = memory.model_copy(update={"embedding": stored.embedding})
        # A memory without an embedding cannot be indexed: upsert raises, and the stream's failure handling (retry,
        # then the on-failure queue) makes that visible instead of leaving a silent gap. A vector written a moment
        # after its memory is found by that retry.
        self._index.upsert(memory)
        return True


class RebuildReport(BaseModel):
    indexed: int = 0
    skipped_without_embedding: int = 0


def rebuild_index(memories: Iterable[Memory], index: VectorIndex) -> RebuildReport:
    """Re-index every memory given (`store.iter_all_memories`): embeddings are stored in the table, so no model
    is called. Upserts are idempotent; entries of memories that no longer exist are not swept (see docs/deploy.md)."""
    report = RebuildReport()
    for memory in memories:
        if memory.embedding is None:
            report.skipped_without_embedding += 1
            continue
        index.upsert(memory)
        report.indexed += 1
    return report
