"""Enrichment off the request path (the local server's default) and bounded as the store grows."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain
from rapport.domain.relations import EnrichmentType, RelationType
from rapport.domain.scope import Scope
from rapport.graph.patterns import PATTERN_KIND, Pattern, pattern_id
from rapport.ports.items import ItemScope
from rapport.services.edges import EdgeRepository
from rapport.services.memories import NewMemory
from rapport.settings import EnrichmentMode

pytestmark = pytest.mark.integration

T, U = "tenant-a", "user-1"
S = Scope(T, U)


def rebuilt(services: Services, **graph: object) -> Services:
    settings = services.settings.model_copy(update={"graph": services.settings.graph.model_copy(update=graph)})
    return build_services(
        settings, clock=services.clock, store=services.store, index=services.index, embedder=services.embedder
    )


def remember(services: Services, content: str) -> str:
    return services.memories.remember(S, NewMemory(content=content, domain=Domain.USER)).id


def test_the_default_links_in_the_background_and_a_flush_waits_for_it(services: Services, clock: FixedClock) -> None:
    built = rebuilt(services, enrichment=EnrichmentMode.BACKGROUND)
    assert built.settings.graph.enrichment is type(services.settings.graph)().enrichment  # the default mode
    gate = threading.Event()
    enrich = built.graph.enricher.enrich

    def held(scope: Scope, ids: list[str]) -> object:
        gate.wait(10)
        return enrich(scope, ids)

    built.graph.enricher.enrich = held  # type: ignore[method-assign]
    first = remember(built, "Started the migration plan")
    clock.advance(timedelta(hours=1))
    second = remember(built, "Wrote the rollback script")

    # Then: both writes answered while the worker was held, with no link drawn on their path
    edges = EdgeRepository(built.items)
    assert edges.outgoing(S, second, EnrichmentType.PRECEDED_BY) == []
    assert built.graph.flush(timeout=0.2) is False

    # When: the worker goes on
    gate.set()
    assert built.graph.flush(timeout=30)
    assert [e.target_id for e in edges.outgoing(S, second, EnrichmentType.PRECEDED_BY)] == [first]


def test_a_failing_background_run_is_logged_and_the_worker_goes_on(services: Services, clock: FixedClock) -> None:
    built = rebuilt(services, enrichment=EnrichmentMode.BACKGROUND)
    enrich = built.graph.enricher.enrich
    calls = []

    def flaky(scope: Scope, ids: list[str]) -> object:
        calls.append(ids)
        if len(calls) == 1:
            raise LookupError("index unavailable")
        return enrich(scope, ids)

    built.graph.enricher.enrich = flaky  # type: ignore[method-assign]
    lost = remember(built, "Started the migration plan")
    assert built.graph.flush(timeout=30)
    clock.advance(timedelta(hours=1))
    kept = remember(built, "Wrote the rollback script")
    assert built.graph.flush(timeout=30)
    assert built.memories.get(S, lost).content == "Started the migration plan"
    edges = EdgeRepository(built.items)
    assert [e.target_id for e in edges.outgoing(S, kept, EnrichmentType.PRECEDED_BY)] == [lost]


def test_a_pattern_links_at_most_its_exemplar_limit(services: Services, clock: FixedClock) -> None:
    # Given: at most three memories per pattern; six memories share the word "pottery"
    built = rebuilt(services, pattern_exemplar_limit=3, pattern_min_occurrences=2, pattern_full_confidence=3)
    ids = []
    for n in range(6):
        ids.append(remember(built, f"Pottery class number {n} went well"))
        clock.advance(timedelta(days=2))

    # Then: the pattern holds three of them, says so, and the others carry no link to it
    node = pattern_id("potteri")
    linked = {e.source_id for e in EdgeRepository(built.items).incoming(S, node, RelationType.EXEMPLIFIES)}
    assert len(linked) == 3
    assert linked == set(ids[:3])
    stored = built.items.get_item(ItemScope.of_user(S), PATTERN_KIND, "potteri")
    assert stored is not None and Pattern.model_validate(stored.body).exemplars == 3

    # When: a linked memory is deleted, the pattern has room again for the next one
    built.memories.delete(S, ids[0])
    later = remember(built, "Pottery class number 7 went well")
    linked = {e.source_id for e in EdgeRepository(built.items).incoming(S, node, RelationType.EXEMPLIFIES)}
    assert later in linked and len(linked) == 3
