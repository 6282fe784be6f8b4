"""New ids within one instant count up, so what one instant wrote lists in the order it was written."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from ulid import ULID

from rapport.ids import is_valid_id, new_id

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_ids_of_one_instant_count_up_even_with_other_instants_in_between() -> None:
    first = [new_id(AT) for _ in range(50)]
    new_id()  # the real clock's instant, as an audit event's would be
    new_id(AT + timedelta(seconds=1))
    later = new_id(AT)
    assert first == sorted(first) and len(set(first)) == 50
    assert first[-1] < later
    assert all(ULID.from_str(value).datetime == AT for value in [*first, later])


def test_ids_made_from_many_threads_at_one_instant_are_distinct_and_valid() -> None:
    made: list[str] = []
    lock = threading.Lock()

    def make() -> None:
        ids = [new_id(AT + timedelta(minutes=5)) for _ in range(200)]
        with lock:
            made.extend(ids)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(made)) == 1600 and all(is_valid_id(value) for value in made)


def test_ids_without_an_instant_carry_the_current_time() -> None:
    before = datetime.now(UTC) - timedelta(seconds=1)
    assert ULID.from_str(new_id()).datetime >= before.replace(microsecond=0)
