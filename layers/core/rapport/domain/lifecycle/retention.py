"""Retention caps: which plan an end user is on, and which of the oldest conversation messages go over the cap."""

from __future__ import annotations

from collections.abc import Iterable

from rapport.settings import PlanTier

# From the smallest cap to no cap at all.
_GENEROSITY = {PlanTier.COMMUNITY: 0, PlanTier.CLINIC: 1, PlanTier.ENTERPRISE: 2}


def parse_plan(value: object) -> PlanTier | None:
    """A stored plan name, or None when there is none or it is not one we know (it then grants nothing)."""
    try:
        return PlanTier(str(value).strip().lower()) if value is not None else None
    except ValueError:
        return None


def effective_plan(tenant_plan: PlanTier | None, user_plan: PlanTier | None, default: PlanTier) -> PlanTier:
    """A plan on the tenant or on the end user's profile grants its cap; where both say something, the more
    generous wins. A profile always carries a plan (the free one unless someone changed it), so letting the profile
    win outright would put every end user of a paying tenant back on the free cap."""
    named = [plan for plan in (tenant_plan, user_plan) if plan is not None]
    return max(named, key=_GENEROSITY.__getitem__) if named else default


def messages_over_cap(total_messages: int, cap: int | None) -> int:
    """How many messages must go for the history to fit the cap (0 when it fits or there is no cap)."""
    return 0 if cap is None else max(total_messages - cap, 0)


def oldest_to_trim(sizes_oldest_first: Iterable[tuple[str, int]], excess: int) -> list[str]:
    """The shortest run of the oldest interactions holding at least `excess` messages.

    Whole interactions go, never part of one: an interaction's episodes point at its messages by position, and a
    partly cut exchange would read as something nobody said. The cap therefore holds with at most one
    interaction's worth of slack below it.
    """
    doomed: list[str] = []
    removed = 0
    for interaction_id, size in sizes_oldest_first:
        if removed >= excess:
            break
        doomed.append(interaction_id)
        removed += size
    return doomed
