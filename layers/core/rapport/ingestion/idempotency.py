"""Once-only claims on event ids: a tenant item created with `expected_version=0`, so only the first writer wins."""

from __future__ import annotations

from datetime import timedelta

from rapport.clock import Clock
from rapport.errors import ConflictError
from rapport.ports.items import ItemScope, ItemStore

# Two kinds, two moments: RECEIVED when a signed request is accepted (Slack retries, webhook replays), INGESTED when
# the consumer records the interaction (EventBridge delivers at least once, and a tenant may put an event twice).
RECEIVED = "INGEST_RECEIVED"
INGESTED = "INGEST_DONE"


class IdempotencyClaims:
    """Claims expire (DynamoDB TTL) after `ttl`, which must outlast every retry and the replay window."""

    def __init__(self, items: ItemStore, clock: Clock, *, kind: str, ttl: timedelta) -> None:
        self._items = items
        self._clock = clock
        self._kind = kind
        self._ttl = ttl

    def claim(self, tenant_id: str, event_id: str) -> bool:
        """True for the first claim of this event id; False when it was claimed before (and has not expired)."""
        now = self._clock.now()
        try:
            self._items.put_item(
                ItemScope(tenant_id=tenant_id),
                self._kind,
                event_id,
                # Ids only: the claim must never hold message content (it outlives an erasure for its TTL).
                {"claimed_at": now.isoformat()},
                now=now,
                expected_version=0,
                expires_at=now + self._ttl,
            )
        except ConflictError:
            return False
        return True

    def release(self, tenant_id: str, event_id: str) -> None:
        """Undo a claim whose work failed, so the sender's retry is processed rather than acknowledged."""
        self._items.delete_item(ItemScope(tenant_id=tenant_id), self._kind, event_id)
