"""End-user profiles: known_since, last_seen and interaction_count, kept by every recorded interaction."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from rapport.clock import Clock
from rapport.domain.models import Interaction
from rapport.domain.profile import Profile, observe_interaction
from rapport.domain.scope import Scope
from rapport.ports.items import ItemScope, ItemStore
from rapport.services.relational_state import interaction_time
from rapport.services.versioned_items import modify_model
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

    def change(
        self,
        scope: Scope,
        change: Callable[[Profile | None], Profile],
        *,
        now: datetime,
        attempts: int,
    ) -> None:
        """Apply `change` to the stored profile; a concurrent write makes it read again and re-apply."""
        modify_model(
            self._items,
            ItemScope.of_user(scope),
            PROFILE_KIND,
            PROFILE_KEY,
            Profile,
            change,
            now=now,
            attempts=attempts,
        )


class ProfileService:
    def __init__(self, items: ItemStore, settings: Settings, clock: Clock) -> None:
        self._profiles = ProfileRepository(items)
        self._attempts = settings.relational.write_attempts
        self._clock = clock

    def get(self, scope: Scope) -> Profile | None:
        """The profile, or None for someone we have not talked to yet."""
        return self._profiles.get(scope)

    def preview(self, scope: Scope, at: datetime) -> Profile:
        """The profile as one more interaction at `at` would leave it, without writing it."""
        return observe_interaction(self.get(scope), at)

    def record_interaction(self, interaction: Interaction) -> None:
        """The listener on recorded interactions."""
        at = interaction_time(interaction)
        self._profiles.change(
            interaction.scope,
            lambda current: observe_interaction(current, at),
            now=self._clock.now(),
            attempts=self._attempts,
        )
