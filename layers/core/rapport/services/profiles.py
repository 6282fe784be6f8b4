"""End-user profiles: known_since, last_seen and interaction_count, kept by every recorded interaction."""

from __future__ import annotations

from datetime import datetime

from rapport.clock import Clock
from rapport.domain.models import Interaction
from rapport.domain.profile import Profile, observe_interaction
from rapport.domain.scope import Scope
from rapport.ports.items import ItemRef, ItemScope, ItemStore, ItemWrite
from rapport.services.relational_state import interaction_time
from rapport.services.versioned_items import ItemsRead, apply_alone
from rapport.settings import Settings

PROFILE_KIND = "PROFILE"
PROFILE_KEY = ""  # one profile per end user


class ProfileRepository:
    """The end user's `Profile`, one versioned item; the plan tier it carries is read by the retention jobs too."""

    def __init__(self, items: ItemStore) -> None:
        self._items = items

    def get(self, scope: Scope) -> Profile | None:
        item = self._items.get_item(ItemScope.of_user(scope), PROFILE_KIND, PROFILE_KEY)
        return Profile.model_validate(item.body) if item else None


class ProfileService:
    def __init__(self, items: ItemStore, settings: Settings, clock: Clock) -> None:
        self._items = items
        self._profiles = ProfileRepository(items)
        self._attempts = settings.relational.write_attempts
        self._clock = clock

    def get(self, scope: Scope) -> Profile | None:
        """The profile, or None for someone we have not talked to yet."""
        return self._profiles.get(scope)

    def preview(self, scope: Scope, at: datetime) -> Profile:
        """The profile as one more interaction at `at` would leave it, without writing it."""
        return observe_interaction(self.get(scope), at)

    def reads(self, interaction: Interaction) -> list[ItemRef]:
        """What `plan` builds on: the profile item."""
        return [(PROFILE_KIND, PROFILE_KEY)]

    def plan(self, interaction: Interaction, read: ItemsRead) -> list[ItemWrite]:
        """The profile with one more interaction, as a write of the profile item."""
        item = read.get(PROFILE_KIND, PROFILE_KEY)
        current = Profile.model_validate(item.body) if item else None
        updated = observe_interaction(current, interaction_time(interaction))
        return [read.put(PROFILE_KIND, PROFILE_KEY, updated.model_dump(mode="json"))]

    def record_interaction(self, interaction: Interaction) -> None:
        """`plan`, read and written on its own (the recorded interaction writes it with the history instead)."""
        apply_alone(self._items, self, interaction, now=self._clock.now(), attempts=self._attempts)
