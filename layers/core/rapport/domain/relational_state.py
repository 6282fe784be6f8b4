"""Relational state math: pure functions over trust, sentiment, grudge and familiarity, decayed on read.

The rules and their numbers: docs/relational-state.md."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from rapport.settings import RelationalSettings

_SECONDS_PER_HOUR = 3600.0


class ToneModifier(StrEnum):
    CAUTIOUS = "cautious"
    CAUTIOUS_DEFENSIVE = "cautious_defensive"


class RelationalEvent(StrEnum):
    """Events a tenant reports about the relationship (POST /v1/users/{id}/events)."""

    BROKEN_PROMISE = "broken_promise"
    PROMISE_KEPT = "promise_kept"
    CRISIS_RESOLVED = "crisis_resolved"


class RelationalState(BaseModel):
    """What is stored: each variable with the moment it was last set. Sentiment and grudge decay from that moment
    when read, so an idle person's state is never rewritten by a job."""

    model_config = ConfigDict(frozen=True)

    trust: float = Field(ge=0.0, le=1.0)
    sentiment: float = Field(ge=0.0, le=1.0)
    grudge: float = Field(ge=0.0, le=1.0)
    familiarity: float = Field(ge=0.0, le=1.0)
    trust_at: datetime | None = None
    sentiment_at: datetime | None = None
    grudge_at: datetime | None = None
    familiarity_at: datetime | None = None
    # A crisis flag stays open until the tenant reports `crisis_resolved`: a safety signal should not fade by itself.
    crisis_open: bool = False
    crisis_flagged_at: datetime | None = None
    # Digests of the idempotency keys of the latest reported events, so a retried report changes the state once.
    applied_event_keys: tuple[str, ...] = ()


class StateReading(BaseModel):
    """The state as it is at one moment: decay applied, plus what follows from it."""

    model_config = ConfigDict(frozen=True)

    trust: float
    sentiment: float
    grudge: float
    familiarity: float
    relation_bias: float
    tone_modifier: ToneModifier | None
    crisis_open: bool
    at: datetime


@dataclass(frozen=True)
class InteractionEffect:
    """What one interaction brings to the state: the signals detected in the user's words."""

    frustration: bool = False
    anger: bool = False
    shouting: bool = False
    crisis: bool = False
    mood_delta: float = 0.0  # -1..1


def initial_state(policy: RelationalSettings) -> RelationalState:
    return RelationalState(
        trust=policy.initial_trust,
        sentiment=policy.sentiment_neutral,
        grudge=0.0,
        familiarity=policy.initial_familiarity,
    )


def _clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return min(high, max(low, value))


def _hours_between(since: datetime | None, at: datetime) -> float:
    """Elapsed hours, never negative: a write from a clock that lags must not make a value grow back."""
    if since is None:
        return 0.0
    return max(0.0, (at - since).total_seconds() / _SECONDS_PER_HOUR)


def decay_toward(value: float, target: float, half_life_hours: float, hours: float) -> float:
    """Exponential decay: half of the distance to `target` is gone after each half-life."""
    return target + (value - target) * 0.5 ** (max(hours, 0.0) / half_life_hours)


def _later(moment: datetime | None, at: datetime) -> datetime:
    return at if moment is None or at > moment else moment


def settle(state: RelationalState, at: datetime, policy: RelationalSettings) -> RelationalState:
    """The same state with decay up to `at` folded into the stored values. Reading a settled state at any later
    time gives what reading the original would (half-life decay composes), so settling never changes results."""
    sentiment = decay_toward(
        state.sentiment,
        policy.sentiment_neutral,
        policy.sentiment_half_life_hours,
        _hours_between(state.sentiment_at, at),
    )
    grudge = decay_toward(state.grudge, 0.0, policy.grudge_half_life_hours, _hours_between(state.grudge_at, at))
    return state.model_copy(
        update={
            "sentiment": _clamp(sentiment),
            "grudge": _clamp(grudge),
            "sentiment_at": _later(state.sentiment_at, at),
            "grudge_at": _later(state.grudge_at, at),
        }
    )


def tone_modifier(grudge: float, policy: RelationalSettings) -> ToneModifier | None:
    if grudge >= policy.cautious_defensive_grudge:
        return ToneModifier.CAUTIOUS_DEFENSIVE
    if grudge >= policy.cautious_grudge:
        return ToneModifier.CAUTIOUS
    return None


def read_state(state: RelationalState, at: datetime, policy: RelationalSettings) -> StateReading:
    """The state at `at`; pure, so reads in any order give the same answers."""
    settled = settle(state, at, policy)
    return StateReading(
        trust=settled.trust,
        sentiment=settled.sentiment,
        grudge=settled.grudge,
        familiarity=settled.familiarity,
        relation_bias=settled.trust * settled.familiarity,
        tone_modifier=tone_modifier(settled.grudge, policy),
        crisis_open=settled.crisis_open,
        at=at,
    )


def grudge_increment(effect: InteractionEffect, policy: RelationalSettings) -> float:
    """The strongest emotional grievance counts once (anger with shouting replaces anger, anger replaces
    frustration); a crisis flag adds its own amount on top, since it is a different kind of signal."""
    emotional = 0.0
    if effect.frustration:
        emotional = policy.grudge_frustration
    if effect.anger:
        emotional = max(emotional, policy.grudge_anger_shouting if effect.shouting else policy.grudge_anger)
    return emotional + (policy.grudge_crisis if effect.crisis else 0.0)


def _raise_trust(trust: float, amount: float, ceiling: float) -> float:
    # A trust already above the ceiling (the ceiling was lowered in settings) is kept, not cut down.
    return max(trust, min(ceiling, trust + amount))


def observed_sentiment(mood_delta: float, neutral: float) -> float:
    """A message's mood (-1..1) on the sentiment scale (0..1): -1 is 0, 0 is neutral, +1 is 1."""
    mood = _clamp(mood_delta, -1.0, 1.0)
    return neutral + mood * (1.0 - neutral) if mood >= 0 else neutral + mood * neutral


def moved_sentiment(sentiment: float, effect: InteractionEffect, policy: RelationalSettings) -> float:
    """Sentiment after one message: an exponential moving average whose step toward the message's observed mood
    is `mood_factor` (0.7) of the distance, so it moves fast but no run of messages reaches a bound.

    A message with no mood reading (0) is no evidence and changes nothing. The step never goes against the mood's
    sign: a negative message is not evidence the person feels better because they felt worse before, and a crisis
    message never raises sentiment whatever its wording scored."""
    mood = _clamp(effect.mood_delta, -1.0, 1.0)
    if mood == 0.0 and not effect.crisis:
        return sentiment
    step = _clamp(policy.mood_factor)
    averaged = sentiment + step * (observed_sentiment(mood, policy.sentiment_neutral) - sentiment)
    if effect.crisis or mood < 0:
        return _clamp(min(sentiment, averaged))
    return _clamp(max(sentiment, averaged))


def apply_interaction(
    state: RelationalState, effect: InteractionEffect, at: datetime, policy: RelationalSettings
) -> RelationalState:
    """One interaction at `at`: decay to then, then trust and familiarity grow, sentiment moves toward the mood,
    grudge grows by the grievance."""
    current = settle(state, at, policy)
    crisis_open = current.crisis_open or effect.crisis
    return current.model_copy(
        update={
            "trust": _raise_trust(current.trust, policy.trust_per_interaction, policy.trust_ceiling),
            "trust_at": _later(current.trust_at, at),
            "familiarity": _clamp(current.familiarity + policy.familiarity_per_interaction),
            "familiarity_at": _later(current.familiarity_at, at),
            "sentiment": moved_sentiment(current.sentiment, effect, policy),
            "grudge": _clamp(current.grudge + grudge_increment(effect, policy)),
            "crisis_open": crisis_open,
            "crisis_flagged_at": _later(current.crisis_flagged_at, at) if effect.crisis else current.crisis_flagged_at,
        }
    )


def broken_promise_penalty(trust: float, policy: RelationalSettings) -> float:
    """The penalty for the tier the trust was in before the broken promise."""
    if trust >= policy.trust_tier_high:
        return policy.broken_promise_penalty_high
    if trust >= policy.trust_tier_medium:
        return policy.broken_promise_penalty_medium
    return policy.broken_promise_penalty_low


def apply_event(
    state: RelationalState, event: RelationalEvent, at: datetime, policy: RelationalSettings
) -> RelationalState:
    current = settle(state, at, policy)
    if event is RelationalEvent.BROKEN_PROMISE:
        trust = _clamp(current.trust - broken_promise_penalty(current.trust, policy))
        return current.model_copy(update={"trust": trust, "trust_at": _later(current.trust_at, at)})
    if event is RelationalEvent.PROMISE_KEPT:
        trust = _raise_trust(current.trust, policy.promise_kept_trust_bonus, policy.trust_ceiling)
        return current.model_copy(update={"trust": trust, "trust_at": _later(current.trust_at, at)})
    # CRISIS_RESOLVED: close the flag and take back (up to) the grudge a crisis adds; with no crisis open there
    # is nothing to resolve, and other grievances must not be wiped by a stray event.
    if not current.crisis_open:
        return current
    return current.model_copy(
        update={
            "grudge": _clamp(current.grudge - policy.crisis_resolved_grudge_relief),
            "crisis_open": False,
        }
    )
