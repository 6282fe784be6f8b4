"""One governance job at a time per end user: a short lease, so compression and consolidation never pick the same
memories at once, while a crashed run blocks nobody for longer than the lease."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from rapport.clock import Clock
from rapport.domain.scope import Scope
from rapport.errors import ConflictError
from rapport.ports.items import ItemScope, ItemStore

LEASE_KIND = "GOVERNANCE_LEASE"


class UserBusyError(ConflictError):
    """Another job holds this end user; the work is retried later (SQS redelivers the message)."""


class UserLease:
    def __init__(self, items: ItemStore, clock: Clock, minutes: float) -> None:
        self._items = items
        self._clock = clock
        self._duration = timedelta(minutes=minutes)

    @contextmanager
    def hold(self, scope: Scope, holder: str) -> Iterator[None]:
        """`holder` names the run; the same run retried (after a crash) may take its own lease back."""
        item_scope = ItemScope.of_user(scope)
        now = self._clock.now()
        current = self._items.get_item(item_scope, LEASE_KIND, "")
        if current is not None and current.is_live(now) and current.body.get("holder") != holder:
            raise UserBusyError(
                f"{scope.tenant_id}/{scope.user_id} is held by {current.body.get('holder')} until {current.expires_at}"
            )
        try:
            self._items.put_item(
                item_scope,
                LEASE_KIND,
                "",
                {"holder": holder},
                now=now,
                expected_version=current.version if current is not None else 0,
                expires_at=now + self._duration,
            )
        except ConflictError as exc:
            raise UserBusyError(f"{scope.tenant_id}/{scope.user_id} was taken by another job just now") from exc
        try:
            yield
        finally:
            mine = self._items.get_item(item_scope, LEASE_KIND, "")
            if mine is not None and mine.body.get("holder") == holder:
                self._items.delete_item(item_scope, LEASE_KIND, "")
