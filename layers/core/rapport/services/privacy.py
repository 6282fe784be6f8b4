"""Right to erasure: remove everything about one end user, from the table and the index, and prove it in the audit."""

from __future__ import annotations

from rapport.clock import Clock
from rapport.domain.models import AuditAction, AuditEvent, ErasureCounts, Page
from rapport.domain.scope import Scope
from rapport.domain.webhooks import OutboundEventType
from rapport.errors import ConflictError, InvalidInputError
from rapport.ids import new_id
from rapport.ports.pipeline import RunsInFlight
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import VectorIndex
from rapport.ports.webhooks import OutboundEvents
from rapport.settings import Settings

# How long an erasure waits for the person's runs in this process (a local run takes well under a second).
_SETTLE_SECONDS = 30.0


class PrivacyService:
    def __init__(
        self,
        store: MemoryStore,
        index: VectorIndex,
        settings: Settings,
        clock: Clock,
        events: OutboundEvents | None = None,
        in_flight: RunsInFlight | None = None,
    ) -> None:
        self._events = events
        self._in_flight = in_flight
        self._store = store
        self._index = index
        self._settings = settings
        self._clock = clock

    def erase_user(self, scope: Scope, *, actor: str) -> tuple[ErasureCounts, AuditEvent]:
        """Store first, index second: a retry after a failure between the two finishes the job (both are idempotent).
        A run of this process still writing the person's memories is waited for first; one that does not end in
        time fails the erasure before anything is erased, so the client retries rather than leaving its writes."""
        if self._in_flight is not None and not self._in_flight.settle(scope, _SETTLE_SECONDS):
            raise ConflictError("this person's latest interaction is still being processed; retry the erasure shortly")
        counts = self._store.erase_user(scope)
        counts.index_entries = self._index.delete_user(scope)
        event = AuditEvent(
            id=new_id(),
            tenant_id=scope.tenant_id,
            action=AuditAction.ERASE_USER,
            actor=actor,
            target_user_hash=scope.user_hash,
            at=self._clock.now(),
            counts=counts.as_dict(),
            agents=counts.by_agent(),  # every assistant's relationship with the person went with it
        )
        self._store.put_audit_event(event)
        if self._events is not None:
            # By hash, as the audit trail names them: the receiver can match a user it knows, and nothing sent or
            # logged after the erasure spells the id out again.
            data = {
                "user_hash": scope.user_hash,
                "audit_event_id": event.id,
                "counts": counts.as_dict(),
                "agents": counts.by_agent(),
            }
            self._events.emit(scope.tenant_id, OutboundEventType.USER_ERASED, data)
        return counts, event

    def audit_log(self, tenant_id: str, *, limit: int, cursor: str | None) -> Page[AuditEvent]:
        if not 1 <= limit <= self._settings.max_page_size:
            raise InvalidInputError(f"limit must be between 1 and {self._settings.max_page_size}; got {limit}")
        return self._store.list_audit_events(tenant_id, limit=limit, cursor=cursor)
