"""Recall reads memories and edges the SQLite store keeps decoded between recalls: what was written since, by this
process or by another one over the same data directory (`rapport jobs run` beside `rapport serve`), is what the next
recall returns."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, MemoryPatch
from rapport.domain.recall import RecallQuery
from rapport.domain.relations import RelationType
from rapport.domain.scope import Scope
from rapport.services.edges import edge_at
from rapport.services.memories import NewMemory
from rapport.settings import Settings
from tests.conftest import START

pytestmark = pytest.mark.integration

S = Scope("tenant-a", "user-1")
QUERY = RecallQuery(query="what is the dog called", limit=5)


@pytest.fixture
def beside(settings: Settings, clock: FixedClock) -> Iterator[Services]:
    """A second process's services: their own store and index connections to the same files."""
    other = build_services(settings, clock=clock)
    yield other
    for adapter in (other.store, other.index):
        adapter.close()  # type: ignore[attr-defined]


def contents(services: Services) -> list[str]:
    return [hit.memory.content for hit in services.recall.recall(S, QUERY)]


@pytest.mark.parametrize("writer", ["this process", "another process"])
def test_an_update_is_what_the_next_recall_returns(
    services: Services, request: pytest.FixtureRequest, writer: str
) -> None:
    changes = services if writer == "this process" else request.getfixturevalue("beside")
    dog = services.memories.remember(S, NewMemory(content="My dog is called Max", domain=Domain.USER))
    assert contents(services) == ["My dog is called Max"]
    changes.memories.update(S, dog.id, MemoryPatch(content="My dog is called Rex"))
    assert contents(services) == ["My dog is called Rex"]
    changes.memories.delete(S, dog.id)
    assert contents(services) == []


def test_an_edge_linked_by_another_process_counts_in_the_next_recall(services: Services, beside: Services) -> None:
    dog = services.memories.remember(S, NewMemory(content="My dog is called Max", domain=Domain.USER))
    walk = services.memories.remember(S, NewMemory(content="I walk the dog at six", domain=Domain.USER))
    (before,) = [h for h in services.recall.recall(S, QUERY) if h.memory.id == dog.id]
    beside.edges.put(S, edge_at(walk.id, RelationType.REINFORCES, dog.id, START))
    (after,) = [h for h in services.recall.recall(S, QUERY) if h.memory.id == dog.id]
    assert after.score > before.score
    assert any("REINFORCES" in reason for reason in after.match_reasons)


def test_an_edge_linked_and_removed_through_this_process_counts_as_it_stands(services: Services) -> None:
    # Given a relation score the store shares between recalls (made once from the adjacency item it keeps)
    dog = services.memories.remember(S, NewMemory(content="My dog is called Max", domain=Domain.USER))
    walk = services.memories.remember(S, NewMemory(content="I walk the dog at six", domain=Domain.USER))
    (before,) = [h for h in services.recall.recall(S, QUERY) if h.memory.id == dog.id]
    # When an edge is linked, then removed, by this process
    services.edges.put(S, edge_at(walk.id, RelationType.REINFORCES, dog.id, START))
    (linked,) = [h for h in services.recall.recall(S, QUERY) if h.memory.id == dog.id]
    services.edges.delete(S, walk.id, RelationType.REINFORCES, dog.id)
    (removed,) = [h for h in services.recall.recall(S, QUERY) if h.memory.id == dog.id]
    # Then each next recall scores the edges as they stand
    assert linked.score > before.score
    assert any("REINFORCES" in reason for reason in linked.match_reasons)
    assert removed.score == before.score
    assert not any("REINFORCES" in reason for reason in removed.match_reasons)
