"""Builds the graph's services over the shared adapters; `rapport.wiring` calls these once per process."""

from __future__ import annotations

from dataclasses import dataclass

from rapport.clock import Clock
from rapport.graph.associations import AssociationService
from rapport.graph.enrichment import Enricher
from rapport.graph.expansion import RecallGraph
from rapport.graph.hooks import GraphHooks
from rapport.graph.knowledge import KnowledgeGraph
from rapport.graph.patterns import PatternRepository
from rapport.ports.items import ItemStore
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import VectorIndex
from rapport.services.edges import EdgeRepository
from rapport.services.memories import MemoryService
from rapport.settings import Settings


@dataclass
class GraphServices:
    hooks: GraphHooks
    enricher: Enricher
    associations: AssociationService
    knowledge: KnowledgeGraph


def build_graph_hooks(
    settings: Settings, clock: Clock, store: MemoryStore, items: ItemStore, index: VectorIndex
) -> GraphHooks:
    """Built before the memory service, which calls it; needs nothing the memory service provides."""
    edges = EdgeRepository(items)
    enricher = Enricher(store, index, edges, PatternRepository(items), settings.graph, clock)
    return GraphHooks(edges, enricher, RecallGraph(store, edges, settings), settings.graph)


def build_graph_services(
    settings: Settings, clock: Clock, items: ItemStore, memories: MemoryService, hooks: GraphHooks
) -> GraphServices:
    return GraphServices(
        hooks=hooks,
        enricher=hooks.enricher,
        associations=AssociationService(memories, EdgeRepository(items), clock),
        knowledge=KnowledgeGraph(items, settings.graph, clock),
    )
