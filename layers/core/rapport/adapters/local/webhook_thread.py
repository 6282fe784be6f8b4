"""Local adapter of `WebhookDispatch`: one background thread delivers the jobs, each when its delay is up."""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from rapport.domain.webhooks import DeliveryJob

logger = logging.getLogger(__name__)
Deliver = Callable[[DeliveryJob], Any]


class ThreadWebhookDispatch:
    """Jobs wait in a heap ordered by when they are due; the thread starts with the first job, so building the
    adapter starts nothing. Jobs live in memory: a local server stopped with deliveries pending drops them, as the
    AWS queue would not (docs/webhooks.md)."""

    def __init__(self) -> None:
        self._deliver: Deliver | None = None
        self._due: list[tuple[float, int, DeliveryJob]] = []
        self._order = itertools.count()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        self._busy = 0

    def bind(self, deliver: Deliver) -> None:
        """The delivery step (the use case's `deliver`), which itself enqueues the next attempt of a failure."""
        self._deliver = deliver

    def enqueue(self, job: DeliveryJob, *, delay_seconds: float = 0.0) -> None:
        with self._changed:
            heapq.heappush(self._due, (time.monotonic() + max(0.0, delay_seconds), next(self._order), job))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="rapport-webhooks", daemon=True)
                self._thread.start()
            self._changed.notify()

    def idle(self, timeout: float) -> bool:
        """Wait until no job is queued or running (tests; `rapport serve` shutting down); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._due or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, 0.05))
        return True

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._due or self._due[0][0] > time.monotonic():
                    self._changed.wait(self._due[0][0] - time.monotonic() if self._due else None)
                _, _, job = heapq.heappop(self._due)
                self._busy += 1
            try:
                if self._deliver is None:
                    raise LookupError("the webhook dispatch was never bound to a delivery step")
                self._deliver(job)
            except Exception:
                # The store failed mid-delivery: the job's attempt is lost locally, which the log shows as a gap.
                logger.warning("webhook delivery failed", extra={"event_id": job.event.id}, exc_info=True)
            finally:
                with self._changed:
                    self._busy -= 1
                    self._changed.notify_all()
