"""The audit trail: every write and every privileged read, who made it, about whom and what it answered — never what
was said. Recorded once per call by the API (`api/access.py`), read back by end user and time."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from rapport.clock import Clock
from rapport.domain.models import AuditAction, AuditEvent, Page
from rapport.domain.scope import Scope
from rapport.errors import InvalidInputError, RapportError
from rapport.ids import new_id
from rapport.ports.store import MemoryStore
from rapport.settings import Settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AuditQuery:
    """Which events: of one end user (their id, hashed here as the trail names them), at or after `since` and
    before `until`; a page of `limit`, after `cursor`."""

    limit: int
    cursor: str | None = None
    user_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None


class AuditTrail:
    def __init__(self, store: MemoryStore, settings: Settings, clock: Clock) -> None:
        self._store = store
        self._settings = settings
        self._clock = clock

    def record(
        self,
        tenant_id: str,
        *,
        actor: str,
        action: AuditAction,
        operation: str,
        user_hash: str | None,
        status: int,
    ) -> AuditEvent | None:
        """One event for one call, after it was answered. A store that fails here is logged (the event, which holds
        no content, with it) and the answer still goes out: the call's own write already happened, and failing it
        would make the client retry a write that was made. None when it could not be stored."""
        event = AuditEvent(
            id=new_id(),
            tenant_id=tenant_id,
            action=action,
            actor=actor,
            target_user_hash=user_hash,
            at=self._clock.now(),
            operation=operation,
            status=status,
        )
        try:
            self._store.put_audit_event(event)
        except RapportError:
            logger.exception("audit event not stored: %s", event.model_dump_json())
            return None
        return event

    def events(self, tenant_id: str, query: AuditQuery) -> Page[AuditEvent]:
        if not 1 <= query.limit <= self._settings.max_page_size:
            raise InvalidInputError(f"limit must be between 1 and {self._settings.max_page_size}; got {query.limit}")
        since, until = _aware(query.since), _aware(query.until)
        if since is not None and until is not None and since >= until:
            raise InvalidInputError("since must be before until")
        user_hash = Scope.of(tenant_id, query.user_id).user_hash if query.user_id is not None else None
        return self._store.list_audit_events(
            tenant_id, limit=query.limit, cursor=query.cursor, user_hash=user_hash, since=since, until=until
        )


def _aware(moment: datetime | None) -> datetime | None:
    """A time without a zone is UTC, as everywhere in the API."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)
