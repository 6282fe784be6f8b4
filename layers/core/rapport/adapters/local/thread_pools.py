"""Sizes the process's native thread pools (BLAS, OpenMP, torch) to the machine the local stack runs on."""

from __future__ import annotations

import os
import sys
import threading

_sized: set[str] = set()
_lock = threading.Lock()


def model_threads(cores: int | None = None) -> int:
    """Threads for one forward pass of the local model: half the cores, at least one, so a second request, the
    enrichment worker or the index's search has the other half rather than waiting on an oversubscribed pool."""
    return max(1, (cores or os.cpu_count() or 1) // 2)


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
