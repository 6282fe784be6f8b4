"""The governance jobs against both stores: what each one changes, that a second run changes nothing, that an
interrupted run finishes on the next one, and that a consolidation can be undone."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from rapport.clock import FixedClock
from rapport.composition.services import Services
from rapport.domain.lifecycle.crossings import decay_to_persist
from rapport.domain.models import Domain, DomainFilter, MemoryStatus, Message, MessageRole, Tier
from rapport.domain.recall import RecallQuery
from rapport.domain.scope import Scope
from rapport.jobs.derivations import OPEN_KIND
from rapport.jobs.lease import UserBusyError, UserLease
from rapport.jobs.report import JobName
from rapport.ports.items import ItemQuery, ItemScope
from rapport.services.interactions import NewInteraction
from rapport.services.relational_state import DEFAULT_AGENT, STATE_KIND
from rapport.settings import PlanTier
from tests.integration.governance_support import (
    FailingAfter,
    T,
    U,
    derived_from,
    direction,
    put,
    run_until_done,
    services_over,
    statuses,
)

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def gov(any_store: object, tmp_path: Path, clock: FixedClock) -> Iterator[Services]:
    yield services_over(any_store, tmp_path, clock)  # type: ignore[arg-type]


def test_decay_writes_only_a_threshold_crossing_and_every_reader_sees_the_same_strength(
    gov: Services, clock: FixedClock
) -> None:
    # Given a user memory that crosses compression's 0.3 after ln(0.9 / 0.3) / 0.1 = 11 days, and a relational one
    # that crosses 0.2 after ln(1 / 0.2) / 0.05 = 32.2 days
    user = put(gov, "Has a dog named Max", at=T0, strength=0.9)
    relational = put(gov, "Bullet points work better", at=T0, domain=Domain.RELATIONAL)

    # When the job runs on day 3: nothing has crossed, so nothing is written...
    third = gov.governance.run(JobName.DECAY, Scope(T, U), T0 + 3 * DAY)
    assert third.examined == 2 and third.decayed == 0 and not third.changed
    assert gov.store.get_memory(Scope(T, U), user.id).strength == 0.9
    # ...and yet every reader sees the decayed strength, computed from the stored one
    clock.set(T0 + 3 * DAY)
    assert gov.memories.get(Scope(T, U), user.id).strength == pytest.approx(0.9 * math.exp(-0.3))
    listed = gov.memories.list_memories(Scope(T, U), domain=DomainFilter.BOTH, memory_type=None, limit=5, cursor=None)
    assert {m.id: round(m.strength, 9) for m in listed.items} == {
        user.id: round(0.9 * math.exp(-0.3), 9),
        relational.id: round(math.exp(-0.15), 9),
    }

    # When it runs on day 12, past the user memory's crossing: that one is written down, once
    as_of = T0 + 12 * DAY
    first = gov.governance.run(JobName.DECAY, Scope(T, U), as_of)
    second = gov.governance.run(JobName.DECAY, Scope(T, U), as_of)
    later = gov.governance.run(JobName.DECAY, Scope(T, U), as_of + 5 * DAY)
    assert first.decayed == 1 and [c.target for c in first.changes] == [user.id]
    stored = gov.store.get_memory(Scope(T, U), user.id)
    assert stored.strength == pytest.approx(0.9 * math.exp(-1.2)) and stored.decayed_at == as_of
    assert gov.store.get_memory(Scope(T, U), relational.id).strength == 1.0
    assert second.decayed == 0 and later.decayed == 0 and not second.changed and not later.changed

    # Recall scores with the same strength whether or not the job wrote: the anchor moved with the strength.
    twin = put(gov, "Has a dog named Max", at=T0, strength=0.9, user="twin")  # never seen by the job
    clock.set(as_of + 2 * DAY)
    [hit] = gov.recall.recall(Scope(T, U), RecallQuery(query="dog named Max", domain=DomainFilter.USER))
    [twin_hit] = gov.recall.recall(Scope(T, "twin"), RecallQuery(query="dog named Max", domain=DomainFilter.USER))
    assert twin_hit.memory.id == twin.id and twin_hit.memory.strength == pytest.approx(0.9 * math.exp(-1.4))
    assert hit.memory.strength == pytest.approx(twin_hit.memory.strength)
    assert hit.score == pytest.approx(twin_hit.score)


def test_a_memory_reinforced_while_the_decay_job_runs_keeps_its_reinforcement(gov: Services, clock: FixedClock) -> None:
    # Given a memory past its crossing, reinforced after the job read its page but before the job wrote
    faded = put(gov, "Lives in Lisbon", at=T0 - 20 * DAY)
    clock.set(T0)
    read = gov.store.get_memory(Scope(T, U), faded.id)
    gov.memories.reinforce(Scope(T, U), [faded.id], boost=0.5)

    # When the job writes from what it read, then the reinforcement wins and nothing is decayed
    written = gov.memories.rewrite(read, lambda current: decay_to_persist(current, T0, gov.settings.governance))
    assert written.last_reinforced_at == T0
    assert written.strength == pytest.approx(math.exp(-2.0) + 0.5)
    assert gov.store.get_memory(Scope(T, U), faded.id).strength == pytest.approx(math.exp(-2.0) + 0.5)


def test_compression_summarizes_weak_old_memories_by_type_and_archives_the_originals(gov: Services) -> None:
    old = T0 - 20 * DAY
    facts = [put(gov, text, at=old) for text in ("Has a dog named Max", "Lives in Lisbon", "Drinks green tea")]
    goal = put(gov, "Wants to run a marathon", at=old, memory_type="goal")
    fresh = put(gov, "Started a new job", at=T0 - DAY, strength=0.1)  # weak, but not old enough
    as_of = T0

    report = gov.governance.run(JobName.COMPRESS, Scope(T, U), as_of)

    assert report.compressed == 4 and report.derived == 2 and report.archived == 4
    now = statuses(gov)
    assert all(now[m.id] is MemoryStatus.ARCHIVED for m in [*facts, goal])
    assert now[fresh.id] is MemoryStatus.ACTIVE
    compact = [m for m in gov.store.iter_all_memories(T) if m.status is MemoryStatus.COMPRESSED]
    assert sorted(m.type for m in compact) == ["fact", "goal"]
    fact_summary = next(m for m in compact if m.type == "fact")
    assert fact_summary.content.startswith("Compressed 3 fact memories: ")
    assert all(f.content in fact_summary.content for f in facts)
    assert derived_from(gov, fact_summary.id) == {f.id for f in facts}
    assert fact_summary.metadata["governance"]["derived_from"] == [f.id for f in facts]
    assert fact_summary.strength == pytest.approx(math.exp(-2.0))  # the strongest original, decayed to as_of
    assert not gov.governance.run(JobName.COMPRESS, Scope(T, U), as_of).changed  # idempotent
    # Listing hides the archived originals unless asked; nothing was deleted.
    listed = gov.memories.list_memories(Scope(T, U), domain=DomainFilter.BOTH, memory_type=None, limit=50, cursor=None)
    everything = gov.memories.list_memories(
        Scope(T, U), domain=DomainFilter.BOTH, memory_type=None, limit=50, cursor=None, include_archived=True
    )
    assert {m.id for m in listed.items} == {fresh.id, *(c.id for c in compact)}
    assert len(everything.items) == 7


def test_consolidation_merges_similar_facts_with_their_provenance_and_undo_restores_them(gov: Services) -> None:
    close_a, close_b = direction(0.9)
    first = put(gov, "Has a golden retriever named Max", at=T0 - 3 * DAY, embedding=close_a, strength=0.6)
    second = put(gov, "Has a dog called Max", at=T0 - 2 * DAY, embedding=close_b, importance=0.9)
    _, far = direction(0.5)
    unrelated = put(gov, "Works at Acme", at=T0 - DAY, embedding=far)

    report = gov.governance.run(JobName.CONSOLIDATE, Scope(T, U), T0)

    assert report.consolidated == 2 and report.derived == 1
    [merged] = [m for m in gov.store.iter_all_memories(T) if m.metadata.get("governance")]
    assert merged.status is MemoryStatus.ACTIVE
    assert merged.content == second.content  # the strongest speaks for the cluster (extractive)
    assert merged.strength == pytest.approx(1.0 * math.exp(-0.2)) and merged.importance == 0.9
    assert derived_from(gov, merged.id) == {first.id, second.id}
    assert [s["memory_id"] for s in merged.metadata["governance"]["sources"]] == [second.id, first.id]
    assert statuses(gov)[unrelated.id] is MemoryStatus.ACTIVE
    assert not gov.governance.run(JobName.CONSOLIDATE, Scope(T, U), T0).changed

    derivation, restored = gov.governance.undo_consolidation(Scope(T, U), merged.id)
    again, restored_again = gov.governance.undo_consolidation(Scope(T, U), merged.id)

    assert derivation.state == "undone" and sorted(restored) == sorted([first.id, second.id])
    assert again.state == "undone" and restored_again == []
    now = statuses(gov)
    assert now[first.id] is now[second.id] is MemoryStatus.ACTIVE and now[merged.id] is MemoryStatus.ARCHIVED
    # Once undone, the weekly run does not merge them again.
    assert gov.governance.run(JobName.CONSOLIDATE, Scope(T, U), T0 + 7 * DAY).consolidated == 0


def record(services: Services, n: int, *, session: str = "s1", messages: int = 2) -> str:
    turns = [
        Message(role=MessageRole.USER if i % 2 == 0 else MessageRole.ASSISTANT, content=f"message {n}.{i}")
        for i in range(messages)
    ]
    recorded = services.interactions.record(Scope(T, U), NewInteraction(messages=turns, session_id=session))
    return recorded.interaction.id


def history(services: Services) -> list[str]:
    return [i.id for i in services.store.list_interactions(Scope(T, U), limit=100, oldest_first=True).items]


def test_the_plan_cap_holds_after_every_interaction_and_in_the_nightly_sweep(
    any_store: object, tmp_path: Path, clock: FixedClock
) -> None:
    gov = services_over(any_store, tmp_path, clock, governance={"community_max_messages": 6})  # type: ignore[arg-type]
    ids = []
    for n in range(3):
        ids.append(record(gov, n))
        clock.advance(timedelta(seconds=1))
    assert history(gov) == ids  # 6 messages: exactly the cap

    ids.append(record(gov, 3))  # the 7th and 8th message: the oldest exchange goes, right away

    assert history(gov) == ids[1:]
    assert all(e.source.interaction_id != ids[0] for e in gov.store.iter_all_memories(T))
    # The relational state (written by its own listener on every interaction) is never capped.
    assert gov.items.get_item(ItemScope(tenant_id=T, user_id=U), STATE_KIND, DEFAULT_AGENT) is not None
    # The nightly sweep recounts; with the tenant on the clinic plan, nothing more goes.
    gov.governance.plans.set_tenant_plan(T, PlanTier.CLINIC, clock.now())
    assert gov.governance.run(JobName.RETENTION, Scope(T, U), clock.now()).trimmed_messages == 0


def test_the_sweep_trims_what_the_interactions_did_not(any_store: object, tmp_path: Path, clock: FixedClock) -> None:
    roomy = services_over(any_store, tmp_path, clock, governance={"community_max_messages": 100})  # type: ignore[arg-type]
    ids = []
    for n in range(5):
        ids.append(record(roomy, n))
        clock.advance(timedelta(seconds=1))
    tight = services_over(any_store, tmp_path, clock, governance={"community_max_messages": 5})  # type: ignore[arg-type]

    report = tight.governance.run(JobName.RETENTION, Scope(T, U), clock.now())

    assert report.trimmed_interactions == 3 and report.trimmed_messages == 6
    assert history(tight) == ids[3:]
    assert not tight.governance.run(JobName.RETENTION, Scope(T, U), clock.now()).changed


def test_old_messages_leave_short_term_and_working_memories_retire_with_their_session(
    gov: Services, clock: FixedClock
) -> None:
    record(gov, 0, session="monday")
    episodes = [m for m in gov.store.iter_all_memories(T) if m.type == "episode"]
    working = put(
        gov,
        "Is tired today",
        at=T0,
        tier=Tier.WORKING,
        source=episodes[0].source,  # the pipeline's provenance: the interaction and session it came from
    )
    orphan = put(
        gov,
        "Mentioned a meeting",
        at=T0,
        tier=Tier.WORKING,
        source=episodes[0].source.model_copy(update={"interaction_id": "01HZZZZZZZZZZZZZZZZZZZZZZZ"}),
    )

    during = gov.governance.run(JobName.RETENTION, Scope(T, U), T0 + timedelta(minutes=20))
    after_session = gov.governance.run(JobName.RETENTION, Scope(T, U), T0 + timedelta(minutes=31))
    week_later = gov.governance.run(JobName.RETENTION, Scope(T, U), T0 + 7 * DAY + timedelta(seconds=1))

    assert not during.changed
    assert [c.target for c in after_session.changes if c.action == "archived"] == [working.id]
    assert {c.target for c in week_later.changes if c.action == "archived"} == {e.id for e in episodes}
    # A memory whose interaction no longer holds it is the only copy: it stays.
    assert statuses(gov)[orphan.id] is MemoryStatus.ACTIVE and after_session.kept == 1


def open_markers(services: Services) -> list[str]:
    page = services.items.list_items(ItemScope(tenant_id=T, user_id=U), ItemQuery(kind=OPEN_KIND))
    return [item.key for item in page.items]


def _compression_scene(services: Services) -> list[str]:
    old = T0 - 30 * DAY
    texts = ["Has a dog named Max", "Lives in Lisbon", "Drinks green tea", "Plays chess"]
    ids = [put(services, text, at=old + i * timedelta(seconds=1)).id for i, text in enumerate(texts)]
    ids.append(put(services, "Wants to run a marathon", at=old, memory_type="goal").id)
    return ids


def _consolidation_scene(services: Services) -> list[str]:
    a, b = direction(0.95)
    return [
        put(services, "Prefers morning meetings", at=T0 - 3 * DAY, embedding=a, memory_type="preference").id,
        put(services, "Likes meetings in the morning", at=T0 - 2 * DAY, embedding=b, memory_type="preference").id,
        put(services, "Loves jazz", at=T0 - 2 * DAY, embedding=a, memory_type="fact").id,
        put(services, "Listens to jazz a lot", at=T0 - DAY, embedding=b, memory_type="fact").id,
    ]


SCENES = {JobName.COMPRESS: (_compression_scene, 2), JobName.CONSOLIDATE: (_consolidation_scene, 2)}


@pytest.mark.parametrize("job", [JobName.COMPRESS, JobName.CONSOLIDATE])
def test_a_run_stopped_at_any_write_is_finished_by_the_next_with_nothing_lost_or_doubled(
    job: JobName, tmp_path: Path, clock: FixedClock
) -> None:
    from rapport.adapters.local.sqlite_store import SqliteMemoryStore

    scene, groups = SCENES[job]
    # How many writes a clean run makes, so the failure can be put at every one of them.
    clean = services_over(FailingAfter(SqliteMemoryStore(tmp_path / "clean.sqlite3")), tmp_path / "clean", clock)
    scene(clean)
    clean_writes = clean.store.writes
    clean.governance.run(job, Scope(T, U), T0)
    total_writes = clean.store.writes - clean_writes

    for allowed in range(total_writes):
        store = FailingAfter(SqliteMemoryStore(tmp_path / f"run-{allowed}.sqlite3"))
        services = services_over(store, tmp_path / f"run-{allowed}", clock)
        originals = scene(services)
        store.allowed = store.writes + allowed

        run_until_done(lambda services=services: services.governance.run(job, Scope(T, U), T0), store)

        now = statuses(services)
        derived = [i for i in now if i not in originals]
        assert len(derived) == groups, f"stopped after {allowed} writes: {len(derived)} derived memories"
        assert all(now[o] is MemoryStatus.ARCHIVED for o in originals), f"stopped after {allowed} writes"
        assert set().union(*(derived_from(services, d) for d in derived)) == set(originals)
        assert open_markers(services) == []
        assert not services.governance.run(job, Scope(T, U), T0).changed


def test_an_interrupted_decay_or_retention_run_completes_on_the_next(
    any_store: object, tmp_path: Path, clock: FixedClock
) -> None:
    store = FailingAfter(any_store)
    services = services_over(store, tmp_path, clock, governance={"community_max_messages": 4})
    # Six memories that have all faded past 0.3 by the run (13 to 18 days old), written down one by one
    memories = [put(services, f"fact number {n}", at=T0 - (12 + n) * DAY) for n in range(6)]
    store.allowed = store.writes + 3

    run_until_done(lambda: services.governance.run(JobName.DECAY, Scope(T, U), T0 + DAY), store)

    for n, memory in enumerate(memories):
        stored = services.store.get_memory(Scope(T, U), memory.id)
        assert stored.strength == pytest.approx(math.exp(-0.1 * (n + 13))) and stored.decayed_at == T0 + DAY
    assert not services.governance.run(JobName.DECAY, Scope(T, U), T0 + DAY).changed
    ids = []
    for n in range(4):  # 8 messages under a cap of 4 would be trimmed as they arrive: raise the cap first
        services.governance.plans.set_tenant_plan(T, PlanTier.ENTERPRISE, clock.now())
        ids.append(record(services, n))
        clock.advance(timedelta(seconds=1))
    services.items.delete_item(ItemScope(tenant_id=T), "PLAN", "")
    store.allowed = store.writes + 2

    run_until_done(lambda: services.governance.run(JobName.RETENTION, Scope(T, U), clock.now()), store)

    assert history(services) == ids[2:]  # exactly the oldest two exchanges went: none lost beyond, none left over
    assert not services.governance.run(JobName.RETENTION, Scope(T, U), clock.now()).changed


def test_one_job_at_a_time_holds_a_user_and_a_crashed_runs_hold_expires(gov: Services, clock: FixedClock) -> None:
    lease = UserLease(gov.items, clock, minutes=15)
    with lease.hold(Scope(T, U), "compress:run-1"), pytest.raises(UserBusyError):
        gov.governance.run(JobName.CONSOLIDATE, Scope(T, U), T0, run_id="run-2")
    assert gov.governance.run(JobName.CONSOLIDATE, Scope(T, U), T0, run_id="run-2").users == 1  # released on exit

    # A run that crashed never releases its lease (kept referenced here, so nothing closes it)...
    crashed = lease.hold(Scope(T, U), "retention:run-3")
    crashed.__enter__()
    with pytest.raises(UserBusyError):
        gov.governance.run(JobName.COMPRESS, Scope(T, U), T0, run_id="run-4")
    # ...its own retry (the same job and run, redelivered by SQS) takes it back...
    assert gov.governance.run(JobName.RETENTION, Scope(T, U), T0, run_id="run-3").users == 1
    # ...and another run gets the user once the lease has expired
    stuck = lease.hold(Scope(T, U), "decay:run-5")
    stuck.__enter__()
    clock.advance(timedelta(minutes=14))
    with pytest.raises(UserBusyError):
        gov.governance.run(JobName.COMPRESS, Scope(T, U), T0, run_id="run-6")
    clock.advance(timedelta(minutes=2))
    assert gov.governance.run(JobName.COMPRESS, Scope(T, U), T0, run_id="run-6").users == 1


def test_recall_trusts_the_store_over_an_index_that_has_not_caught_up(gov: Services) -> None:
    memory = put(gov, "Has a dog named Max", at=T0)
    # archived in the store only, as when the index is kept in step by a stream or lives in another process
    gov.store.put_memory(
        gov.store.get_memory(Scope(T, U), memory.id).model_copy(update={"status": MemoryStatus.ARCHIVED})
    )

    assert gov.recall.recall(Scope(T, U), RecallQuery(query="dog named Max")) == []
    [hit] = gov.recall.recall(Scope(T, U), RecallQuery(query="dog named Max", include_archived=True))
    assert hit.memory.id == memory.id
