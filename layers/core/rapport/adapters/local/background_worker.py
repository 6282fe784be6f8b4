"""Local stand-in for an asynchronous rule target: one background thread handles what the in-process bus hands it,
off the request path, as the enrichment function does in AWS."""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)
HandleMany = Callable[[list[dict[str, Any]]], Any]
_DRAIN_AT_EXIT_SECONDS = 120.0


class BackgroundWorker:
    """Details wait in arrival order; the thread takes everything waiting at once and hands it to `handle_many`, so
    a backlog is worked off in fewer, larger batches (enrichment reads one page and writes once per batch) and the
    worker keeps up with writers instead of falling behind them. The thread starts with the first detail; building
    the worker starts nothing. Work lives in memory: at interpreter exit the worker is given a bounded time to
    finish (a CLI import, an evaluation), and a server killed with work pending loses it (docs/graph.md)."""

    def __init__(self, handle_many: HandleMany, *, name: str) -> None:
        self._handle_many = handle_many
        self._name = name
        self._pending: list[dict[str, Any]] = []
        self._busy = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def submit(self, detail: dict[str, Any]) -> None:
        """A bus subscriber: queue the detail and return at once."""
        with self._changed:
            self._pending.append(detail)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
                atexit.register(self.flush, _DRAIN_AT_EXIT_SECONDS)
            self._changed.notify_all()

    def flush(self, timeout: float = 60.0) -> bool:
        """Wait until nothing is queued or being handled (tests, tools, exit); False when `timeout` ran out first."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._pending or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, 0.05))
        return True

    @property
    def backlog(self) -> int:
        with self._changed:
            return len(self._pending) + (1 if self._busy else 0)

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._pending:
                    self._changed.wait()
                batch, self._pending = self._pending, []
                self._busy = True
            try:
                self._handle_many(batch)
            except Exception:
                # What the worker does is derived (links a later run can still add): log and keep serving.
                logger.warning("background work failed", extra={"worker": self._name}, exc_info=True)
            finally:
                with self._changed:
                    self._busy = False
                    self._changed.notify_all()
