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


def test_the_callers_share_grows_while_it_waits_for_the_others_and_shrinks_while_they_wait_for_it() -> None:
    share = thread_pools.CallerShare()
    # Until a split has settled it, the caller takes an equal part; the rest are even
    assert share.bounds(1_000, 2) == [0, 500, 1_000]
    assert share.bounds(1_000, 3) == [0, 333, 666, 1_000]
    # A caller done before the pool's part takes more rows the next time, up to most of them
    share.settle(True, 2)
    assert share.bounds(1_000, 2) == [0, 520, 1_000]
    for _ in range(100):
        share.settle(True, 2)
    assert share.bounds(1_000, 2) == [0, 900, 1_000]
    # Done after it, fewer, a fifth of a step at a time, never less than an equal part
    share.settle(False, 2)
    assert share.bounds(1_000, 2) == [0, 896, 1_000]
    for _ in range(1_000):
        share.settle(False, 2)
    assert share.bounds(1_000, 2) == [0, 500, 1_000]


def test_a_split_tells_its_share_whether_the_caller_waited(two_cores: thread_pools.Cores) -> None:
    two_cores.pool().submit(lambda: None).result()  # its thread started and waiting
    share = thread_pools.CallerShare()
    release = threading.Event()

    def slow() -> str:
        release.wait(5)
        return "slow"

    # The pool's part still running when the caller's is done: the caller waited
    def caller_releases_late() -> str:
        threading.Timer(0.05, release.set).start()
        return "caller"

    assert thread_pools.across_cores([caller_releases_late, slow], share) == ["caller", "slow"]
    assert share.share is not None and share.share > 0.5
    grown = share.share
    # The pool's part done before the caller's: the caller did not
    done = threading.Event()

    def quick() -> str:
        done.set()
        return "quick"

    def caller_after() -> str:
        done.wait(5)
        time.sleep(0.01)  # the pool's part has returned
        return "caller"

    assert thread_pools.across_cores([caller_after, quick], share) == ["caller", "quick"]
    assert share.share < grown
