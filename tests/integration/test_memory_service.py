"""The memory service over the local adapters: remember, recall, list, update, delete, and what bad input does."""

from __future__ import annotations

from datetime import timedelta

import pytest

from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, DomainFilter, MemoryPatch, MemoryStatus
from rapport.domain.recall import RecallQuery
from rapport.domain.scope import Scope
from rapport.errors import InvalidInputError, NotFoundError, StorageError
from rapport.services.interactions import NewInteraction
from rapport.services.memories import NewMemory

pytestmark = pytest.mark.integration

T, U = "tenant-a", "user-1"


def remember(services: Services, content: str, domain: Domain = Domain.USER, **kw: object) -> str:
    return services.memories.remember(Scope(T, U), NewMemory(content=content, domain=domain, **kw)).id  # type: ignore[arg-type]


def test_recall_finds_by_meaning_and_keyword_filtered_by_domain(services: Services) -> None:
    dog = remember(services, "Has a dog named Max")
    remember(services, "Works at Acme as a data engineer")
    bullets = remember(
        services, "Bullet points work better with this user", Domain.RELATIONAL, type="communication_preference"
    )

    hits = services.recall.recall(Scope(T, U), RecallQuery(query="what is the dog called? Max?", limit=5))
    assert hits[0].memory.id == dog
    assert hits[0].matched_terms == ["dog", "max"]
    assert hits[0].match_strength.value in {"strong", "moderate"}
    assert hits[0].memory.embedding is None

    relational = services.recall.recall(
        Scope(T, U), RecallQuery(query="bullet points", domain=DomainFilter.RELATIONAL, limit=5)
    )
    assert [h.memory.id for h in relational] == [bullets]


def test_recall_skips_memories_with_nothing_in_common(services: Services) -> None:
    remember(services, "Has a dog named Max")
    assert services.recall.recall(Scope(T, U), RecallQuery(query="quarterly tax filing")) == []


def test_min_similarity_and_limit_are_honoured(services: Services) -> None:
    for n in range(8):
        remember(services, f"Project Falcon milestone {n} shipped")
    hits = services.recall.recall(Scope(T, U), RecallQuery(query="Project Falcon milestone", limit=3))
    assert len(hits) == 3
    assert services.recall.recall(Scope(T, U), RecallQuery(query="Project Falcon", min_similarity=0.99)) == []


def test_recency_breaks_ties_between_equal_matches(services: Services, clock: FixedClock) -> None:
    old = remember(services, "Likes hiking in the Alps")
    clock.advance(timedelta(days=90))
    new = remember(services, "Likes hiking in the Alps")
    hits = services.recall.recall(Scope(T, U), RecallQuery(query="hiking Alps"))
    assert [h.memory.id for h in hits] == [new, old]


def test_tenants_and_users_never_see_each_other(services: Services) -> None:
    mine = remember(services, "Has a dog named Max")
    assert services.recall.recall(Scope("tenant-b", U), RecallQuery(query="dog Max")) == []
    assert services.recall.recall(Scope(T, "user-2"), RecallQuery(query="dog Max")) == []
    with pytest.raises(NotFoundError):
        services.memories.get(Scope("tenant-b", U), mine)


def test_update_reembeds_changed_content(services: Services) -> None:
    memory_id = remember(services, "Has a dog named Max")
    services.memories.update(Scope(T, U), memory_id, MemoryPatch(content="Has a cat named Luna", importance=0.9))
    assert services.recall.recall(Scope(T, U), RecallQuery(query="dog Max")) == []
    hit = services.recall.recall(Scope(T, U), RecallQuery(query="cat Luna"))[0]
    assert hit.memory.id == memory_id and hit.memory.importance == 0.9


def test_archived_memories_are_only_recalled_when_asked(services: Services) -> None:
    memory_id = remember(services, "Lived in Berlin")
    services.memories.update(Scope(T, U), memory_id, MemoryPatch(status=MemoryStatus.ARCHIVED))
    assert services.recall.recall(Scope(T, U), RecallQuery(query="Berlin")) == []
    assert (
        services.recall.recall(Scope(T, U), RecallQuery(query="Berlin", include_archived=True))[0].memory.id
        == memory_id
    )


def test_delete_removes_from_store_and_index(services: Services) -> None:
    memory_id = remember(services, "Has a dog named Max")
    services.memories.delete(Scope(T, U), memory_id)
    assert services.index.count(Scope(T, U)) == 0
    with pytest.raises(NotFoundError):
        services.memories.delete(Scope(T, U), memory_id)


@pytest.mark.parametrize(
    ("new", "message"),
    [
        (NewMemory(content="   ", domain=Domain.USER), "content is empty"),
        (NewMemory(content="x" * 8001, domain=Domain.USER), "limit is 8000"),
        (NewMemory(content="ok", domain=Domain.USER, type="collaboration_outcome"), "not a user memory type"),
        (NewMemory(content="ok", domain=Domain.RELATIONAL, type="fact"), "not a relational memory type"),
        (NewMemory(content="ok", domain=Domain.USER, metadata={"blob": "x" * 9000}), "metadata is"),
    ],
)
def test_bad_memories_are_refused_and_nothing_is_written(services: Services, new: NewMemory, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        services.memories.remember(Scope(T, U), new)
    assert services.memories.count(Scope(T, U)) == 0


def test_list_pages_newest_first(services: Services, clock: FixedClock) -> None:
    ids = []
    for n in range(5):
        ids.append(remember(services, f"memory {n}"))
        clock.advance(timedelta(seconds=1))
    first = services.memories.list_memories(
        Scope(T, U), domain=DomainFilter.BOTH, memory_type=None, limit=2, cursor=None
    )
    second = services.memories.list_memories(
        Scope(T, U), domain=DomainFilter.BOTH, memory_type=None, limit=2, cursor=first.next_cursor
    )
    third = services.memories.list_memories(
        Scope(T, U), domain=DomainFilter.BOTH, memory_type=None, limit=2, cursor=second.next_cursor
    )
    assert [m.id for m in first.items + second.items + third.items] == ids[::-1]
    assert third.next_cursor is None
    with pytest.raises(InvalidInputError, match="limit"):
        services.memories.list_memories(Scope(T, U), domain=DomainFilter.BOTH, memory_type=None, limit=0, cursor=None)


class _BrokenIndex:
    """An index that fails on write, to show a failed remember leaves nothing in the store."""

    def __init__(self, real: object) -> None:
        self._real = real

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)

    def upsert(self, memory: object) -> None:
        raise StorageError("index unavailable")


def test_a_failed_index_write_leaves_nothing_half_written(services: Services) -> None:
    broken = build_services(
        services.settings,
        clock=services.clock,
        store=services.store,
        index=_BrokenIndex(services.index),  # type: ignore[arg-type]
        embedder=services.embedder,
    )
    with pytest.raises(StorageError):
        broken.memories.remember(Scope(T, U), NewMemory(content="Has a dog named Max", domain=Domain.USER))
    with pytest.raises(StorageError):
        broken.interactions.record(
            Scope(T, U), NewInteraction.model_validate({"messages": [{"role": "user", "content": "hello there"}]})
        )
    assert services.memories.count(Scope(T, U)) == 0
    assert services.interactions.history(Scope(T, U), limit=10, cursor=None).items == []


def test_interactions_become_history_and_recallable_episodes(services: Services) -> None:
    recorded = services.interactions.record(
        Scope(T, U),
        NewInteraction.model_validate(
            {
                "messages": [
                    {"role": "user", "content": "I'm getting a 500 on /users again", "name": "Dana"},
                    {"role": "assistant", "content": "Let's add step-by-step logging to the auth middleware"},
                ],
                "channel": "slack",
                "session_id": "s-1",
            }
        ),
    )
    assert len(recorded.episodes) == 2
    assert recorded.interaction.memory_ids == [m.id for m in recorded.episodes]
    # (the pipeline's memories of the same conversation match too: the episodes are what this test is about)
    hit = services.recall.recall(Scope(T, U), RecallQuery(query="500 error on users endpoint", memory_type="episode"))[
        0
    ]
    assert hit.memory.source.interaction_id == recorded.interaction.id
    assert hit.memory.source.speaker == "Dana"
    assert services.interactions.history(Scope(T, U), limit=5, cursor=None).items[0].id == recorded.interaction.id


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"messages": []}, "messages is empty"),
        ({"messages": [{"role": "assistant", "content": "hi"}]}, "no user message"),
        ({"messages": [{"role": "user", "content": "x" * 16_001}]}, "message 0 has"),
        ({"messages": [{"role": "user", "content": "hi"}] * 201}, "201 messages"),
    ],
)
def test_bad_interactions_are_refused(services: Services, payload: dict, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        services.interactions.record(Scope(T, U), NewInteraction.model_validate(payload))
    assert services.memories.count(Scope(T, U)) == 0


def test_erase_removes_everything_and_is_audited(services: Services) -> None:
    remember(services, "Has a dog named Max")
    services.interactions.record(
        Scope(T, U), NewInteraction.model_validate({"messages": [{"role": "user", "content": "hello"}]})
    )
    remember_other = services.memories.remember(Scope(T, "user-2"), NewMemory(content="Other", domain=Domain.USER))

    counts, event = services.privacy.erase_user(Scope(T, U), actor="key:abc")

    assert counts.memories == 2 and counts.interactions == 1 and counts.index_entries == 2
    assert services.memories.count(Scope(T, U)) == 0 and services.index.count(Scope(T, U)) == 0
    assert services.memories.get(Scope(T, "user-2"), remember_other.id).content == "Other"
    audit = services.privacy.audit_log(T, limit=10, cursor=None).items
    assert [e.id for e in audit] == [event.id]
    assert "dog" not in audit[0].model_dump_json()
    # Erasing again is harmless: a retry after a partial failure finishes the job.
    again, _ = services.privacy.erase_user(Scope(T, U), actor="key:abc")
    assert again.memories == 0
