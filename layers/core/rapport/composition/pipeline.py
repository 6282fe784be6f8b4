"""Builds the ingestion pipeline's four steps over a process's adapters, each step with only what it uses."""

from __future__ import annotations

from dataclasses import dataclass

from rapport.clock import Clock
from rapport.composition.adapters import build_dead_letters, build_fallback_model, build_step_functions_trigger
from rapport.domain.rules.model import RulesLanguageModel
from rapport.domain.semantics.ahead import SentencesAhead
from rapport.pipeline.constructive_filter import ConstructiveFilter
from rapport.pipeline.extract import Extract
from rapport.pipeline.in_process import InProcessPipeline
from rapport.pipeline.opening import OpenRun
from rapport.pipeline.placement import Placer
from rapport.pipeline.redrive import StartedByTheTable
from rapport.pipeline.runner import PipelineRunner
from rapport.pipeline.runs import PipelineRunRepository
from rapport.pipeline.slots import SlotRepository
from rapport.pipeline.store import Store
from rapport.ports.dead_letters import DeadLetters
from rapport.ports.embedder import Embedder
from rapport.ports.items import ItemStore
from rapport.ports.language_model import LanguageModel
from rapport.ports.pipeline import PipelineTrigger
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import VectorIndex
from rapport.ports.webhooks import OutboundEvents
from rapport.services.edges import EdgeRepository
from rapport.services.filter_decisions import FilterDecisionRepository, FilterDecisionService
from rapport.services.memories import MemoryService
from rapport.settings import PipelineMode, Settings


@dataclass(frozen=True)
class PipelineParts:
    edges: EdgeRepository
    filter_decisions: FilterDecisionService
    runner: PipelineRunner
    dead_letters: DeadLetters
    runs: PipelineRunRepository
    trigger: PipelineTrigger | None


def build_pipeline(
    *,
    settings: Settings,
    clock: Clock,
    store: MemoryStore,
    items: ItemStore,
    index: VectorIndex,
    embedder: Embedder,
    memories: MemoryService,
    language_model: LanguageModel,
    events: OutboundEvents | None = None,
) -> PipelineParts:
    """The pipeline's steps over this process's adapters, the repositories it shares with the services that read
    what it writes, and the trigger the settings ask for: in process, on Step Functions, or none."""
    edges = EdgeRepository(items, clock)
    decisions = FilterDecisionRepository(items)
    runs = PipelineRunRepository(items, clock)
    fallback = build_fallback_model(settings, language_model, embedder)
    placer = Placer(
        store=store,
        index=index,
        slots=SlotRepository(items),
        memories=memories,
        clock=clock,
        settings=settings,
    )
    runner = PipelineRunner(
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
            events=events,
        ),
        runs=runs,
    )
    dead_letters = build_dead_letters(settings, store=store, items=items, clock=clock)
    trigger = build_step_functions_trigger(settings)
    if settings.pipeline is PipelineMode.LOCAL:
        trigger = InProcessPipeline(runner, store, dead_letters=dead_letters)
    elif settings.pipeline is PipelineMode.STREAM:
        trigger = StartedByTheTable()
    return PipelineParts(
        dead_letters=dead_letters,
        edges=edges,
        filter_decisions=FilterDecisionService(decisions, store, memories, edges, settings, clock),
        runner=runner,
        runs=runs,
        trigger=trigger,
    )


def sentences_ahead(settings: Settings, language_model: LanguageModel) -> SentencesAhead | None:
    """The rule model's sentences embedded in the episodes' call, when that model runs its semantic layer in this
    process (the local pipeline); elsewhere the pipeline runs in another process, which could not use the vectors."""
    if settings.pipeline is not PipelineMode.LOCAL or not isinstance(language_model, RulesLanguageModel):
        return None
    return SentencesAhead(language_model.semantics) if language_model.semantics is not None else None
