"""Working memory: each session's last turns and running summary, kept for 30 minutes after its last activity."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from rapport.clock import Clock
from rapport.domain.lifecycle.working_memory import SessionContext, add_interaction, context_tokens
from rapport.domain.models import Interaction
from rapport.errors import ConflictError, NotFoundError, RapportError
from rapport.ports.items import ItemScope, ItemStore
from rapport.settings import Settings

logger = logging.getLogger(__name__)

SESSION_KIND = "SESSION"


class SessionView(SessionContext):
    """The context as a client reads it: with its size in tokens and when it will be forgotten."""

    user_id: str
    token_estimate: int
    token_budget: int
    expires_at: datetime


class SessionService:
    def __init__(self, items: ItemStore, settings: Settings, clock: Clock) -> None:
        self._items = items
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
        scope = ItemScope(tenant_id=interaction.tenant_id, user_id=interaction.user_id)
        for _ in range(self._settings.relational.write_attempts):
            now = self._clock.now()
            item = self._items.get_item(scope, SESSION_KIND, interaction.session_id)
            # An expired session the table's TTL has not removed yet is over: a new one starts.
            current = SessionContext.model_validate(item.body) if item is not None and item.is_live(now) else None
            updated = add_interaction(current, interaction, now, self._governance)
            if updated is current:
                return
            try:
                self._items.put_item(
                    scope,
                    SESSION_KIND,
                    interaction.session_id,
                    updated.model_dump(mode="json"),
                    now=now,
                    expected_version=item.version if item is not None else 0,
                    expires_at=now + self._ttl(),
                )
                return
            except ConflictError:
                continue  # a concurrent turn of the same session: read it and add this one after it
        raise ConflictError(f"session {interaction.session_id!r} kept changing; its working memory was not updated")

    def context(self, tenant_id: str, user_id: str, session_id: str) -> SessionView:
        item = self._items.get_item(ItemScope(tenant_id=tenant_id, user_id=user_id), SESSION_KIND, session_id)
        now = self._clock.now()
        if item is None or not item.is_live(now):
            raise NotFoundError(
                f"no working memory for session {session_id!r}: it never had an interaction, or it expired "
                f"{self._governance.session_ttl_minutes:g} minutes after its last activity"
            )
        context = SessionContext.model_validate(item.body)
        return SessionView(
            **context.model_dump(),
            user_id=user_id,
            token_estimate=context_tokens(context, self._governance),
            token_budget=self._governance.session_max_tokens,
            expires_at=item.expires_at or context.last_activity_at + self._ttl(),
        )

    def is_live(self, tenant_id: str, user_id: str, session_id: str, at: datetime) -> bool:
        item = self._items.get_item(ItemScope(tenant_id=tenant_id, user_id=user_id), SESSION_KIND, session_id)
        return item is not None and item.is_live(at)
