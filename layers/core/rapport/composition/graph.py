"""Builds the graph's services over the shared adapters; `rapport.composition.services` calls these once per process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rapport.clock import Clock
from rapport.domain.scope import Scope
from rapport.graph.associations import AssociationService
from rapport.graph.enrichment import ENRICHMENT_SOURCE, MEMORIES_STORED, Enricher, EnrichmentRequest
from rapport.graph.expansion import RecallGraph
from rapport.graph.hooks import GraphHooks
from rapport.graph.knowledge import KnowledgeGraph
from rapport.graph.patterns import PatternRepository
from rapport.ports.event_bus import EventBus
from rapport.ports.items import ItemStore
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import VectorIndex
from rapport.services.edges import EdgeRepository
from rapport.services.memories import MemoryService
from rapport.settings import EnrichmentMode, Settings

if TYPE_CHECKING:
    from rapport.adapters.local.background_worker import BackgroundWorker

# EnrichmentRequest's own bound on the ids of one run.
_IDS_PER_RUN = 500


@dataclass
class GraphServices:
    hooks: GraphHooks
    enricher: Enricher
    associations: AssociationService
    knowledge: KnowledgeGraph
    worker: BackgroundWorker | None = None  # `background` enrichment over the in-process bus

    def flush(self, timeout: float = 60.0) -> bool:
        """Wait for background enrichment to link what was stored so far (tests, tools, benchmarks); True at once
        when enrichment runs inline, elsewhere or not at all. False when `timeout` ran out first."""
        return self.worker.flush(timeout) if self.worker is not None else True


@dataclass
class GraphHooksBuilt:
    hooks: GraphHooks
    worker: BackgroundWorker | None


def build_graph_hooks(
    settings: Settings,
    clock: Clock,
    store: MemoryStore,
    items: ItemStore,
    index: VectorIndex,
    bus: EventBus | None = None,
) -> GraphHooksBuilt:
    """Built before the memory service, which calls it; needs nothing the memory service provides. In `event` and
    `background` modes the hooks announce stored memories on the bus. Over the in-process bus, `event` hands them
    straight to the enricher, and `background` to a worker thread that enriches them off the request path, as the
    stack's rule hands them to the enrichment function."""
    from rapport.adapters.local.background_worker import BackgroundWorker
    from rapport.adapters.local.in_process_bus import InProcessBus

    edges = EdgeRepository(items)
    enricher = Enricher(store, index, edges, PatternRepository(items), settings.graph, clock)
    hooks = GraphHooks(edges, enricher, RecallGraph(store, edges, settings), settings.graph, bus)
    if not isinstance(bus, InProcessBus):
        return GraphHooksBuilt(hooks, None)
    mode = settings.graph.enrichment
    if mode is EnrichmentMode.EVENT:
        bus.subscribe(
            source_prefix=ENRICHMENT_SOURCE,
            detail_type=MEMORIES_STORED,
            subscriber=lambda detail: _enrich(enricher, [detail]),
        )
    if mode is EnrichmentMode.BACKGROUND:
        worker = BackgroundWorker(lambda details: _enrich(enricher, details), name="rapport-enrichment")
        bus.subscribe(source_prefix=ENRICHMENT_SOURCE, detail_type=MEMORIES_STORED, subscriber=worker.submit)
        return GraphHooksBuilt(hooks, worker)
    return GraphHooksBuilt(hooks, None)


def _enrich(enricher: Enricher, details: list[dict[str, Any]]) -> None:
    """Each end user's memories in the order they were stored, as few enrichment runs as the request limit allows:
    a backlog is enriched in batches, which share their reads and their write."""
    ids_of: dict[Scope, list[str]] = {}
    for detail in details:
        request = EnrichmentRequest.model_validate(detail)
        ids_of.setdefault(request.scope, []).extend(request.memory_ids)
    for scope, ids in ids_of.items():
        for start in range(0, len(ids), _IDS_PER_RUN):
            enricher.enrich(scope, ids[start : start + _IDS_PER_RUN])


def build_graph_services(
    settings: Settings, clock: Clock, items: ItemStore, memories: MemoryService, built: GraphHooksBuilt
) -> GraphServices:
    return GraphServices(
        hooks=built.hooks,
        enricher=built.hooks.enricher,
        associations=AssociationService(memories, EdgeRepository(items), clock),
        knowledge=KnowledgeGraph(items, settings.graph, clock),
        worker=built.worker,
    )
