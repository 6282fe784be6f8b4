"""The governance rules as pure functions: the thresholds of docs/governance.md by hand, and properties that hold
for any input."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rapport.domain.lifecycle.compression import compression_groups, extractive_summary, is_compressible
from rapport.domain.lifecycle.consolidation import cluster, cosine, is_consolidatable
from rapport.domain.lifecycle.crossings import crossed_threshold, decay_to_persist, strength_thresholds
from rapport.domain.lifecycle.decay import (
    decay_anchor,
    decay_rate,
    decayed_to,
    effective_strength,
    epoch_micros,
    reinforce,
    strength_at,
    strength_since,
)
from rapport.domain.lifecycle.derived import GOVERNANCE_KEY
from rapport.domain.lifecycle.retention import effective_plan, messages_over_cap, oldest_to_trim, parse_plan
from rapport.domain.lifecycle.tiers import leaving_short_term, working_memory_over
from rapport.domain.models import Domain, Memory, MemoryStatus, Provenance, SourceKind, Tier
from rapport.settings import GovernanceSettings, PlanTier

RULES = GovernanceSettings()
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)
SECOND = timedelta(seconds=1)


def memory(
    domain: Domain = Domain.USER,
    *,
    strength: float = 1.0,
    created: datetime = T0,
    reinforced: datetime | None = None,
    memory_type: str | None = None,
    **fields: object,
) -> Memory:
    counter = fields.pop("n", 0)
    return Memory.model_validate(
        {
            "id": f"m{counter:04d}",
            "tenant_id": "t",
            "user_id": "u",
            "domain": domain,
            "type": memory_type or ("fact" if domain is Domain.USER else "working_style"),
            "content": f"memory {counter}",
            "strength": strength,
            "created_at": created,
            "updated_at": created,
            "last_reinforced_at": reinforced or created,
            **fields,
        }
    )


# decay


@given(
    st.sampled_from([Domain.USER, Domain.RELATIONAL]),
    st.floats(0.0, 1.0),
    st.integers(-(10**12), 10**13),
    st.integers(-(10**12), 10**13),
    st.booleans(),
)
def test_strength_from_epoch_microseconds_is_strength_at_to_the_bit(
    domain: Domain, strength: float, reinforced_us: int, now_us: int, decay_written: bool
) -> None:
    # Given a memory reinforced (and perhaps decayed since) some microseconds from T0, and a now anywhere around it
    reinforced = T0 + timedelta(microseconds=reinforced_us)
    extra = {"decayed_at": reinforced + 3 * DAY + SECOND} if decay_written else {}
    item = memory(domain, strength=strength, reinforced=reinforced, **extra)
    now = T0 + timedelta(microseconds=now_us)
    # When its strength is measured from the anchor and now as whole microseconds
    anchor, at = epoch_micros(decay_anchor(item)), epoch_micros(now)
    measured = strength_since(item.strength, anchor, at, decay_rate(domain, RULES))
    # Then it is what the datetimes give, to the last bit
    assert measured == strength_at(item, now, RULES)


def test_epoch_microseconds_differ_as_the_datetimes_do() -> None:
    later = T0 + timedelta(days=400, microseconds=7)
    assert epoch_micros(later) - epoch_micros(T0) == (later - T0) // timedelta(microseconds=1)
    assert epoch_micros(datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)) == 10**6
    assert epoch_micros(datetime(1970, 1, 1, 0, 0, 1)) == 10**6  # a naive moment, from the naive epoch


@pytest.mark.parametrize(("domain", "rate"), [(Domain.USER, 0.1), (Domain.RELATIONAL, 0.05)])
def test_effective_strength_is_the_brief_formula_by_domain(domain: Domain, rate: float) -> None:
    fresh = memory(domain, strength=0.8)
    for days in (0, 1, 7, 14, 30.5):
        assert effective_strength(fresh, T0 + timedelta(days=days), RULES) == pytest.approx(
            0.8 * math.exp(-rate * days), rel=1e-12
        )


@settings(max_examples=200, deadline=None)
@given(
    strength=st.floats(0, 1),
    first=st.floats(0, 60),
    second=st.floats(0, 60),
    domain=st.sampled_from(list(Domain)),
)
def test_a_memory_seen_as_of_a_moment_decays_on_as_the_stored_one_does(
    strength: float, first: float, second: float, domain: Domain
) -> None:
    """Exponential decay composes, so writing the decayed view back (a job, a PATCH) never changes what a later
    reader computes."""
    original = memory(domain, strength=strength)
    midway = T0 + timedelta(days=first)
    end = midway + timedelta(days=second)
    seen = decayed_to(original, midway, RULES)
    assert seen.strength == pytest.approx(effective_strength(original, midway, RULES), rel=1e-12, abs=1e-300)
    assert effective_strength(seen, end, RULES) == pytest.approx(
        effective_strength(original, end, RULES), rel=1e-9, abs=1e-300
    )
    assert decayed_to(seen, midway, RULES) == seen  # nothing left to decay at the same moment


def test_a_memory_reinforced_after_the_moment_asked_is_shown_as_stored() -> None:
    later = memory(strength=0.7, reinforced=T0 + DAY)
    assert decayed_to(later, T0, RULES) == later


@given(
    domain=st.sampled_from(list(Domain)),
    strength=st.floats(0.0, 1.0),
    reinforced_days=st.floats(-30, 30),
    days=st.floats(-5, 400),
)
def test_the_strength_recall_scores_is_the_one_the_decayed_memory_shows(
    domain: Domain, strength: float, reinforced_days: float, days: float
) -> None:
    # Recall scores many memories and decays only those it returns: the two must agree to the last bit
    stored = memory(domain, strength=strength, reinforced=T0 + timedelta(days=reinforced_days))
    now = T0 + timedelta(days=days)
    assert strength_at(stored, now, RULES) == decayed_to(stored, now, RULES).strength


@pytest.mark.parametrize(("domain", "below", "rate"), [(Domain.USER, 0.3, 0.1), (Domain.RELATIONAL, 0.2, 0.05)])
def test_decay_is_written_down_once_when_it_crosses_the_domains_compression_strength(
    domain: Domain, below: float, rate: float
) -> None:
    full = memory(domain, strength=1.0)
    crossing = T0 + timedelta(days=math.log(1.0 / below) / rate)
    # a minute before the crossing: nothing to write
    assert crossed_threshold(full, crossing - timedelta(minutes=1), RULES) is None
    assert decay_to_persist(full, crossing - timedelta(minutes=1), RULES) is None
    # a minute after: the decayed strength, anchored at that moment
    after = crossing + timedelta(minutes=1)
    assert crossed_threshold(full, after, RULES) == below
    written = decay_to_persist(full, after, RULES)
    assert written is not None and written.decayed_at == after
    assert written.strength == pytest.approx(effective_strength(full, after, RULES)) and written.strength < below
    # and never again, however long it keeps fading
    for days in (0, 1, 30, 365):
        assert decay_to_persist(written, after + timedelta(days=days), RULES) is None


@settings(max_examples=100, deadline=None)
@given(strength=st.floats(0.01, 1), domain=st.sampled_from(list(Domain)), hours=st.integers(1, 48))
def test_daily_runs_write_a_memory_at_most_once_per_threshold_while_it_is_not_used(
    strength: float, domain: Domain, hours: int
) -> None:
    """Whatever the starting strength and the run cadence: one write per threshold crossed, none otherwise, and
    every reader's strength is the same as if nothing had been written."""
    stored = memory(domain, strength=strength)
    writes = 0
    for run in range(1, 24 * 60 // hours):
        now = T0 + timedelta(hours=run * hours)
        written = decay_to_persist(stored, now, RULES)
        if written is not None:
            writes += 1
            stored = written
        assert effective_strength(stored, now, RULES) == pytest.approx(
            effective_strength(memory(domain, strength=strength), now, RULES), rel=1e-9, abs=1e-300
        )
    assert writes <= len(strength_thresholds(domain, RULES))


@settings(max_examples=200, deadline=None)
@given(strength=st.floats(0, 1), days=st.floats(0, 400), boost=st.floats(0, 1))
def test_reinforcement_adds_to_todays_strength_and_never_passes_one(strength: float, days: float, boost: float) -> None:
    now = T0 + timedelta(days=days)
    before = effective_strength(memory(strength=strength), now, RULES)
    after = reinforce(memory(strength=strength), now, boost, RULES)
    assert after.strength == pytest.approx(min(1.0, before + boost))
    assert 0.0 <= after.strength <= 1.0
    assert after.last_reinforced_at == now and effective_strength(after, now, RULES) == after.strength


def test_reinforcing_a_decayed_memory_restarts_its_decay_from_now() -> None:
    faded = memory(strength=1.0)
    later = T0 + 10 * DAY
    boosted = reinforce(faded, later, 0.1, RULES)
    assert boosted.strength == pytest.approx(math.exp(-1.0) + 0.1)
    assert effective_strength(boosted, later + DAY, RULES) == pytest.approx((math.exp(-1.0) + 0.1) * math.exp(-0.1))


# compression thresholds: strictly older than the age, strictly weaker than the strength


@pytest.mark.parametrize(("domain", "age_days", "below"), [(Domain.USER, 7, 0.3), (Domain.RELATIONAL, 14, 0.2)])
def test_compression_fires_just_past_both_thresholds_and_not_at_them(
    domain: Domain, age_days: float, below: float
) -> None:
    now = T0 + timedelta(days=age_days)

    def candidate(age: timedelta, strength: float) -> Memory:
        # reinforced now, so the effective strength is exactly the stored one
        return memory(domain, strength=strength, created=now - age, reinforced=now)

    exactly_old = timedelta(days=age_days)
    assert is_compressible(candidate(exactly_old + SECOND, below - 1e-9), now, RULES)
    assert not is_compressible(candidate(exactly_old, below - 1e-9), now, RULES)  # not older than the age yet
    assert not is_compressible(candidate(exactly_old + SECOND, below), now, RULES)  # not below the strength
    assert not is_compressible(candidate(exactly_old - SECOND, 0.0), now, RULES)


def test_only_active_original_memories_are_compressed() -> None:
    now = T0 + 30 * DAY
    weak = {"strength": 0.01, "created": T0}
    assert is_compressible(memory(**weak), now, RULES)
    assert not is_compressible(memory(status=MemoryStatus.ARCHIVED, **weak), now, RULES)
    assert not is_compressible(memory(status=MemoryStatus.COMPRESSED, **weak), now, RULES)
    derived = memory(metadata={GOVERNANCE_KEY: {"operation": "consolidation"}}, **weak)
    assert not is_compressible(derived, now, RULES)


@settings(max_examples=100, deadline=None)
@given(
    types=st.lists(st.sampled_from(["fact", "preference", "goal"]), min_size=1, max_size=60),
    max_group=st.integers(1, 25),
)
def test_groups_hold_one_type_each_cover_every_memory_once_and_respect_the_size(
    types: list[str], max_group: int
) -> None:
    memories = [memory(n=i, memory_type=t, created=T0 + i * SECOND) for i, t in enumerate(types)]
    groups = compression_groups(memories, max_group)
    assert sorted(m.id for g in groups for m in g) == sorted(m.id for m in memories)
    assert all(len({m.type for m in g}) == 1 and 1 <= len(g) <= max_group for g in groups)
    assert compression_groups(list(reversed(memories)), max_group) == groups  # the input order does not matter


@settings(max_examples=100, deadline=None)
@given(
    contents=st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=30),
    max_chars=st.integers(100, 2000),
)
def test_an_extractive_summary_fits_and_counts_what_it_left_out(contents: list[str], max_chars: int) -> None:
    memories = [memory(n=i, content=c) for i, c in enumerate(contents)]
    summary = extractive_summary(memories, max_chars)
    assert 0 < len(summary) <= max_chars
    assert summary.startswith("Compressed ")


def test_an_extractive_summary_keeps_each_distinct_sentence_most_important_first() -> None:
    memories = [
        memory(n=1, content="Likes tea.", importance=0.2),
        memory(n=2, content="Works at Acme", importance=0.9),
        memory(n=3, content="likes tea", importance=0.1),
    ]
    assert extractive_summary(memories, 500) == "Compressed 3 fact memories: Works at Acme; Likes tea."


# consolidation clustering


def unit(angle_degrees: float) -> list[float]:
    radians = math.radians(angle_degrees)
    return [math.cos(radians), math.sin(radians)]


def test_cosine_threshold_is_inclusive_and_exact() -> None:
    threshold = RULES.consolidation_min_similarity
    angle = math.degrees(math.acos(threshold))
    just_in = cluster([("a", unit(0)), ("b", unit(angle - 0.01))], threshold, max_cluster=20)
    just_out = cluster([("a", unit(0)), ("b", unit(angle + 0.01))], threshold, max_cluster=20)
    assert just_in == [["a", "b"]] and just_out == []


def test_clusters_are_complete_linkage_not_chains() -> None:
    # a~b and b~c, but a and c are too far apart to share a cluster
    vectors = [("a", unit(0)), ("b", unit(25)), ("c", unit(50))]
    assert cluster(vectors, math.cos(math.radians(30)), max_cluster=20) == [["a", "b"]]


def test_pairs_kept_apart_never_share_a_cluster() -> None:
    vectors = [("a", unit(0)), ("b", unit(1)), ("c", unit(2))]
    clusters = cluster(vectors, 0.9, max_cluster=20, apart=frozenset({frozenset(("a", "b"))}))
    assert clusters == [["a", "c"]]


@settings(max_examples=100, deadline=None)
@given(
    angles=st.lists(st.floats(0, 180), min_size=0, max_size=30),
    threshold=st.floats(0.5, 0.99),
    max_cluster=st.integers(2, 6),
)
def test_every_pair_in_a_cluster_is_similar_and_no_memory_is_in_two(
    angles: list[float], threshold: float, max_cluster: int
) -> None:
    vectors = [(f"m{i}", unit(a)) for i, a in enumerate(angles)]
    by_id = dict(vectors)
    clusters = cluster(vectors, threshold, max_cluster=max_cluster)
    members = [m for c in clusters for m in c]
    assert len(members) == len(set(members))
    for c in clusters:
        assert 2 <= len(c) <= max_cluster
        assert all(cosine(by_id[a], by_id[b]) >= threshold for a in c for b in c)
    assert cluster(vectors, threshold, max_cluster=max_cluster) == clusters  # deterministic


def test_only_facts_and_patterns_with_embeddings_are_consolidated() -> None:
    assert is_consolidatable(memory(embedding=[1.0, 0.0]), RULES)
    assert not is_consolidatable(memory(embedding=None), RULES)
    assert not is_consolidatable(memory(memory_type="episode", embedding=[1.0]), RULES)
    assert not is_consolidatable(memory(Domain.RELATIONAL, memory_type="shared_context", embedding=[1.0]), RULES)
    assert is_consolidatable(memory(Domain.RELATIONAL, memory_type="working_style", embedding=[1.0]), RULES)


# retention caps


@pytest.mark.parametrize(
    ("plan", "cap"), [(PlanTier.COMMUNITY, 500), (PlanTier.CLINIC, 5_000), (PlanTier.ENTERPRISE, None)]
)
def test_the_brief_caps_per_plan(plan: PlanTier, cap: int | None) -> None:
    assert RULES.max_messages(plan) == cap


def test_the_more_generous_of_tenant_and_profile_plan_wins() -> None:
    community, clinic, enterprise = PlanTier.COMMUNITY, PlanTier.CLINIC, PlanTier.ENTERPRISE
    assert effective_plan(None, None, community) is community
    assert effective_plan(clinic, community, community) is clinic  # a profile's default does not undo the tenant's
    assert effective_plan(community, enterprise, community) is enterprise
    assert parse_plan("Clinic") is clinic and parse_plan("gold") is None and parse_plan(None) is None


def test_the_cap_holds_at_exactly_the_cap() -> None:
    assert messages_over_cap(500, 500) == 0
    assert messages_over_cap(501, 500) == 1
    assert messages_over_cap(10**9, None) == 0


@settings(max_examples=200, deadline=None)
@given(sizes=st.lists(st.integers(1, 20), max_size=80), cap=st.integers(1, 300))
def test_trimming_removes_the_fewest_oldest_interactions_that_bring_history_under_the_cap(
    sizes: list[int], cap: int
) -> None:
    history = [(f"i{n:03d}", size) for n, size in enumerate(sizes)]
    total = sum(sizes)
    doomed = oldest_to_trim(history, messages_over_cap(total, cap))
    assert doomed == [i for i, _ in history[: len(doomed)]]  # a prefix: the oldest
    removed = sum(size for _, size in history[: len(doomed)])
    assert total - removed <= cap
    if doomed:  # one interaction fewer would not have been enough
        assert total - (removed - history[len(doomed) - 1][1]) > cap


# tiers


def episode(n: int, *, session: str = "s1", created: datetime = T0, **fields: object) -> Memory:
    return memory(
        n=n,
        memory_type="episode",
        created=created,
        tier=Tier.SHORT_TERM,
        source=Provenance(kind=SourceKind.INTERACTION, interaction_id=f"i{n:04d}", message_index=0, session_id=session),
        **fields,
    )


def test_messages_leave_short_term_just_after_seven_days() -> None:
    now = T0 + 7 * DAY
    inside = episode(1, created=now - 7 * DAY)
    outside = episode(2, created=now - 7 * DAY - SECOND)
    assert [m.id for m in leaving_short_term([inside, outside], now, RULES)] == [outside.id]


def test_only_the_newest_hundred_messages_of_a_conversation_stay_short_term() -> None:
    conversation = [episode(n, created=T0 + n * SECOND) for n in range(101)]
    other = [episode(500 + n, session="s2", created=T0) for n in range(100)]
    leaving = leaving_short_term([*conversation, *other], T0 + DAY, RULES)
    assert [m.id for m in leaving] == [conversation[0].id]  # the oldest of the 101; s2 holds exactly 100


def test_working_tier_memories_retire_when_their_session_is_over() -> None:
    working = memory(tier=Tier.WORKING, created=T0)
    just_after = T0 + timedelta(minutes=30) + SECOND
    assert working_memory_over(working, session_live=False, now=just_after, settings=RULES)
    assert not working_memory_over(working, session_live=True, now=just_after, settings=RULES)
    assert not working_memory_over(working, session_live=False, now=T0 + timedelta(minutes=30), settings=RULES)
    assert not working_memory_over(memory(tier=Tier.SHORT_TERM), session_live=False, now=just_after, settings=RULES)
