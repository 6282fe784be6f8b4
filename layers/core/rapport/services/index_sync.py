"""Keeping the derived vector index in step with the store: stream changes applied one by one, or a full rebuild."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from rapport.domain.memory_changes import MemoryChange
from rapport.domain.models import Memory
from rapport.domain.rendering import search_text
from rapport.domain.scope import Scope
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
    def __init__(self, index: VectorIndex) -> None:
        self._index = index

    def apply(self, change: MemoryChange) -> bool:
        """Apply one change; True when the index was written. Idempotent, so a redelivered change is harmless."""
        if change.removed is not None:
            ref = change.removed
            # Erasures arrive here too: erase_user deletes every item, and each memory's removal is one change.
            self._index.delete(Scope(ref.tenant_id, ref.user_id), ref.memory_id)
            return True
        assert change.memory is not None  # the validator guarantees it
        if change.previous is not None and indexed_view(change.previous) == indexed_view(change.memory):
            return False
        # A memory without an embedding cannot be indexed: upsert raises, and the stream's failure handling (retry,
        # then the on-failure queue) makes that visible instead of leaving a silent gap.
        self._index.upsert(change.memory)
        return True


class RebuildReport(BaseModel):
    indexed: int = 0
    skipped_without_embedding: int = 0


def rebuild_index(memories: Iterable[Memory], index: VectorIndex) -> RebuildReport:
    """Re-index every memory given (`store.iter_all_memories`): embeddings are stored with the item, so no model
    is called. Upserts are idempotent; entries of memories that no longer exist are not swept (see docs/deploy.md)."""
    report = RebuildReport()
    for memory in memories:
        if memory.embedding is None:
            report.skipped_without_embedding += 1
            continue
        index.upsert(memory)
        report.indexed += 1
    return report
