"""Work split across the cores: the parts a busy pool has not started are taken back by the caller."""

from __future__ import annotations

import threading
import time

import pytest

from rapport.adapters.local import thread_pools


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch) -> thread_pools.Cores:
    cores = thread_pools.Cores()
    cores.count = 2
    monkeypatch.setattr(thread_pools, "CORES", cores)
    return cores


def test_parts_the_pool_has_not_started_run_on_the_callers_thread(two_cores: thread_pools.Cores) -> None:
    # The pool's one thread is held by another caller's long part
    release = threading.Event()
    held = two_cores.pool().submit(release.wait)
    try:
        ran_on: list[str] = []

        def part(n: int) -> int:
            ran_on.append(threading.current_thread().name)
            return n * n

        # Every part is run, in this thread, and the answers come in order without waiting for the pool
        assert thread_pools.across_cores([lambda n=n: part(n) for n in range(4)]) == [0, 1, 4, 9]
        assert ran_on == [threading.current_thread().name] * 4
    finally:
        release.set()
        held.result()


def test_a_free_pool_runs_the_other_parts_beside_the_caller(two_cores: thread_pools.Cores) -> None:
    two_cores.pool().submit(lambda: None).result()  # its thread started and waiting
    started = threading.Event()
    ran_on: dict[str, str] = {}

    def first() -> str:
        started.wait(5)  # the caller's part lasts until the pool's has begun
        ran_on["first"] = threading.current_thread().name
        return "first"

    def second() -> str:
        started.set()
        ran_on["second"] = threading.current_thread().name
        return "second"

    assert thread_pools.across_cores([first, second]) == ["first", "second"]
    assert ran_on["first"] == threading.current_thread().name and ran_on["second"].startswith("rapport-cores")


def test_a_part_that_fails_raises_in_the_caller(two_cores: thread_pools.Cores) -> None:
    def fails() -> None:
        raise ValueError("part failed")

    with pytest.raises(ValueError, match="part failed"):
        thread_pools.across_cores([lambda: time.sleep(0.01), fails])
