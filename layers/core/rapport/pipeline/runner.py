"""Runs the four steps in process, the two extractions concurrently: the local twin of the state machine."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context

from rapport.domain.models import Interaction
from rapport.errors import RapportError
from rapport.pipeline.constructive_filter import ConstructiveFilter
from rapport.pipeline.extract import Extract
from rapport.pipeline.opening import OpenRun
from rapport.pipeline.runs import PipelineRunRepository
from rapport.pipeline.store import Store, Stored
from rapport.ports.pipeline import PipelineRequest, PipelineState, StoreOutcome


class PipelineRunner:
    """The steps are public: the Lambda handlers call them one at a time, as the state machine's tasks."""

    def __init__(
        self,
        *,
        open_run: OpenRun,
        extract: Extract,
        constructive_filter: ConstructiveFilter,
        store: Store,
        runs: PipelineRunRepository,
        extraction_threads: int = 4,
    ) -> None:
        self.open_run = open_run
        self.extract = extract
        self.constructive_filter = constructive_filter
        self.store = store
        self._runs = runs
        self._threads = extraction_threads
        self._pool: ThreadPoolExecutor | None = None  # started on the first run, then reused: threads cost ms each
        self._lock = threading.Lock()

    def run(self, request: PipelineRequest) -> StoreOutcome:
        return self.run_stored(request).outcome

    def run_stored(self, request: PipelineRequest, recorded: Interaction | None = None) -> Stored:
        """The steps in order, with the same state the state machine passes. A failure is noted on the run's item
        (the local stand-in for the dead-letter queue: the interaction stays in the history, ready to rerun).
        `recorded`: the interaction as the request that stored it has it (`PipelineTrigger.start`)."""
        state = PipelineState(**request.model_dump())
        try:
            # Read once here (or handed over); the state machine's tasks each read it for themselves.
            opened = self.open_run.open(request, recorded)
            state.recorded, interaction = opened.outcome, opened.interaction
            pool = self._extraction_pool()
            # Each in a copy of this context: the extractions act for the run's tenant, as this thread does.
            user = pool.submit(copy_context().run, self.extract.user, state, interaction)
            relational = pool.submit(copy_context().run, self.extract.relational, state, interaction)
            state.extracted = [user.result(), relational.result()]
            state.filtered = self.constructive_filter(state)
            return self.store.store(state, interaction, run=opened.run, first_attempt=opened.first_attempt)
        except RapportError as exc:
            self._runs.failed(request.scope, request.interaction_id, f"{type(exc).__name__}: {exc}")
            raise

    def _extraction_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                # Two extractions per run, and room for a background run beside one a request waits for.
                self._pool = ThreadPoolExecutor(max_workers=self._threads, thread_name_prefix="rapport-extract")
            return self._pool
