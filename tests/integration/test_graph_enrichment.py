"""Automatic enrichment over the local stack: PRECEDED_BY, SIMILAR_TO, Pattern nodes, and what stays out of it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from rapport.adapters.local.in_process_bus import InProcessBus
from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, Provenance, SourceKind, UserMemoryType
from rapport.domain.recall import RecallQuery
from rapport.domain.relations import Direction, EnrichmentType, RelationType
from rapport.domain.scope import Scope
from rapport.domain.text import tokenize
from rapport.errors import StorageError, UpstreamError
from rapport.graph.enrichment import Enricher, EnrichmentRequest
from rapport.graph.patterns import PatternRepository
from rapport.ports.event_bus import BusEvent
from rapport.services.edges import EdgeRepository
from rapport.services.memories import NewMemory
from rapport.settings import EnrichmentMode

pytestmark = pytest.mark.integration

T, U = "tenant-a", "user-1"
# The key term as recall's tokenizer stems it (whatever stemmer that is).
TERM = tokenize("Kubernetes")[0]


def remember(services: Services, content: str, domain: Domain = Domain.USER, **kw: object) -> str:
    return services.memories.remember(Scope(T, U), NewMemory(content=content, domain=domain, **kw)).id  # type: ignore[arg-type]


def edges(services: Services) -> EdgeRepository:
    return EdgeRepository(services.items)


def targets(services: Services, memory_id: str, relation: EnrichmentType | RelationType) -> dict[str, dict]:
    return {e.target_id: e.properties for e in edges(services).outgoing(Scope(T, U), memory_id, relation)}


def test_preceded_by_links_the_previous_24_hours_with_the_gap(services: Services, clock: FixedClock) -> None:
    first = remember(services, "Started the migration plan")
    clock.advance(timedelta(hours=1))
    second = remember(services, "Wrote the rollback script")
    clock.advance(timedelta(hours=30))
    third = remember(services, "Ran the migration in production")
    assert targets(services, first, EnrichmentType.PRECEDED_BY) == {}
    assert targets(services, second, EnrichmentType.PRECEDED_BY) == {first: {"time_gap": 3600.0}}
    link = edges(services).get(Scope(T, U), second, EnrichmentType.PRECEDED_BY, first)
    assert link is not None and link.strength == pytest.approx(1 - 1 / 24)
    assert targets(services, third, EnrichmentType.PRECEDED_BY) == {}  # 30 h: out of reach


def test_preceded_by_is_capped_at_the_nearest_five(services: Services, clock: FixedClock) -> None:
    earlier = []
    for hour in range(7):
        earlier.append(remember(services, f"Status note number {hour} about the release"))
        clock.advance(timedelta(hours=1))
    last = remember(services, "Release shipped")
    assert set(targets(services, last, EnrichmentType.PRECEDED_BY)) == set(earlier[-5:])


def test_a_conversation_is_chained_in_message_order(services: Services) -> None:
    batch = [
        services.memories.build(
            Scope(T, U),
            NewMemory(
                content=text,
                domain=Domain.USER,
                type=UserMemoryType.EPISODE.value,
                source=Provenance(kind=SourceKind.INTERACTION, interaction_id="i-1", message_index=i),
            ),
        )
        for i, text in enumerate(["I'm moving to Lisbon", "When do you move?", "In March, with my cat"])
    ]
    stored = services.memories.remember_many(Scope(T, U), batch)
    ids = [m.id for m in stored]
    assert targets(services, ids[0], EnrichmentType.PRECEDED_BY) == {}
    assert set(targets(services, ids[1], EnrichmentType.PRECEDED_BY)) == {ids[0]}
    assert set(targets(services, ids[2], EnrichmentType.PRECEDED_BY)) == {ids[0], ids[1]}


def test_similar_to_links_near_duplicates_both_ways(services: Services) -> None:
    dog = remember(services, "Has a dog named Max")
    remember(services, "Works at Acme as a data engineer")
    again = remember(services, "Has a dog named Max at home")
    assert set(targets(services, again, EnrichmentType.SIMILAR_TO)) == {dog}
    back = targets(services, dog, EnrichmentType.SIMILAR_TO)
    assert set(back) == {again} and 0.8 <= back[again]["similarity_score"] <= 1.0


def test_a_recurring_key_term_becomes_a_pattern_its_memories_exemplify(services: Services) -> None:
    first = remember(services, "Runs the staging cluster on Kubernetes")
    second = remember(services, "Asked how Kubernetes ingress works")
    assert PatternRepository(services.items).get(Scope(T, U), TERM) is None  # two is not yet a pattern
    episode = remember(services, "kubernetes again!", type=UserMemoryType.EPISODE.value)
    third = remember(services, "Wants Kubernetes autoscaling for the API")
    pattern = PatternRepository(services.items).get(Scope(T, U), TERM)
    assert pattern is not None and pattern.id == f"pattern:{TERM}" and pattern.occurrences == 3
    for memory in (first, second, third):
        props = targets(services, memory, RelationType.EXEMPLIFIES)[pattern.id]
        assert props == {"pattern_type": "recurring_term", "confidence": 0.5, "key_terms": [TERM]}
    assert targets(services, episode, RelationType.EXEMPLIFIES) == {}  # chat words recur by chance
    fourth = remember(services, "Kubernetes upgrade is planned")
    assert pattern.id in targets(services, fourth, RelationType.EXEMPLIFIES)
    assert PatternRepository(services.items).get(Scope(T, U), TERM).occurrences == 4  # type: ignore[union-attr]


def test_expansion_passes_through_a_pattern_to_the_memories_that_share_it(
    services: Services, clock: FixedClock
) -> None:
    ids = []
    for text in ("Runs the staging cluster on Kubernetes", "Kubernetes ingress confused them", "Likes Kubernetes"):
        ids.append(remember(services, text))
        clock.advance(timedelta(days=2))  # no PRECEDED_BY: the pattern is the only tie
    hits = services.recall.recall(
        Scope(T, U), RecallQuery(query="staging cluster", limit=1, expand_relations=True, relation_limit=5)
    )
    assert hits[0].memory.id == ids[0]
    reached = {h.memory.id: h.path for h in hits[1:]}
    assert set(reached) == {ids[1], ids[2]}
    hop, back = reached[ids[1]]
    assert (hop.from_id, hop.relation, hop.direction) == (ids[0], RelationType.EXEMPLIFIES, Direction.OUTGOING)
    assert (back.from_id, back.direction) == (f"pattern:{TERM}", Direction.INCOMING)


def test_the_asynchronous_entry_point_is_idempotent_and_skips_what_is_gone(
    services: Services, clock: FixedClock
) -> None:
    off = services.settings.model_copy(
        update={"graph": services.settings.graph.model_copy(update={"enrichment": EnrichmentMode.OFF})}
    )
    quiet = build_services(off, clock=clock, store=services.store, index=services.index, embedder=services.embedder)
    first = quiet.memories.remember(Scope(T, U), NewMemory(content="Has a dog named Max", domain=Domain.USER)).id
    second = quiet.memories.remember(
        Scope(T, U), NewMemory(content="Has a dog named Max at home", domain=Domain.USER)
    ).id
    assert not edges(services).has_any(Scope(T, U))  # enrichment off: nothing linked on the write path
    outcome = quiet.graph.enricher.enrich(Scope(T, U), [first, second, "01KE5Q8600Y4VXQG7QKPX7V7DH"])
    assert (outcome.preceded_by, outcome.similar_to, outcome.skipped) == (1, 2, 1)
    before = {e.target_id for e in edges(services).outgoing(Scope(T, U), second)}
    quiet.graph.enricher.enrich(Scope(T, U), [first, second])
    assert {e.target_id for e in edges(services).outgoing(Scope(T, U), second)} == before == {first}


def test_episodes_can_be_left_out_entirely(services: Services, clock: FixedClock) -> None:
    graph = services.settings.graph.model_copy(update={"enrich_episodes": False})
    settings = services.settings.model_copy(update={"graph": graph})
    lean = build_services(settings, clock=clock, store=services.store, index=services.index, embedder=services.embedder)
    fact = lean.memories.remember(Scope(T, U), NewMemory(content="Has a dog named Max", domain=Domain.USER)).id
    chat = lean.memories.remember(
        Scope(T, U), NewMemory(content="Has a dog named Max too", domain=Domain.USER, type=UserMemoryType.EPISODE.value)
    ).id
    assert edges(services).outgoing(Scope(T, U), chat) == []
    assert edges(services).outgoing(Scope(T, U), fact) == []  # and nothing links to the episode


def test_a_failing_enrichment_never_loses_the_memory(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object) -> None:
        raise StorageError("the table is throttling")

    monkeypatch.setattr(Enricher, "enrich_memories", broken)
    memory_id = remember(services, "Has a dog named Max")
    assert services.memories.get(Scope(T, U), memory_id).content == "Has a dog named Max"


def test_deleting_a_memory_counts_its_patterns_again_without_it(services: Services) -> None:
    kept = [
        remember(services, "Runs the staging cluster on Kubernetes"),
        remember(services, "Asked how Kubernetes ingress works"),
    ]
    gone = remember(services, "Wants Kubernetes autoscaling for the API")
    repository = PatternRepository(services.items)
    assert repository.get(Scope(T, U), TERM).occurrences == 3  # type: ignore[union-attr]

    services.memories.delete(Scope(T, U), gone)

    # Two memories show the term now: under the minimum of three, so no confidence; the pattern's history stays
    pattern = repository.get(Scope(T, U), TERM)
    assert pattern is not None and pattern.occurrences == 2 and pattern.confidence == 0.0
    assert all(pattern.id in targets(services, memory, RelationType.EXEMPLIFIES) for memory in kept)


# --- event mode: writers announce, the enrichment function links (AWS) ------------------------------------------------


class RecordingBus:
    def __init__(self, failing: bool = False) -> None:
        self.events: list[BusEvent] = []
        self.failing = failing

    def publish(self, event: BusEvent) -> None:
        if self.failing:
            raise UpstreamError("EventBridge PutEvents failed (ThrottlingException)")
        self.events.append(event)


def in_event_mode(services: Services, bus: object) -> Services:
    graph = services.settings.graph.model_copy(update={"enrichment": EnrichmentMode.EVENT})
    return build_services(
        services.settings.model_copy(update={"graph": graph}),
        clock=services.clock,
        store=services.store,
        index=services.index,
        embedder=services.embedder,
        items=services.items,
        bus=bus,  # type: ignore[arg-type]
    )


def test_in_event_mode_writers_announce_memories_and_the_enrichment_function_links_them(
    services: Services, clock: FixedClock
) -> None:
    bus = RecordingBus()
    built = in_event_mode(services, bus)
    first = remember(built, "Started the migration plan")
    clock.advance(timedelta(hours=1))
    second = remember(built, "Wrote the rollback script")

    # Then: nothing was linked on the write path; each write announced its memories, by id only
    assert targets(built, second, EnrichmentType.PRECEDED_BY) == {}
    assert [(e.source, e.detail_type, e.detail) for e in bus.events] == [
        ("rapport.graph", "Memories Stored", {"tenant_id": T, "user_id": U, "memory_ids": [first]}),
        ("rapport.graph", "Memories Stored", {"tenant_id": T, "user_id": U, "memory_ids": [second]}),
    ]

    # When: the enrichment function handles the events (EnrichmentRequest, as in functions/enrichment)
    for event in bus.events:
        request = EnrichmentRequest.model_validate(event.detail)
        built.graph.enricher.enrich(request.scope, request.memory_ids)

    # Then: the same link the inline mode draws
    assert targets(built, second, EnrichmentType.PRECEDED_BY) == {first: {"time_gap": 3600.0}}


def test_locally_event_mode_goes_through_the_in_process_bus_to_the_enricher(
    services: Services, clock: FixedClock
) -> None:
    built = in_event_mode(services, InProcessBus())
    first = remember(built, "Started the migration plan")
    clock.advance(timedelta(hours=1))
    second = remember(built, "Wrote the rollback script")
    assert targets(built, second, EnrichmentType.PRECEDED_BY) == {first: {"time_gap": 3600.0}}


def test_a_bus_that_fails_costs_the_links_not_the_memory(services: Services) -> None:
    built = in_event_mode(services, RecordingBus(failing=True))
    stored = remember(built, "Started the migration plan")
    assert built.memories.get(Scope(T, U), stored).content == "Started the migration plan"


# --- the vectors SIMILAR_TO searches with: a listed memory carries none --------------------------------------------


class StoreReadsById:
    """The store, noting every read of memories by id (which reads their vectors too)."""

    def __init__(self, inner: object) -> None:
        self._inner = inner
        self.asked: list[list[str]] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def get_memories(self, scope: Scope, memory_ids: list[str]) -> object:
        self.asked.append(list(memory_ids))
        return self._inner.get_memories(scope, memory_ids)  # type: ignore[attr-defined]


def announced_then_enriched(services: Services, lagging: bool) -> tuple[str, str, StoreReadsById]:
    """Two near-duplicates announced in event mode; the second's event handled by an enricher over a noting store,
    with the second's index entry gone first when `lagging` (an index that has not caught up with the store)."""
    bus = RecordingBus()
    built = in_event_mode(services, bus)
    dog = remember(built, "Has a dog named Max")
    again = remember(built, "Has a dog named Max at home")
    if lagging:
        services.index.delete(Scope(T, U), again)
    noting = StoreReadsById(services.store)
    graph = services.settings.graph.model_copy(update={"enrichment": EnrichmentMode.EVENT})
    enricher = build_services(
        services.settings.model_copy(update={"graph": graph}),
        clock=services.clock,
        store=noting,  # type: ignore[arg-type]
        index=services.index,
        embedder=services.embedder,
        items=services.items,
        bus=RecordingBus(),  # type: ignore[arg-type]
    ).graph.enricher
    request = EnrichmentRequest.model_validate(bus.events[-1].detail)
    outcome = enricher.enrich(request.scope, request.memory_ids)
    assert outcome.similar_to == 1
    return dog, again, noting


def test_enrichment_searches_with_the_vectors_the_index_holds(services: Services) -> None:
    dog, again, noting = announced_then_enriched(services, lagging=False)

    # The near-duplicate is linked, and no memory was read by id: the batch is on the page of recent memories,
    # and its vector came from the index
    assert set(targets(services, again, EnrichmentType.SIMILAR_TO)) == {dog}
    assert noting.asked == []


def test_a_memory_the_index_lacks_is_searched_with_its_vector_from_the_store(services: Services) -> None:
    dog, again, noting = announced_then_enriched(services, lagging=True)

    # The index has not caught up with the second memory: its vector is read from the store, and only its
    assert noting.asked == [[again]]
    similar = targets(services, again, EnrichmentType.SIMILAR_TO)
    assert set(similar) == {dog} and 0.8 <= similar[dog]["similarity_score"] <= 1.0
