"""Builds the graph's services over the shared adapters; `rapport.composition.services` calls these once per process."""

from __future__ import annotations

from dataclasses import dataclass

from rapport.clock import Clock
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


@dataclass
class GraphServices:
    hooks: GraphHooks
    enricher: Enricher
    associations: AssociationService
    knowledge: KnowledgeGraph


def build_graph_hooks(
    settings: Settings,
    clock: Clock,
    store: MemoryStore,
    items: ItemStore,
    index: VectorIndex,
    bus: EventBus | None = None,
) -> GraphHooks:
    """Built before the memory service, which calls it; needs nothing the memory service provides. In `event` mode
    the hooks announce stored memories on the bus; locally the in-process bus hands them straight to the enricher,
    as the stack's rule hands them to the enrichment function."""
    from rapport.adapters.local.in_process_bus import InProcessBus

    edges = EdgeRepository(items)
    enricher = Enricher(store, index, edges, PatternRepository(items), settings.graph, clock)
    if settings.graph.enrichment is EnrichmentMode.EVENT and isinstance(bus, InProcessBus):
        bus.subscribe(
            source_prefix=ENRICHMENT_SOURCE,
            detail_type=MEMORIES_STORED,
            subscriber=lambda detail: _enrich(enricher, EnrichmentRequest.model_validate(detail)),
        )
    return GraphHooks(edges, enricher, RecallGraph(store, edges, settings), settings.graph, bus)


def _enrich(enricher: Enricher, request: EnrichmentRequest) -> None:
    enricher.enrich(request.scope, request.memory_ids)


def build_graph_services(
    settings: Settings, clock: Clock, items: ItemStore, memories: MemoryService, hooks: GraphHooks
) -> GraphServices:
    return GraphServices(
        hooks=hooks,
        enricher=hooks.enricher,
        associations=AssociationService(memories, EdgeRepository(items), clock),
        knowledge=KnowledgeGraph(items, settings.graph, clock),
    )
