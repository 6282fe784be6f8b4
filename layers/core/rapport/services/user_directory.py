"""The tenant's end users, a page at a time, each with what an operator looks for first: how much we keep of them
and when we last talked."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rapport.domain.models import Page
from rapport.domain.scope import Scope
from rapport.errors import InvalidInputError
from rapport.ports.store import MemoryStore
from rapport.services.profiles import ProfileRepository
from rapport.settings import Settings


@dataclass(frozen=True)
class UserSummary:
    user_id: str
    memory_count: int
    interaction_count: int  # from the profile: every recorded interaction, trimmed history included
    last_seen: datetime | None  # None: memories only, no interaction recorded yet
    known_since: datetime | None


class UserDirectory:
    """A page reads the registry (one query), then per listed user the profile item and a count of the memory keys;
    docs/data-model.md gives the costs."""

    def __init__(self, store: MemoryStore, profiles: ProfileRepository, settings: Settings) -> None:
        self._store = store
        self._profiles = profiles
        self._max_page = settings.max_page_size

    def page(self, tenant_id: str, *, limit: int, cursor: str | None) -> Page[UserSummary]:
        if not 1 <= limit <= self._max_page:
            raise InvalidInputError(f"limit must be between 1 and {self._max_page}; got {limit}")
        users = self._store.list_users(tenant_id, limit=limit, cursor=cursor)
        summaries = []
        for user_id in users.items:
            scope = Scope(tenant_id=tenant_id, user_id=user_id)
            profile = self._profiles.get(scope)
            summaries.append(
                UserSummary(
                    user_id=user_id,
                    memory_count=self._store.count_memories(scope),
                    interaction_count=profile.interaction_count if profile else 0,
                    last_seen=profile.last_seen if profile else None,
                    known_since=profile.known_since if profile else None,
                )
            )
        return Page[UserSummary](items=summaries, next_cursor=users.next_cursor)
