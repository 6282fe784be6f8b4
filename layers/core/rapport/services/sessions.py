"""Working memory: each session's last turns and running summary, kept for 30 minutes after its last activity."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from rapport.clock import Clock
from rapport.domain.lifecycle.working_memory import SessionContext, add_interaction, context_tokens
from rapport.domain.models import Interaction
from rapport.domain.scope import Scope
from rapport.errors import ConflictError, NotFoundError, RapportError
from rapport.ports.items import ItemScope, ItemStore, StoredItem
from rapport.settings import Settings

logger = logging.getLogger(__name__)

SESSION_KIND = "SESSION"


@dataclass(frozen=True)
class StoredSession:
    context: SessionContext
    item: StoredItem  # its version (for the next write) and its expiry

    def is_live(self, now: datetime) -> bool:
        return self.item.is_live(now)


class SessionRepository:
    """Each session's working memory (`SessionContext`), one item per session that expires with the session."""

    def __init__(self, items: ItemStore) -> None:
        self._items = items

    def get(self, scope: Scope, session_id: str) -> StoredSession | None:
        item = self._items.get_item(ItemScope.of_user(scope), SESSION_KIND, session_id)
        if item is None:
            return None
        return StoredSession(SessionContext.model_validate(item.body), item)

    def put(
        self,
        scope: Scope,
        context: SessionContext,
        *,
        now: datetime,
        expected_version: int,
        expires_at: datetime,
    ) -> None:
        """ConflictError when the session changed since it was read at `expected_version` (0: not there yet)."""
        self._items.put_item(
            ItemScope.of_user(scope),
            SESSION_KIND,
            context.session_id,
            context.model_dump(mode="json"),
            now=now,
            expected_version=expected_version,
            expires_at=expires_at,
        )


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

    def on_interaction(self, interaction: Interaction) -> None:
        """The listener: a working memory that could not be updated is logged, never a failed recording."""
        try:
            self.record_interaction(interaction)
        except RapportError as exc:
            logger.warning("working memory of session %r not updated: %s", interaction.session_id, exc)

    def record_interaction(self, interaction: Interaction) -> None:
        """The listener on recorded interactions: a conversation without a session has no working memory."""
        if not interaction.session_id:
            return
        for _ in range(self._settings.relational.write_attempts):
            now = self._clock.now()
            stored = self._sessions.get(interaction.scope, interaction.session_id)
            # An expired session the table's TTL has not removed yet is over: a new one starts.
            current = stored.context if stored is not None and stored.is_live(now) else None
            updated = add_interaction(current, interaction, now, self._governance)
            if updated is current:
                return
            try:
                self._sessions.put(
                    interaction.scope,
                    updated,
                    now=now,
                    expected_version=stored.item.version if stored is not None else 0,
                    expires_at=now + self._ttl(),
                )
                return
            except ConflictError:
                continue  # a concurrent turn of the same session: read it and add this one after it
        raise ConflictError(f"session {interaction.session_id!r} kept changing; its working memory was not updated")

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
