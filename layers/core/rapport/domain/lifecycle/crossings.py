"""What the daily decay job writes: a memory's strength only when its decay has crossed a threshold a rule acts on.

Every reader decays the stored strength itself (`decay.decayed_to`), so a daily write of the decayed value would
change nothing anyone sees, at the price of one item write per memory per day. What the stored value is still good
for is the side of each rule's threshold a memory is on: a reader of the raw table (an export, the console, an
analytics scan) then never takes a memory that has faded past a rule for a strong one.
"""

from __future__ import annotations

from datetime import datetime

from rapport.domain.lifecycle.compression import compression_thresholds
from rapport.domain.lifecycle.decay import decayed_to, effective_strength
from rapport.domain.models import Domain, Memory
from rapport.settings import GovernanceSettings


def strength_thresholds(domain: Domain, settings: GovernanceSettings) -> tuple[float, ...]:
    """The strengths a rule acts on, by domain: today compression's (0.3 for user memories, 0.2 for relational
    ones). Tiers, retention and consolidation read no strength threshold."""
    _, below = compression_thresholds(domain, settings)
    return (below,)


def crossed_threshold(memory: Memory, now: datetime, settings: GovernanceSettings) -> float | None:
    """The threshold the memory's strength has fallen below since it was stored (the lowest, when several), or
    None: the stored strength is at or above it and the strength as of `now` is below it."""
    current = effective_strength(memory, now, settings)
    crossed = [t for t in strength_thresholds(memory.domain, settings) if memory.strength >= t > current]
    return min(crossed) if crossed else None


def decay_to_persist(memory: Memory, now: datetime, settings: GovernanceSettings) -> Memory | None:
    """The memory with its decay written down as of `now` when that crosses a threshold, else None (no write).

    Stateless and idempotent: once written, the stored strength is below the threshold, so a second run at the same
    moment (or any later one, until a reinforcement lifts the memory back above it) finds nothing to write.
    """
    if crossed_threshold(memory, now, settings) is None:
        return None
    return decayed_to(memory, now, settings)
