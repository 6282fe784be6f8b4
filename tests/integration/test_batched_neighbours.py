"""Enrichment's SIMILAR_TO search batched (one `knn_search_many` a batch) links what one search per memory did."""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.clock import FixedClock
from rapport.composition.services import build_services
from rapport.domain.models import Domain, MemoryStatus, UserMemoryType
from rapport.domain.relations import Edge, EnrichmentType
from rapport.domain.scope import Scope
from rapport.graph.enrichment import Enricher
from rapport.graph.patterns import PatternRepository
from rapport.ports.items import ItemWrite
from rapport.ports.vector_index import IndexHit, IndexQuery, VectorIndex
from rapport.services.edges import EdgeRepository
from rapport.services.memories import NewMemory
from rapport.settings import EnrichmentMode, GraphSettings, Settings

pytestmark = pytest.mark.integration

DIMS = 32
SCOPE = Scope("tenant-a", "user-1")


class ClusteredEmbedder:
    """Texts of one topic (their first word) near one centre, with noise from the text's hash: many pairs above
    the similarity floor, some with more neighbours than a memory links, and no two scores exactly equal."""

    def __init__(self) -> None:
        rng = random.Random(11)
        self._centres = {topic: [rng.gauss(0, 1) for _ in range(DIMS)] for topic in ("hiking", "cooking", "work")}

    @property
    def dimensions(self) -> int:
        return DIMS

    @property
    def name(self) -> str:
        return "clustered"

    def embed(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            noise = random.Random(hashlib.sha256(text.encode()).digest())
            centre = self._centres.get(text.split()[0], [0.0] * DIMS)
            vector = [c + 0.35 * noise.gauss(0, 1) for c in centre]
            norm = math.sqrt(sum(v * v for v in vector))
            out.append([v / norm for v in vector])
        return out


class OneSearchPerMemory:
    """The index with `knn_search_many` answered as enrichment searched before: one `knn_search` per vector."""

    def __init__(self, inner: VectorIndex) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def knn_search_many(
        self, query: IndexQuery, vectors: Sequence[list[float]], *, min_score: float | None = None
    ) -> list[list[IndexHit]]:
        return [
            [h for h in self._inner.knn_search(query, vector) if min_score is None or h.score >= min_score]
            for vector in vectors
        ]


class RecordedEdges(EdgeRepository):
    def __init__(self, items: Any) -> None:
        super().__init__(items)
        self.written: list[Edge] = []

    def put_many(self, scope: Scope, edges: Sequence[Edge], *, with_items: Sequence[ItemWrite] = ()) -> None:
        self.written.extend(edges)
        super().put_many(scope, edges, with_items=with_items)


def link_set(edges: Sequence[Edge]) -> list[tuple[str, str, str, float, str]]:
    return sorted(
        (e.source_id, str(e.type), e.target_id, round(e.strength, 4), repr(sorted(e.properties.items()))) for e in edges
    )


def test_a_batch_searched_at_once_gets_the_links_one_search_per_memory_gave(tmp_path: Path, clock: FixedClock) -> None:
    # Given 150 memories of three topics stored without enrichment (an episode, an archived one, another user's)
    settings = Settings(
        data_dir=tmp_path / "data", graph=GraphSettings(enrichment=EnrichmentMode.OFF, similar_to_min_similarity=0.8)
    )
    embedder = ClusteredEmbedder()
    store = SqliteMemoryStore(tmp_path / "memories.sqlite3")
    index = EmbeddedVectorIndex(tmp_path / "vectors.sqlite3", DIMS)
    services = build_services(settings, clock=clock, store=store, index=index, embedder=embedder)
    batches = []
    topics = ("hiking", "cooking", "work")
    for start in range(0, 150, 50):
        built = []
        for i in range(start, start + 50):
            clock.advance(timedelta(minutes=7))
            kind = UserMemoryType.EPISODE.value if i % 17 == 0 else None
            new = NewMemory(content=f"{topics[i % 3]} note {i} about the week", domain=Domain.USER, type=kind)
            built.append(services.memories.build(SCOPE, new))
        batches.append([m.id for m in services.memories.remember_many(SCOPE, built)])
    (archived,) = store.get_memories(SCOPE, [batches[0][4]])
    services.memories.set_status(archived, MemoryStatus.ARCHIVED, clock.now())
    services.memories.remember(
        Scope("tenant-a", "user-2"), NewMemory(content="hiking note 1 about the week", domain=Domain.USER)
    )

    # When each batch is enriched with one batched search, and again with one search per memory
    def enricher(searched: VectorIndex, name: str) -> tuple[Enricher, RecordedEdges]:
        items = SqliteMemoryStore(tmp_path / f"{name}-items.sqlite3")
        edges = RecordedEdges(items)
        return Enricher(store, searched, edges, PatternRepository(items), settings.graph, clock), edges

    batched, batched_edges = enricher(index, "batched")
    single, single_edges = enricher(OneSearchPerMemory(index), "single")  # type: ignore[arg-type]
    for ids in batches:
        batched.enrich(SCOPE, ids)
        single.enrich(SCOPE, ids)

    # Then every link is the same, and there are links enough to tell: some memories reach the cap of five
    similar = [e for e in batched_edges.written if e.type is EnrichmentType.SIMILAR_TO]
    per_source = {e.source_id: sum(1 for o in similar if o.source_id == e.source_id) for e in similar}
    assert len(similar) > 100 and max(per_source.values()) == settings.graph.similar_to_limit
    assert min(e.strength for e in similar) >= 0.8
    assert link_set(batched_edges.written) == link_set(single_edges.written)
    store.close()
    index.close()
