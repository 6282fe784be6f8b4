"""What the steps work with: the ports and services of one process, gathered once (per cold start in Lambda)."""

from __future__ import annotations

from dataclasses import dataclass

from rapport.clock import Clock
from rapport.pipeline.runs import PipelineRunRepository
from rapport.ports.embedder import Embedder
from rapport.ports.items import ItemStore
from rapport.ports.language_model import LanguageModel
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import VectorIndex
from rapport.services.edges import EdgeRepository
from rapport.services.filter_decisions import FilterDecisionRepository
from rapport.services.memories import MemoryGraph, MemoryService
from rapport.settings import Settings


@dataclass(frozen=True)
class PipelineContext:
    settings: Settings
    clock: Clock
    store: MemoryStore
    items: ItemStore
    index: VectorIndex
    embedder: Embedder
    memories: MemoryService
    edges: EdgeRepository
    decisions: FilterDecisionRepository
    runs: PipelineRunRepository
    model: LanguageModel
    # Stands in when `model` twice answers with output that does not validate; None when `model` is the rules.
    fallback: LanguageModel | None
    # The relationship graph's hooks (enrichment of what the store step writes), as MemoryService calls them.
    graph: MemoryGraph | None = None
