"""The graph's hooks into the memory lifecycle: enrich after a store, unlink after a delete, expand at recall."""

from __future__ import annotations

import logging
from datetime import datetime

from rapport.domain.models import Memory
from rapport.domain.relations import RelationType
from rapport.errors import RapportError
from rapport.graph.enrichment import Enricher
from rapport.graph.expansion import RecallGraph
from rapport.graph.patterns import is_pattern_id
from rapport.services.edges import EdgeRepository
from rapport.services.memories import RecallHit, RecallQuery
from rapport.settings import EnrichmentMode, GraphSettings

logger = logging.getLogger(__name__)


class GraphHooks:
    """What `MemoryService` calls (its `MemoryGraph` protocol); one object, so wiring attaches the graph once."""

    def __init__(
        self, edges: EdgeRepository, enricher: Enricher, recall_graph: RecallGraph, settings: GraphSettings
    ) -> None:
        self._edges = edges
        self._enricher = enricher
        self._recall_graph = recall_graph
        self._settings = settings

    @property
    def enricher(self) -> Enricher:
        return self._enricher

    def memories_stored(self, tenant_id: str, user_id: str, memories: list[Memory]) -> None:
        if self._settings.enrichment is not EnrichmentMode.INLINE:
            return
        try:
            self._enricher.enrich_memories(tenant_id, user_id, memories)
        except RapportError:
            # The memories are stored; links are an extra that a later enrichment run can still add. Failing the
            # write because of them would lose what the client sent.
            logger.warning("enrichment failed; the memories are stored without links", exc_info=True)

    def memory_deleted(self, tenant_id: str, user_id: str, memory_id: str) -> None:
        """Its edges go, both ways; the patterns it exemplified are counted again without it."""
        exemplified = [
            edge.target_id
            for edge in self._edges.outgoing(tenant_id, user_id, memory_id, RelationType.EXEMPLIFIES)
            if is_pattern_id(edge.target_id)
        ]
        self._edges.delete_all(tenant_id, user_id, memory_id)
        for pattern in exemplified:
            self._enricher.recount_pattern(tenant_id, user_id, pattern)

    def finish_recall(
        self,
        tenant_id: str,
        user_id: str,
        query: RecallQuery,
        hits: list[RecallHit],
        vector: list[float],
        now: datetime,
    ) -> list[RecallHit]:
        return self._recall_graph.finish_recall(tenant_id, user_id, query, hits, vector, now)
