"""Helpers of the governance tests: services over either store, memories made as of any moment, injected failures."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, Memory, MemoryStatus, Provenance
from rapport.domain.relations import RelationType
from rapport.domain.scope import Scope
from rapport.errors import StorageError
from rapport.ids import new_id
from rapport.ports.store import MemoryStore
from rapport.settings import EmbedderKind, EnrichmentMode, GraphSettings, PipelineMode, Settings

DIMENSIONS = 256
T, U = "tenant-a", "user-1"


def governance_settings(tmp_path: Path, **overrides: Any) -> Settings:
    # The pipeline is off: these tests are about what governance does to memories, not what extraction adds.
    # Enrichment is inline, so no background link write lands inside a measured window.
    overrides.setdefault("graph", GraphSettings(enrichment=EnrichmentMode.INLINE))
    return Settings(
        data_dir=tmp_path / "data",
        embedder=EmbedderKind.HASHING,
        hashing_dimensions=DIMENSIONS,
        pipeline=PipelineMode.OFF,
        **overrides,
    )


def services_over(store: MemoryStore, tmp_path: Path, clock: FixedClock, **overrides: Any) -> Services:
    settings = governance_settings(tmp_path, **overrides)
    index = EmbeddedVectorIndex(tmp_path / f"vectors-{id(store)}.sqlite3", DIMENSIONS)
    return build_services(settings, clock=clock, store=store, index=index, embedder=HashingEmbedder(DIMENSIONS))


def put(
    services: Services,
    content: str,
    *,
    at: datetime,
    domain: Domain = Domain.USER,
    memory_type: str | None = None,
    strength: float = 1.0,
    reinforced: datetime | None = None,
    embedding: list[float] | None = None,
    user: str = U,
    **fields: Any,
) -> Memory:
    """A memory made at `at` (embedded by the service, or with the vector given), stored and indexed."""
    memory = Memory(
        id=new_id(at),
        tenant_id=T,
        user_id=user,
        domain=domain,
        type=memory_type or ("fact" if domain is Domain.USER else "working_style"),
        content=content,
        strength=strength,
        created_at=at,
        updated_at=at,
        last_reinforced_at=reinforced or at,
        source=fields.pop("source", Provenance()),
        **fields,
    )
    if embedding is None:
        return services.memories.remember_many(Scope(T, user), [memory])[0]
    memory = memory.model_copy(update={"embedding": embedding})
    services.store.register_user(Scope(T, user))
    services.store.put_memory(memory)
    services.index.upsert(memory)
    return memory


def direction(similarity: float, dimensions: int = DIMENSIONS) -> tuple[list[float], list[float]]:
    """Two unit vectors whose cosine is exactly `similarity`."""
    first = [0.0] * dimensions
    second = [0.0] * dimensions
    first[0] = 1.0
    second[0] = similarity
    second[1] = math.sqrt(max(1.0 - similarity**2, 0.0))
    return first, second


def statuses(services: Services, user: str = U) -> dict[str, MemoryStatus]:
    return {m.id: m.status for m in services.store.iter_all_memories(T) if m.user_id == user}


def derived_from(services: Services, memory_id: str, user: str = U) -> set[str]:
    return {e.target_id for e in services.edges.outgoing(Scope(T, user), memory_id, RelationType.DERIVED_FROM)}


class FailingAfter:
    """Wraps a store (MemoryStore and ItemStore): the write after `allowed` writes raises, as a crash would."""

    WRITES = frozenset(
        {
            "put_memory",
            "update_memory",
            "delete_memory",
            "put_item",
            "delete_item",
            "delete_interaction",
            "put_interaction",
        }
    )

    def __init__(self, inner: Any, allowed: int | None = None) -> None:
        self._inner = inner
        self.allowed = allowed
        self.writes = 0

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if name not in self.WRITES or not callable(attribute):
            return attribute

        def write(*args: Any, **kwargs: Any) -> Any:
            if self.allowed is not None and self.writes >= self.allowed:
                raise StorageError(f"injected failure at write {self.writes + 1} ({name})")
            self.writes += 1
            return attribute(*args, **kwargs)

        return write


def run_until_done(attempt: Callable[[], Any], failing: FailingAfter) -> None:
    """Run with the failure armed; if it fires, disarm it and run again (the retry a queue would make)."""
    try:
        attempt()
    except StorageError:
        failing.allowed = None
        attempt()
