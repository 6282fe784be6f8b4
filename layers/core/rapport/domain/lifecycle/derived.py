"""How a memory made by a governance job (a compact or consolidated memory) is marked, and how to tell one."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from rapport.domain.models import Memory, MemoryStatus, Page

# The metadata key a derived memory carries: which operation made it, from which memories, with their provenance.
GOVERNANCE_KEY = "governance"


class Operation(StrEnum):
    COMPRESSION = "compression"
    CONSOLIDATION = "consolidation"


def derivation_of(memory: Memory) -> dict[str, Any] | None:
    marker = memory.metadata.get(GOVERNANCE_KEY)
    if isinstance(marker, dict) and marker.get("operation") in {op.value for op in Operation}:
        return marker
    return None


def is_derived(memory: Memory) -> bool:
    """A compact or consolidated memory is never compressed or merged again: a second pass would only shuffle
    summaries, and the first pass's result would not be stable (a job run twice must change nothing)."""
    return derivation_of(memory) is not None


def without_archived(
    fetch: Callable[[int, str | None], Page[Memory]], limit: int, cursor: str | None, include_archived: bool
) -> Page[Memory]:
    """A listing page that skips archived memories unless asked for them. Each read asks only for what the page still
    lacks, so the store's cursor always points just past the last memory read and none is skipped or repeated; a
    page may come back shorter than `limit` (with a cursor) when archived memories were skipped."""
    if include_archived:
        return fetch(limit, cursor)
    items: list[Memory] = []
    while True:
        page = fetch(limit - len(items), cursor)
        items.extend(m for m in page.items if m.status is not MemoryStatus.ARCHIVED)
        cursor = page.next_cursor
        if len(items) >= limit or cursor is None:
            return Page[Memory](items=items, next_cursor=cursor)
