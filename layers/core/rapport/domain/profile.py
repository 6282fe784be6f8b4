"""An end user's profile: when we met, when we last talked, how often, and their plan tier."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

# A new profile is on the free plan; the tenant's plan wins when it is more generous (docs/governance.md).
DEFAULT_PLAN_TIER = "community"


class Profile(BaseModel):
    known_since: datetime
    last_seen: datetime
    interaction_count: int = Field(0, ge=0)
    plan_tier: str = DEFAULT_PLAN_TIER


def observe_interaction(profile: Profile | None, at: datetime) -> Profile:
    """One more interaction at `at`. An imported conversation may be older than what we know: known_since moves
    back, last_seen never does."""
    if profile is None:
        return Profile(known_since=at, last_seen=at, interaction_count=1)
    return profile.model_copy(
        update={
            "known_since": min(profile.known_since, at),
            "last_seen": max(profile.last_seen, at),
            "interaction_count": profile.interaction_count + 1,
        }
    )
