"""The relational state math: the numbers of docs/relational-state.md by hand, and properties that must hold for
any history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rapport.domain.relational_state import (
    InteractionEffect,
    RelationalEvent,
    RelationalState,
    ToneModifier,
    apply_event,
    apply_interaction,
    broken_promise_penalty,
    decay_toward,
    grudge_increment,
    initial_state,
    read_state,
    settle,
    tone_modifier,
)
from rapport.settings import RelationalSettings

POLICY = RelationalSettings()
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def _state(**values: float) -> RelationalState:
    base = {"trust": 0.5, "sentiment": 0.5, "grudge": 0.0, "familiarity": 0.0}
    base.update(values)
    return RelationalState.model_validate(
        {**base, "trust_at": T0, "sentiment_at": T0, "grudge_at": T0, "familiarity_at": T0}
    )


def test_an_interaction_moves_each_variable_by_the_brief() -> None:
    # Given a neutral newcomer, when a frustrated message with mood -0.4 arrives
    after = apply_interaction(initial_state(POLICY), InteractionEffect(frustration=True, mood_delta=-0.4), T0, POLICY)
    reading = read_state(after, T0, POLICY)
    # Then trust +0.01, familiarity +0.005, grudge +0.05, and sentiment steps 0.7 of the way to the observed mood
    # (-0.4 on the 0..1 scale is 0.3): 0.5 + 0.7 x (0.3 - 0.5)
    assert (round(reading.trust, 3), round(reading.familiarity, 3)) == (0.51, 0.005)
    assert round(reading.sentiment, 3) == 0.36
    assert round(reading.grudge, 3) == 0.05
    assert round(reading.relation_bias, 5) == round(0.51 * 0.005, 5)


@pytest.mark.parametrize(
    ("effect", "increment"),
    [
        (InteractionEffect(), 0.0),
        (InteractionEffect(shouting=True), 0.0),
        (InteractionEffect(frustration=True), 0.05),
        (InteractionEffect(frustration=True, shouting=True), 0.05),
        (InteractionEffect(anger=True), 0.10),
        (InteractionEffect(anger=True, frustration=True), 0.10),
        (InteractionEffect(anger=True, shouting=True), 0.15),
        (InteractionEffect(crisis=True), 0.20),
        (InteractionEffect(crisis=True, anger=True, shouting=True), 0.35),
    ],
)
def test_grudge_increments(effect: InteractionEffect, increment: float) -> None:
    assert grudge_increment(effect, POLICY) == pytest.approx(increment)


def test_sentiment_halves_its_distance_to_neutral_every_six_hours() -> None:
    state = _state(sentiment=0.1)
    assert read_state(state, T0 + 6 * HOUR, POLICY).sentiment == pytest.approx(0.3)
    assert read_state(state, T0 + 12 * HOUR, POLICY).sentiment == pytest.approx(0.4)
    assert read_state(_state(sentiment=0.9), T0 + 6 * HOUR, POLICY).sentiment == pytest.approx(0.7)


def test_grudge_halves_every_twelve_hours_and_trust_and_familiarity_never_decay() -> None:
    state = _state(grudge=0.8, trust=0.7, familiarity=0.3)
    at_12h = read_state(state, T0 + 12 * HOUR, POLICY)
    at_24h = read_state(state, T0 + 24 * HOUR, POLICY)
    assert (at_12h.grudge, at_24h.grudge) == (pytest.approx(0.4), pytest.approx(0.2))
    assert read_state(state, T0 + 6 * HOUR, POLICY).grudge == pytest.approx(0.8 / 2**0.5)
    assert (at_24h.trust, at_24h.familiarity) == (0.7, 0.3)


@pytest.mark.parametrize(
    ("grudge", "modifier"),
    [
        (0.0, None),
        (0.399, None),
        (0.4, ToneModifier.CAUTIOUS),
        (0.699, ToneModifier.CAUTIOUS),
        (0.7, ToneModifier.CAUTIOUS_DEFENSIVE),
        (1.0, ToneModifier.CAUTIOUS_DEFENSIVE),
    ],
)
def test_tone_modifier_thresholds(grudge: float, modifier: ToneModifier | None) -> None:
    assert tone_modifier(grudge, POLICY) == modifier


def test_trust_grows_to_the_ceiling_and_stops() -> None:
    state = _state(trust=0.945)
    state = apply_interaction(state, InteractionEffect(), T0, POLICY)
    assert state.trust == pytest.approx(0.95)
    assert apply_interaction(state, InteractionEffect(), T0, POLICY).trust == pytest.approx(0.95)
    assert apply_event(state, RelationalEvent.PROMISE_KEPT, T0, POLICY).trust == pytest.approx(0.95)


@pytest.mark.parametrize(
    ("trust", "penalty"),
    [(0.95, 0.10), (0.7, 0.10), (0.69, 0.05), (0.4, 0.05), (0.39, 0.02), (0.01, 0.01)],
)
def test_broken_promise_costs_by_prior_trust_tier(trust: float, penalty: float) -> None:
    after = apply_event(_state(trust=trust), RelationalEvent.BROKEN_PROMISE, T0 + HOUR, POLICY)
    assert after.trust == pytest.approx(trust - penalty)  # 0.01 - 0.02 floors at 0


def test_penalty_tiers() -> None:
    assert [broken_promise_penalty(t, POLICY) for t in (0.8, 0.5, 0.2)] == [0.10, 0.05, 0.02]


def test_promise_kept_raises_trust_and_leaves_the_rest() -> None:
    after = apply_event(_state(trust=0.6, grudge=0.3), RelationalEvent.PROMISE_KEPT, T0, POLICY)
    assert (after.trust, after.grudge) == (pytest.approx(0.62), 0.3)


def test_crisis_resolved_closes_the_flag_and_takes_back_the_crisis_grudge() -> None:
    flagged = apply_interaction(_state(grudge=0.1), InteractionEffect(crisis=True), T0, POLICY)
    assert flagged.crisis_open and flagged.grudge == pytest.approx(0.3)
    resolved = apply_event(flagged, RelationalEvent.CRISIS_RESOLVED, T0, POLICY)
    assert not resolved.crisis_open and resolved.grudge == pytest.approx(0.1)
    # With no crisis open there is nothing to resolve: other grievances stay.
    assert apply_event(_state(grudge=0.5), RelationalEvent.CRISIS_RESOLVED, T0, POLICY).grudge == 0.5


def test_a_write_from_a_lagging_clock_does_not_undo_decay() -> None:
    state = settle(_state(grudge=0.8), T0 + 12 * HOUR, POLICY)
    late = apply_interaction(state, InteractionEffect(), T0 + 6 * HOUR, POLICY)
    assert late.grudge == pytest.approx(0.4) and late.grudge_at == T0 + 12 * HOUR


# --- properties -------------------------------------------------------------------------------------------------

unit = st.floats(0.0, 1.0, allow_nan=False)
effects = st.builds(
    InteractionEffect,
    frustration=st.booleans(),
    anger=st.booleans(),
    shouting=st.booleans(),
    crisis=st.booleans(),
    mood_delta=st.floats(-1.0, 1.0, allow_nan=False),
)
steps = st.lists(
    st.tuples(
        st.floats(0.0, 200.0, allow_nan=False),  # hours since the previous step
        st.one_of(effects, st.sampled_from(list(RelationalEvent))),
    ),
    max_size=40,
)
states = st.builds(
    lambda trust, sentiment, grudge, familiarity: _state(
        trust=trust, sentiment=sentiment, grudge=grudge, familiarity=familiarity
    ),
    unit,
    unit,
    unit,
    unit,
)


@settings(max_examples=200, deadline=None)
@given(start=states, history=steps, read_after=st.floats(0.0, 500.0, allow_nan=False))
def test_bounds_always_hold(start: RelationalState, history: list, read_after: float) -> None:
    state, at = start, T0
    for hours, step in history:
        at += timedelta(hours=hours)
        if isinstance(step, RelationalEvent):
            state = apply_event(state, step, at, POLICY)
        else:
            state = apply_interaction(state, step, at, POLICY)
        reading = read_state(state, at + timedelta(hours=read_after), POLICY)
        for value in (reading.trust, reading.sentiment, reading.grudge, reading.familiarity, reading.relation_bias):
            assert 0.0 <= value <= 1.0
        assert reading.relation_bias == pytest.approx(reading.trust * reading.familiarity)


@given(
    value=unit,
    target=unit,
    half_life=st.floats(0.1, 100.0, allow_nan=False),
    halvings=st.integers(0, 8),
)
def test_half_life_is_exact(value: float, target: float, half_life: float, halvings: int) -> None:
    decayed = decay_toward(value, target, half_life, half_life * halvings)
    assert decayed - target == pytest.approx((value - target) / 2**halvings, abs=1e-12)


@settings(max_examples=200)
@given(
    start=states,
    read_times=st.lists(st.floats(0.0, 100.0, allow_nan=False), min_size=1, max_size=6),
    final=st.floats(0.0, 100.0, allow_nan=False),
)
def test_the_order_of_reads_does_not_change_results(start: RelationalState, read_times: list, final: float) -> None:
    # Reads are pure; and even settling the decay into the state at each read (what a write does first) gives the
    # same answer at the end as reading the original state once.
    end = T0 + timedelta(hours=100.0 + final)
    direct = read_state(start, end, POLICY)
    settled = start
    for hours in sorted(read_times):
        read_state(start, T0 + timedelta(hours=hours), POLICY)
        settled = settle(settled, T0 + timedelta(hours=hours), POLICY)
    again = read_state(settled, end, POLICY)
    for name in ("trust", "sentiment", "grudge", "familiarity"):
        assert getattr(again, name) == pytest.approx(getattr(direct, name), abs=1e-9)
    shuffled = [read_state(start, T0 + timedelta(hours=h), POLICY) for h in reversed(read_times)]
    in_order = [read_state(start, T0 + timedelta(hours=h), POLICY) for h in read_times]
    assert shuffled == list(reversed(in_order))
