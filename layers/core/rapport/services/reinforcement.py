"""Reinforcing a memory without losing a concurrent reinforcement: write only what was computed from the stored
value, and compute again when someone reinforced it in between."""

from __future__ import annotations

from collections.abc import Callable

from rapport.domain.models import Memory
from rapport.errors import ConflictError
from rapport.ports.store import MemoryStore

ATTEMPTS = 4  # two pipelines reinforcing one memory at one instant is rare; four in a row is a bug to hear about


def rewrite_reinforced(
    store: MemoryStore, memory: Memory, change: Callable[[Memory], Memory | None], *, attempts: int = ATTEMPTS
) -> Memory:
    """`change(current)` gives the memory to write (None: nothing to do). It is written only while the stored
    memory's `last_reinforced_at` is the one `current` has; on a conflict the memory is read again and `change`
    applied to what is stored now. Returns what was written (or the memory as read when there was nothing to do).
    NotFoundError when the memory is gone; ConflictError after `attempts` conflicts in a row."""
    current = memory
    for _ in range(attempts):
        updated = change(current)
        if updated is None:
            return current
        try:
            store.put_memory(updated, if_reinforced_at=current.last_reinforced_at)
        except ConflictError:
            current = store.get_memory(current.tenant_id, current.user_id, current.id)
            continue
        return updated
    raise ConflictError(f"memory {memory.id} kept being reinforced concurrently; try again")
