"""Tier rules: which tier a memory forms in, which conversation messages leave the short-term window, and when
working-tier memories retire."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from rapport.domain.lifecycle.decay import days_between
from rapport.domain.models import Memory, MemoryStatus, Tier, UserMemoryType
from rapport.settings import GovernanceSettings

# From the shortest-lived to the one without expiry.
_RANK = {Tier.WORKING: 0, Tier.SHORT_TERM: 1, Tier.LONG_TERM: 2}


def tier_for(importance: float, *, in_session: bool, long_term_above: float, short_term_above: float) -> Tier:
    """Above `long_term_above`: long-term (no expiry). Above `short_term_above`: short-term. Below both: working
    memory, which is the session's; a memory without a session to live in (a sessionless conversation's, or one a
    client stores itself) has none, so it goes short-term. The thresholds are settings: 0.8 and 0.5 by default."""
    if importance > long_term_above:
        return Tier.LONG_TERM
    if importance > short_term_above or not in_session:
        return Tier.SHORT_TERM
    return Tier.WORKING


def higher_tier(a: Tier, b: Tier) -> Tier:
    """Reinforcement may promote a memory, never demote it."""
    return a if _RANK[a] >= _RANK[b] else b


def highest_tier(memories: Sequence[Memory]) -> Tier:
    """A memory derived from others lives as long as the longest-lived of them."""
    return max((m.tier for m in memories), key=_RANK.__getitem__)


def is_conversation_message(memory: Memory) -> bool:
    """An episode: one message of the history, kept as a memory so recall can find what was said."""
    return memory.type == UserMemoryType.EPISODE.value


def conversation_of(memory: Memory) -> str:
    """The session a message belongs to; without one, its channel's sessionless conversation."""
    if memory.source.session_id:
        return f"session:{memory.source.session_id}"
    return f"channel:{memory.source.channel or ''}"


def _message_order(memory: Memory) -> tuple[datetime, str, int, str]:
    # The episodes of one interaction share their times; their position in the exchange orders them.
    return (
        memory.occurred_at or memory.created_at,
        memory.source.interaction_id or "",
        memory.source.message_index or 0,
        memory.id,
    )


def leaving_short_term(messages: Iterable[Memory], now: datetime, settings: GovernanceSettings) -> list[Memory]:
    """Active short-term messages recorded more than the window's days ago (strictly), or beyond the newest
    `short_term_max_messages_per_conversation` of their conversation. Age counts from when Rapport recorded the
    message, so importing an old conversation does not retire it on arrival."""
    by_conversation: dict[str, list[Memory]] = defaultdict(list)
    for memory in messages:
        if is_conversation_message(memory) and memory.tier is Tier.SHORT_TERM and memory.status is MemoryStatus.ACTIVE:
            by_conversation[conversation_of(memory)].append(memory)
    leaving: list[Memory] = []
    limit = settings.short_term_max_messages_per_conversation
    for conversation in sorted(by_conversation):
        newest_first = sorted(by_conversation[conversation], key=_message_order, reverse=True)
        for position, memory in enumerate(newest_first):
            if position >= limit or days_between(memory.created_at, now) > settings.short_term_window_days:
                leaving.append(memory)
    return leaving


def working_memory_over(memory: Memory, session_live: bool, now: datetime, settings: GovernanceSettings) -> bool:
    """A working-tier memory belongs to its session: once the session has expired (and the memory is older than
    a session's lifetime, so a session item not written yet is no reason), it retires."""
    return (
        memory.tier is Tier.WORKING
        and memory.status is MemoryStatus.ACTIVE
        and not session_live
        and now - memory.created_at > timedelta(minutes=settings.session_ttl_minutes)
    )
