"""Which tier a new memory goes to, by importance (DESIGN §10; the thresholds are settings)."""

from __future__ import annotations

from rapport.domain.models import Tier

_RANK = {Tier.WORKING: 0, Tier.SHORT_TERM: 1, Tier.LONG_TERM: 2}


def tier_for(importance: float, *, in_session: bool, long_term_above: float, short_term_above: float) -> Tier:
    """Above `long_term_above`: long-term (no expiry). Above `short_term_above`: short-term. Below both: working
    memory, which is the session's; a conversation without a session has none, so its memories go short-term."""
    if importance > long_term_above:
        return Tier.LONG_TERM
    if importance > short_term_above or not in_session:
        return Tier.SHORT_TERM
    return Tier.WORKING


def higher_tier(a: Tier, b: Tier) -> Tier:
    """Reinforcement may promote a memory, never demote it."""
    return a if _RANK[a] >= _RANK[b] else b
