"""Builds the ingestion pipeline's four steps over a process's adapters, each step with only what it uses."""

from __future__ import annotations

from rapport.clock import Clock
from rapport.composition.adapters import build_fallback_model
from rapport.pipeline.constructive_filter import ConstructiveFilter
from rapport.pipeline.extract import Extract
from rapport.pipeline.opening import OpenRun
from rapport.pipeline.placement import Placer
from rapport.pipeline.runner import PipelineRunner
from rapport.pipeline.runs import PipelineRunRepository
from rapport.pipeline.store import Store
from rapport.ports.embedder import Embedder
from rapport.ports.items import ItemStore
from rapport.ports.language_model import LanguageModel
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import VectorIndex
from rapport.services.edges import EdgeRepository
from rapport.services.filter_decisions import FilterDecisionRepository
from rapport.services.memories import MemoryService
from rapport.settings import Settings


def build_pipeline_runner(
    *,
    settings: Settings,
    clock: Clock,
    store: MemoryStore,
    items: ItemStore,
    index: VectorIndex,
    embedder: Embedder,
    memories: MemoryService,
    language_model: LanguageModel,
    edges: EdgeRepository,
    decisions: FilterDecisionRepository,
) -> PipelineRunner:
    """`edges` and `decisions` are the repositories the rest of the process reads them through."""
    runs = PipelineRunRepository(items, clock)
    fallback = build_fallback_model(settings, language_model)
    placer = Placer(
        store=store, index=index, items=items, memories=memories, edges=edges, clock=clock, settings=settings
    )
    return PipelineRunner(
        open_run=OpenRun(store, runs),
        extract=Extract(language_model, fallback, store, settings),
        constructive_filter=ConstructiveFilter(language_model, fallback),
        store=Store(
            store=store,
            embedder=embedder,
            placer=placer,
            memories=memories,
            edges=edges,
            decisions=decisions,
            runs=runs,
            clock=clock,
        ),
        runs=runs,
    )
