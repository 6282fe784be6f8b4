"""Decay and reinforcement: how strong a memory is now, from its stored strength and when that was last set."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from rapport.domain.models import Domain, Memory
from rapport.settings import GovernanceSettings

SECONDS_PER_DAY = 86_400.0
MAX_STRENGTH = 1.0  # the brief bounds reinforcement at 1.0


def decay_rate(domain: Domain, settings: GovernanceSettings) -> float:
    """Per day: user memories fade twice as fast as what we learned about working together."""
    return settings.user_decay_rate if domain is Domain.USER else settings.relational_decay_rate


def days_between(start: datetime, end: datetime) -> float:
    """Whole and fractional days from start to end; never negative (an imported or skewed time counts as now)."""
    return max((end - start).total_seconds() / SECONDS_PER_DAY, 0.0)


def decayed(strength: float, days: float, rate: float) -> float:
    """`strength x exp(-rate x days)`: exponential, so decaying a days then b days equals decaying a + b days."""
    return strength * math.exp(-rate * max(days, 0.0))


def decay_anchor(memory: Memory) -> datetime:
    """The moment the stored strength refers to: the last reinforcement, or the last time the job wrote decay down."""
    if memory.decayed_at is None or memory.decayed_at < memory.last_reinforced_at:
        return memory.last_reinforced_at
    return memory.decayed_at


def effective_strength(memory: Memory, now: datetime, settings: GovernanceSettings) -> float:
    """What recall and the jobs use: the stored strength decayed from its anchor to now."""
    return _decayed_from(memory, decay_anchor(memory), now, settings)


def _decayed_from(memory: Memory, anchor: datetime, now: datetime, settings: GovernanceSettings) -> float:
    return decayed(memory.strength, days_between(anchor, now), decay_rate(memory.domain, settings))


def reinforced_strength(memory: Memory, now: datetime, boost: float, settings: GovernanceSettings) -> float:
    """Reinforcement adds to what is left of the strength today, not to a stale stored value; bounded at 1.0."""
    return min(MAX_STRENGTH, effective_strength(memory, now, settings) + max(boost, 0.0))


def reinforce(memory: Memory, now: datetime, boost: float, settings: GovernanceSettings) -> Memory:
    """The memory as it is after being used (or observed again) now: stronger, and its decay restarts."""
    return memory.model_copy(
        update={
            "strength": reinforced_strength(memory, now, boost, settings),
            "last_reinforced_at": now,
            "decayed_at": None,
        }
    )


def decayed_to(memory: Memory, now: datetime, settings: GovernanceSettings, *, strength: float | None = None) -> Memory:
    """The memory as every reader sees it at `now`: its strength decayed from the anchor, the anchor moved to now.

    The one place a stored strength becomes the strength shown or used (API answers, recall, the jobs). Decay
    composes, so writing this view back changes nothing any later reader computes; a memory whose anchor is not in
    the past is returned as is. `strength`: what `strength_at` gives at `now`, from a caller that has computed it
    (recall, for each candidate).
    """
    if decay_anchor(memory) >= now:
        return memory
    if strength is None:
        strength = effective_strength(memory, now, settings)
    return memory.model_copy(update={"strength": strength, "decayed_at": now})


def strength_at(memory: Memory, now: datetime, settings: GovernanceSettings) -> float:
    """The strength `decayed_to(memory, now, settings)` holds, without the copy: what a reader that scores many
    memories and shows few needs of the rest (recall, for each of its candidates: the anchor is found once)."""
    anchor = decay_anchor(memory)
    return memory.strength if anchor >= now else _decayed_from(memory, anchor, now, settings)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_NAIVE_EPOCH = datetime(1970, 1, 1)
_MICROSECOND = timedelta(microseconds=1)


def epoch_micros(moment: datetime) -> int:
    """Whole microseconds since the epoch: the difference of two is exactly the difference of the datetimes, so a
    reader that measures many memories from one `now` subtracts integers rather than datetimes."""
    return (moment - (_NAIVE_EPOCH if moment.tzinfo is None else _EPOCH)) // _MICROSECOND


def strength_since(strength: float, anchor_micros: int, now_micros: int, rate: float) -> float:
    """What `strength_at` gives a memory of this `strength` and decay `rate` whose `decay_anchor` is `anchor_micros`
    (`epoch_micros`), at `now_micros`, to the last bit: the same divisions of the same whole microseconds."""
    if anchor_micros >= now_micros:
        return strength
    return decayed(strength, max((now_micros - anchor_micros) / 10**6 / SECONDS_PER_DAY, 0.0), rate)
