"""The local `PipelineTrigger`: runs the steps in this process, synchronously or on a background thread."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextvars import copy_context

from rapport.domain.models import Interaction
from rapport.domain.scope import Scope
from rapport.errors import RapportError
from rapport.pipeline.redrive import letter_of
from rapport.pipeline.runner import PipelineRunner
from rapport.ports.dead_letters import DeadLetters
from rapport.ports.pipeline import PipelineRequest, PipelineRun, PipelineStatus
from rapport.ports.store import MemoryStore

logger = logging.getLogger(__name__)


class InProcessPipeline:
    """`store` reads back what a run completed before stored or reinforced, for the answer of a `wait=True` start (a
    run made now hands its memories over); a run that fails is parked in `dead_letters` (the local dead-letter
    queue), which `rapport dlq replay` runs again."""

    def __init__(
        self,
        runner: PipelineRunner,
        store: MemoryStore,
        *,
        background_workers: int = 2,
        dead_letters: DeadLetters | None = None,
    ) -> None:
        self._runner = runner
        self._store = store
        self._dead_letters = dead_letters
        self._workers = background_workers
        self._pool: ThreadPoolExecutor | None = None  # created on the first `wait=False`, not at construction
        self._pending: dict[Future[None], Scope] = {}  # the runs on the background thread, by whose they are
        self._lock = threading.Lock()

    def start(self, request: PipelineRequest, *, wait: bool, recorded: Interaction | None = None) -> PipelineRun:
        if not wait:
            handed = recorded.model_copy(deep=True) if recorded is not None else None  # the caller keeps its own
            # In a copy of the request's context: the run acts for the tenant the request acted for.
            future = self._background().submit(copy_context().run, self._run_logged, request, handed)
            with self._lock:
                self._pending[future] = request.scope
            future.add_done_callback(self._forget)
            return PipelineRun(interaction_id=request.interaction_id, status=PipelineStatus.STARTED)
        try:
            stored = self._runner.run_stored(request, recorded)
        except RapportError as exc:
            # The interaction is recorded whatever happens here; the failure is on the run's item, to rerun.
            logger.warning("pipeline failed for interaction %s: %s", request.interaction_id, exc)
            self._park(request, exc)
            return PipelineRun(
                interaction_id=request.interaction_id,
                status=PipelineStatus.FAILED,
                error=f"{type(exc).__name__}: {exc}",
            )
        outcome, memories = stored.outcome, stored.memories
        if memories is None:  # a run completed before: what it stored is read
            ids = [*outcome.stored, *outcome.reinforced]
            found = {m.id: m for m in self._store.get_memories(request.scope, ids)}
            memories = [found[i] for i in ids if i in found]
        return PipelineRun(
            interaction_id=request.interaction_id,
            status=PipelineStatus.COMPLETED,
            outcome=outcome,
            memories=[m.without_embedding() for m in memories],
        )

    def drain(self, timeout: float | None = None) -> None:
        """Wait for the background runs started so far (tests; a clean shutdown)."""
        with self._lock:
            pending = list(self._pending)
        for future in pending:
            future.result(timeout=timeout)

    def settle(self, scope: Scope, timeout: float) -> bool:
        """Wait for the person's background runs started so far, for any of their assistants (an erasure takes
        every relationship, and must not be followed by a run's writes)."""
        person = (scope.tenant_id, scope.user_id)
        with self._lock:
            theirs = [f for f, whose in self._pending.items() if (whose.tenant_id, whose.user_id) == person]
        _, running = wait(theirs, timeout=timeout)
        return not running

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def _background(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="rapport-pipeline")
            return self._pool

    def _run_logged(self, request: PipelineRequest, recorded: Interaction | None) -> None:
        try:
            self._runner.run_stored(request, recorded)
        except Exception as exc:
            # Nobody waits for this thread: the log, the run's item and the dead letter are where a failure shows.
            logger.exception("background pipeline failed for interaction %s", request.interaction_id)
            self._park(request, exc)

    def _park(self, request: PipelineRequest, exc: Exception) -> None:
        if self._dead_letters is None:
            return
        try:
            self._dead_letters.send(letter_of(request, exc))
        except Exception:
            logger.exception("could not park the failed run of interaction %s", request.interaction_id)

    def _forget(self, future: Future[None]) -> None:
        with self._lock:
            self._pending.pop(future, None)
