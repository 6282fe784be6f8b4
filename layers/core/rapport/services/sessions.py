"""Working memory: each session's last turns and running summary, kept for 30 minutes after its last activity."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from rapport.clock import Clock
from rapport.domain.lifecycle.working_memory import SessionContext, add_interaction, context_tokens
from rapport.domain.models import Interaction
from rapport.domain.scope import Scope
from rapport.errors import NotFoundError
from rapport.ports.items import ItemRef, ItemScope, ItemStore, StoredItem, relationship_ref
from rapport.services.versioned_items import ItemsRead, Plan
from rapport.settings import Settings

SESSION_KIND = "SESSION"


def session_ref(session_id: str, agent_id: str) -> ItemRef:
    return relationship_ref(SESSION_KIND, session_id, agent_id)


@dataclass(frozen=True)
class StoredSession:
    context: SessionContext
    item: StoredItem  # its version (for the next write) and its expiry

    def is_live(self, now: datetime) -> bool:
        return self.item.is_live(now)


class SessionRepository:
    """Each session's working memory (`SessionContext`), one item per session that expires with the session; a
    session is one assistant's conversation, so each assistant keeps its own (`session_ref`)."""

    def __init__(self, items: ItemStore) -> None:
        self._items = items

    def get(self, scope: Scope, session_id: str) -> StoredSession | None:
        item = self._items.get_item(ItemScope.of_user(scope), *session_ref(session_id, scope.agent_id))
        if item is None:
            return None
        return StoredSession(SessionContext.model_validate(item.body), item)


class SessionView(SessionContext):
    """The context as a client reads it: with its size in tokens and when it will be forgotten."""

    user_id: str
    token_estimate: int
    token_budget: int
    expires_at: datetime


class SessionService:
    def __init__(self, items: ItemStore, settings: Settings, clock: Clock) -> None:
        self._sessions = SessionRepository(items)
        self._settings = settings
        self._governance = settings.governance
        self._clock = clock

    def _ttl(self) -> timedelta:
        return timedelta(minutes=self._governance.session_ttl_minutes)

    def reads(self, interaction: Interaction) -> list[ItemRef]:
        """What `plan` builds on: the session's item (a conversation without a session has no working memory)."""
        return [session_ref(interaction.session_id, interaction.agent_id)] if interaction.session_id else []

    def plan(self, interaction: Interaction, read: ItemsRead) -> Plan:
        """The session with this interaction's turns, as a write that expires with the session. An expired session
        the table's TTL has not removed yet is over: a new one starts."""
        if not interaction.session_id:
            return Plan()
        now = self._clock.now()
        kind, key = session_ref(interaction.session_id, interaction.agent_id)
        item = read.get(kind, key)
        current = SessionContext.model_validate(item.body) if item is not None and item.is_live(now) else None
        updated = add_interaction(current, interaction, now, self._governance)
        if updated is current:
            return Plan()
        body = updated.model_dump(mode="json")
        return Plan(writes=[read.put(kind, key, body, expires_at=now + self._ttl())])

    def context(self, scope: Scope, session_id: str) -> SessionView:
        stored = self._sessions.get(scope, session_id)
        now = self._clock.now()
        if stored is None or not stored.is_live(now):
            raise NotFoundError(
                f"no working memory for session {session_id!r}: it never had an interaction, or it expired "
                f"{self._governance.session_ttl_minutes:g} minutes after its last activity"
            )
        context = stored.context
        return SessionView(
            **context.model_dump(),
            user_id=scope.user_id,
            token_estimate=context_tokens(context, self._governance),
            token_budget=self._governance.session_max_tokens,
            expires_at=stored.item.expires_at or context.last_activity_at + self._ttl(),
        )

    def is_live(self, scope: Scope, session_id: str, at: datetime) -> bool:
        stored = self._sessions.get(scope, session_id)
        return stored is not None and stored.is_live(at)
