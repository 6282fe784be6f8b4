"""Governance end to end: a user's memories aged over simulated weeks with an injected clock, each rule firing at
exactly its threshold of docs/governance.md in each domain (a minute before: not yet; a minute after: done), and recall
afterwards returning the compact and consolidated memories with provenance that reaches every original."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from rapport.clock import FixedClock
from rapport.composition.services import Services
from rapport.domain.models import Domain, DomainFilter, MemoryStatus, Provenance, SourceKind
from rapport.domain.recall import RecallQuery
from rapport.domain.scope import Scope
from rapport.jobs.report import JobName
from tests.integration.governance_support import T, U, derived_from, direction, put, services_over, statuses

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 5, 0, 0, tzinfo=UTC)
DAY = timedelta(days=1)
MINUTE = timedelta(minutes=1)


def days(value: float) -> timedelta:
    return timedelta(days=value)


def crossing(strength: float, below: float, rate: float) -> timedelta:
    """When `strength x exp(-rate x days)` falls to `below`."""
    return days(math.log(strength / below) / rate)


def source(n: int) -> Provenance:
    return Provenance(kind=SourceKind.INTERACTION, interaction_id=f"01KE00000000000000000000{n:02d}", session_id="s")


def test_each_rule_fires_at_the_brief_thresholds_over_simulated_weeks(any_store: object, tmp_path: Path) -> None:
    clock = FixedClock(T0)
    gov: Services = services_over(any_store, tmp_path, clock)  # type: ignore[arg-type]

    # Given, on day 0: in each domain one memory at full strength (its strength threshold comes late) and one
    # already weak (its age threshold decides), each of its own type so each is compressed on its own
    user_strong = put(gov, "Has a dog named Max", at=T0, memory_type="fact", source=source(1))
    user_weak = put(gov, "Was reading a thriller", at=T0, memory_type="event", strength=0.2, source=source(2))
    rel_strong = put(
        gov,
        "Step-by-step logging helped us find the auth bug",
        at=T0,
        domain=Domain.RELATIONAL,
        memory_type="approach_effectiveness",
        source=source(3),
    )
    rel_weak = put(
        gov,
        "We joked about tabs versus spaces",
        at=T0,
        domain=Domain.RELATIONAL,
        memory_type="shared_context",
        strength=0.1,
        source=source(4),
    )
    # and two pairs of preferences for consolidation: one pair just above the cosine setting, one just below
    threshold = gov.settings.governance.consolidation_min_similarity
    above_a, above_b = direction(threshold + 0.001)
    below_a, below_b = direction(threshold - 0.001)
    pair = [
        put(gov, "Prefers morning meetings", at=T0, memory_type="preference", embedding=above_a, source=source(5)),
        put(
            gov, "Likes meetings early in the day", at=T0, memory_type="preference", embedding=above_b, source=source(6)
        ),
    ]
    apart = [
        put(gov, "Prefers tea to coffee", at=T0, memory_type="goal", embedding=below_a, source=source(7)),
        put(gov, "Wants to drink less coffee", at=T0, memory_type="goal", embedding=below_b, source=source(8)),
    ]

    def compressed_at(moment: datetime) -> set[str]:
        gov.governance.run(JobName.DECAY, Scope(T, U), moment)
        gov.governance.run(JobName.COMPRESS, Scope(T, U), moment)
        return {i for i, s in statuses(gov).items() if s is MemoryStatus.ARCHIVED}

    # Decay, day by day: the strength a reader sees is the decay formula at 0.1 and 0.05 a day, while the store is
    # written only when a threshold is crossed (none is, yet)
    for day in (1, 2, 3):
        compressed_at(T0 + day * DAY)
        clock.set(T0 + day * DAY)
        assert gov.memories.get(Scope(T, U), user_strong.id).strength == pytest.approx(math.exp(-0.1 * day))
        assert gov.memories.get(Scope(T, U), rel_strong.id).strength == pytest.approx(math.exp(-0.05 * day))
        assert gov.store.get_memory(Scope(T, U), user_strong.id).strength == 1.0

    # Consolidation (weekly): the pair above the setting merges, the pair below does not
    week = gov.governance.run(JobName.CONSOLIDATE, Scope(T, U), T0 + 7 * DAY - 2 * MINUTE)
    assert week.consolidated == 2 and {c.target for c in week.changes if c.action == "consolidation-into"} == {
        p.id for p in pair
    }
    assert all(statuses(gov)[a.id] is MemoryStatus.ACTIVE for a in apart)

    # User memories: older than 7 days (the weak one is already below 0.3)...
    assert user_weak.id not in compressed_at(T0 + 7 * DAY - MINUTE)
    assert user_weak.id in compressed_at(T0 + 7 * DAY + MINUTE)
    # ...and below 0.3 (the full-strength one crosses at 12.04 days)
    at_user_threshold = T0 + crossing(1.0, 0.3, 0.1)
    assert user_strong.id not in compressed_at(at_user_threshold - MINUTE)
    assert user_strong.id in compressed_at(at_user_threshold + MINUTE)
    # Relational memories: older than 14 days (the weak one is already below 0.2)...
    assert rel_weak.id not in compressed_at(T0 + 14 * DAY - MINUTE)
    assert rel_weak.id in compressed_at(T0 + 14 * DAY + MINUTE)
    # ...and below 0.2 (the full-strength one crosses at 32.19 days), never at the user rule's 0.3
    at_user_rule = T0 + crossing(1.0, 0.3, 0.05) + MINUTE
    assert rel_strong.id not in compressed_at(at_user_rule)
    at_relational_threshold = T0 + crossing(1.0, 0.2, 0.05)
    assert rel_strong.id not in compressed_at(at_relational_threshold - MINUTE)
    assert rel_strong.id in compressed_at(at_relational_threshold + MINUTE)

    # Then recall finds the compact and consolidated memories, and their provenance reaches every original
    clock.set(at_relational_threshold + DAY)
    compressed_originals = {user_strong.id, user_weak.id, rel_strong.id, rel_weak.id}
    reached: set[str] = set()
    for original in (user_strong, user_weak, rel_strong, rel_weak):
        hits = gov.recall.recall(Scope(T, U), RecallQuery(query=original.content, domain=DomainFilter.BOTH, limit=3))
        compact = [h.memory for h in hits if h.memory.status is MemoryStatus.COMPRESSED]
        assert compact, f"recall of {original.content!r} found no compact memory"
        assert original.content in compact[0].content
        reached |= derived_from(gov, compact[0].id)
        assert all(h.memory.id not in compressed_originals for h in hits)  # archived: not recalled by default
    assert reached == compressed_originals

    [consolidated] = [
        h.memory
        for h in gov.recall.recall(Scope(T, U), RecallQuery(query="Prefers morning meetings", limit=5))
        if h.memory.metadata.get("governance", {}).get("operation") == "consolidation"
    ]
    assert derived_from(gov, consolidated.id) == {p.id for p in pair}
    sources = {s["memory_id"]: s["interaction_id"] for s in consolidated.metadata["governance"]["sources"]}
    assert sources == {p.id: p.source.interaction_id for p in pair}
    # and every original is still there, archived, with its own provenance
    for original in (*pair, user_strong, user_weak, rel_strong, rel_weak):
        kept = gov.store.get_memory(Scope(T, U), original.id)
        assert kept.status is MemoryStatus.ARCHIVED and kept.source == original.source
    with_archived = gov.recall.recall(Scope(T, U), RecallQuery(query="dog named Max", include_archived=True, limit=5))
    assert user_strong.id in {h.memory.id for h in with_archived}
