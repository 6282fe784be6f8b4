"""How many signed requests a tenant may send: a fixed window per tenant, counted only once a signature is verified.

A limit counted before the signature check (a WAF rule keyed on `?tenant=`) lets anyone who knows a tenant's id
spend that tenant's budget with unsigned requests and have its real Slack events refused. Counting after the check
means only the tenant's own signed traffic counts against it; unsigned floods are the per-IP WAF rule's business.

The count is one item per tenant and window in the tenant's partition, written with an expected version: two
simultaneous requests cannot both take the last slot. Under heavy contention the request is let through after a
few attempts rather than refused: the limit is a ceiling against a runaway sender, not an exact quota.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from aws_lambda_powertools import Logger

from rapport.clock import Clock
from rapport.errors import ConflictError, RateLimitedError
from rapport.ports.items import ItemScope, ItemStore

logger = Logger(service="rapport-ingest", child=True)

RATE_KIND = "INGEST_RATE"
_ATTEMPTS = 4


class TenantRateLimit:
    def __init__(self, items: ItemStore, clock: Clock, *, limit: int, window: timedelta) -> None:
        self._items = items
        self._clock = clock
        self._limit = limit
        self._window = window.total_seconds()

    def admit(self, tenant_id: str) -> None:
        """Count one verified request of the tenant, or raise RateLimitedError when its window is full."""
        now = self._clock.now()
        index = math.floor(now.timestamp() / self._window)
        window_end = datetime.fromtimestamp((index + 1) * self._window, UTC)
        scope, key = ItemScope(tenant_id=tenant_id), str(index)
        for _ in range(_ATTEMPTS):
            item = self._items.get_item(scope, RATE_KIND, key)
            count = int(item.body.get("count", 0)) if item is not None else 0
            if count >= self._limit:
                retry_after = max(1, math.ceil((window_end - now).total_seconds()))
                raise RateLimitedError(
                    f"this tenant sent more than {self._limit} signed requests in {int(self._window)} s; "
                    f"retry in {retry_after} s",
                    retry_after_seconds=retry_after,
                )
            try:
                self._items.put_item(
                    scope,
                    RATE_KIND,
                    key,
                    {"count": count + 1},
                    now=now,
                    expected_version=item.version if item is not None else 0,
                    expires_at=window_end + timedelta(seconds=self._window),
                )
                return
            except ConflictError:
                continue
        logger.warning("rate count contended; request let through", tenant_id=tenant_id)
