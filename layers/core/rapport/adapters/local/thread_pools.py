"""Sizes the process's native thread pools (BLAS, OpenMP, torch) to the machine the local stack runs on."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

_sized: set[str] = set()
_lock = threading.Lock()
_T = TypeVar("_T")


class Cores:
    """The process's cores, and a pool of threads for the others than the caller's, made by the first work split
    across them (`across_cores`): one process-wide pool, since the cores are the process's. The index's products
    and the model's passes over a batch share it, and their parts queue for its threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self.count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

    def pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=max(1, self.count - 1), thread_name_prefix="rapport-cores")
            return self._pool


CORES = Cores()


class CallerShare:
    """How much of a split the calling thread takes (`across_cores`, `bounds`): a part handed to the pool starts once
    its thread has woken and ends with a wake of the caller, some tens of microseconds each on a virtual machine, so
    with equal parts the caller finishes first and waits for the last (on two cores, a 0.3 ms half of a search's
    product waited 0.08 ms, a sixth of the search). The share grows a step each time the caller was done before
    the others and shrinks a fifth of a step each time they were done first: it settles where the caller waits
    about one split in six and otherwise finds the others' answers ready. A busy pool, whose parts the caller takes
    back, grows it to `_MOST`; a free one brings it back in some dozens of splits."""

    _STEP = 0.02
    _BACK = _STEP / 5
    _MOST = 0.9

    def __init__(self) -> None:
        self.share: float | None = None  # of the first part; None: an equal part, until a split has settled it

    def _of(self, parts: int) -> float:
        return self.share if self.share is not None else 1 / parts

    def bounds(self, size: int, parts: int) -> list[int]:
        """Where the parts of rows `0..size` start and stop: the caller's first, then the rest evenly."""
        first = round(size * self._of(parts))
        return [0, *(first + (size - first) * n // (parts - 1) for n in range(parts))]

    def settle(self, waited: bool, parts: int) -> None:
        """After a split of `parts`: `waited`, whether a part the pool had was not done when the caller's was."""
        step = self._STEP if waited else -self._BACK
        self.share = min(self._MOST, max(1 / parts, self._of(parts) + step))


def across_cores(parts: Sequence[Callable[[], _T]], share: CallerShare | None = None) -> list[_T]:
    """Each part's result, in order: the first part on this thread, the others on the pool's (`Cores`). For work
    that releases the GIL (numpy's and torch's products, the model's TorchScript pass), so the parts run at once. A
    part must not split again: waiting on the pool from one of its own threads could hold the thread it waits for.

    A part no pool thread has started by the time this thread is done with its own, this thread takes back and runs
    (`Future.cancel` succeeds only on a part not yet running): when the pool is busy with another caller's parts (a
    model pass over a batch takes ~10 ms) or the other cores with another process, the split costs about what one
    thread would, where waiting for the pool made a 0.3 ms product wait for whatever held it.

    `share`: where the caller's part was sized so (`CallerShare.bounds`), told whether it waited for the others."""
    others = [CORES.pool().submit(part) for part in parts[1:]]
    first = parts[0]()
    if share is not None:
        share.settle(not all(other.done() for other in others), len(parts))
    taken_back: dict[int, _T] = {}
    for n in reversed(range(len(others))):  # from the last: the pool starts them from the first
        if others[n].cancel():
            taken_back[n] = parts[n + 1]()
    return [first, *(taken_back[n] if n in taken_back else other.result() for n, other in enumerate(others))]


def model_threads(cores: int | None = None) -> int:
    """Threads for one forward pass of the local model: half the cores, at least one, so a second request, the
    enrichment worker or the index's search has the other half rather than waiting on an oversubscribed pool."""
    return max(1, (cores or CORES.count) // 2)


def model_passes(cores: int | None = None) -> int:
    """Forward passes of the local model that run at once over one batch's parts: one per `model_threads` cores, so
    a batch of several texts takes every core (on two cores 17 against 11 ms for an interaction's five texts)."""
    count = cores or CORES.count
    return max(1, count // model_threads(count))


def size_thread_pools(cores: int | None = None) -> None:
    """BLAS to one thread: the index's search is a matrix-vector product, bound by memory, and two BLAS pools
    (numpy's and torch's) spinning beside torch's OpenMP pool on the same cores made one recall wait on the others'
    busy threads (p95 ~120 ms against ~20 ms at 10,000 memories on two cores, docs/BENCHMARKS.md). OpenMP and torch
    to `model_threads`. Applied once per library loaded: call it again after loading torch."""
    from threadpoolctl import threadpool_info, threadpool_limits

    with _lock:
        loaded = {info["filepath"] for info in threadpool_info()}
        if "torch" in sys.modules and "torch" not in _sized:
            import torch

            torch.set_num_threads(model_threads(cores))
            _sized.add("torch")
        if loaded <= _sized:
            return
        threadpool_limits(limits=1, user_api="blas")
        threadpool_limits(limits=model_threads(cores), user_api="openmp")
        _sized.update(loaded)
