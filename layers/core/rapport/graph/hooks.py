"""The graph's hooks: enrich after a store, unlink after a delete, read edges for recall (the `MemoryGraph` port)."""

from __future__ import annotations

import logging

from rapport.domain.models import Memory
from rapport.domain.relations import RelationType
from rapport.domain.scope import Scope
from rapport.errors import RapportError
from rapport.graph.enrichment import ENRICHMENT_SOURCE, MEMORIES_STORED, Enricher, EnrichmentRequest
from rapport.graph.expansion import RecallGraph, UserEdges
from rapport.graph.patterns import is_pattern_id
from rapport.ports.event_bus import BusEvent, EventBus
from rapport.services.edges import EdgeRepository
from rapport.settings import EnrichmentMode, GraphSettings

logger = logging.getLogger(__name__)
_IDS_PER_EVENT = 500  # EnrichmentRequest's own limit; an event stays far under EventBridge's 256 KB


class GraphHooks:
    """The `MemoryGraph` port, which the memory service and recall call; one object, so wiring attaches the graph
    once."""

    def __init__(
        self,
        edges: EdgeRepository,
        enricher: Enricher,
        recall_graph: RecallGraph,
        settings: GraphSettings,
        bus: EventBus | None = None,
    ) -> None:
        self._edges = edges
        self._enricher = enricher
        self._recall_graph = recall_graph
        self._settings = settings
        self._bus = bus  # where `event` mode announces stored memories

    @property
    def enricher(self) -> Enricher:
        return self._enricher

    def memories_stored(self, scope: Scope, memories: list[Memory]) -> None:
        mode = self._settings.enrichment
        if mode is EnrichmentMode.OFF or not memories:
            return
        try:
            if mode in (EnrichmentMode.EVENT, EnrichmentMode.BACKGROUND):
                self._announce(scope, memories)
            else:
                self._enricher.enrich_memories(scope, memories)
        except (RapportError, LookupError):
            # The memories are stored; links are an extra that a later enrichment run can still add. Failing the
            # write because of them would lose what the client sent.
            logger.warning("enrichment failed; the memories are stored without links", exc_info=True)

    def _announce(self, scope: Scope, memories: list[Memory]) -> None:
        """One Memories Stored event per batch (ids only: no content leaves the table), in stored order."""
        if self._bus is None:
            raise LookupError("enrichment is `event` but no event bus is configured (RAPPORT_EVENT_BUS_NAME)")
        ids = [m.id for m in memories]
        for start in range(0, len(ids), _IDS_PER_EVENT):
            request = EnrichmentRequest(
                tenant_id=scope.tenant_id, user_id=scope.user_id, memory_ids=ids[start : start + _IDS_PER_EVENT]
            )
            self._bus.publish(
                BusEvent(source=ENRICHMENT_SOURCE, detail_type=MEMORIES_STORED, detail=request.model_dump())
            )

    def memory_deleted(self, scope: Scope, memory_id: str) -> None:
        """Its edges go, both ways; the patterns it exemplified are counted again without it."""
        exemplified = [
            edge.target_id
            for edge in self._edges.outgoing(scope, memory_id, RelationType.EXEMPLIFIES)
            if is_pattern_id(edge.target_id)
        ]
        self._edges.delete_all(scope, memory_id)
        for pattern in exemplified:
            self._enricher.recount_pattern(scope, pattern)

    def edges_for_recall(self, scope: Scope) -> UserEdges | None:
        return self._recall_graph.edges_for_recall(scope)
