"""Runs the four steps in process, the two extractions concurrently: the local twin of the state machine."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from rapport.errors import RapportError
from rapport.pipeline.constructive_filter import constructive_filter
from rapport.pipeline.context import PipelineContext
from rapport.pipeline.extract import extract_relational, extract_user
from rapport.pipeline.models import PipelineRequest, PipelineState, StoreOutcome
from rapport.pipeline.opening import record
from rapport.pipeline.store import store


class PipelineRunner:
    def __init__(self, ctx: PipelineContext, *, extraction_threads: int = 4) -> None:
        self.ctx = ctx
        self._threads = extraction_threads
        self._pool: ThreadPoolExecutor | None = None  # started on the first run, then reused: threads cost ms each
        self._lock = threading.Lock()

    def run(self, request: PipelineRequest) -> StoreOutcome:
        """The steps in order, with the same state the state machine passes. A failure is noted on the run's item
        (the local stand-in for the dead-letter queue: the interaction stays in the history, ready to rerun)."""
        state = PipelineState(**request.model_dump())
        try:
            state.recorded = record(self.ctx, request)
            pool = self._extraction_pool()
            user = pool.submit(extract_user, self.ctx, state)
            relational = pool.submit(extract_relational, self.ctx, state)
            state.extracted = [user.result(), relational.result()]
            state.filtered = constructive_filter(self.ctx, state)
            return store(self.ctx, state)
        except RapportError as exc:
            self.ctx.runs.failed(
                request.tenant_id, request.user_id, request.interaction_id, f"{type(exc).__name__}: {exc}"
            )
            raise

    def _extraction_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                # Two extractions per run, and room for a background run beside one a request waits for.
                self._pool = ThreadPoolExecutor(max_workers=self._threads, thread_name_prefix="rapport-extract")
            return self._pool
