"""PRECEDED_BY's choice of predecessors (`graph.enrichment.preceding`): a sort and a walk back per memory, choosing
what comparing every candidate with every batch member chose."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from rapport.domain.models import Domain, Memory
from rapport.graph.enrichment import preceding

AT = datetime(2026, 1, 5, tzinfo=UTC)
WINDOW = timedelta(hours=24)


def memory(memory_id: str, hours: int, created: int, occurred: bool) -> Memory:
    created_at = AT + timedelta(hours=created)
    return Memory(
        id=memory_id,
        tenant_id="t",
        user_id="u",
        domain=Domain.USER,
        type="fact",
        content=memory_id,
        created_at=created_at,
        updated_at=created_at,
        last_reinforced_at=created_at,
        occurred_at=AT + timedelta(hours=hours) if occurred else None,
    )


def every_pair(
    batch: Sequence[Memory], earlier: Sequence[Memory], window: timedelta, limit: int
) -> list[tuple[str, str]]:
    """The rule stated directly: every candidate compared with every member, sorted nearest first."""

    def when(m: Memory) -> datetime:
        return m.occurred_at or m.created_at

    position = {m.id: i for i, m in enumerate(batch)}
    pairs = []
    for member in batch:
        at = when(member)
        before = [
            c
            for c in [*earlier, *batch]
            if c.id != member.id
            and at - window <= when(c) <= at
            and (when(c) < at or position.get(c.id, -1) < position[member.id])
        ]
        before.sort(key=lambda c: (at - when(c), -position.get(c.id, -1), -c.created_at.timestamp()))
        pairs.extend((member.id, c.id) for c in before[:limit])
    return pairs


# Few distinct hours, so equal times (and equal creation times) are common: the ties are where order matters.
a_memory = st.tuples(st.integers(0, 60), st.integers(0, 3), st.booleans())


@settings(max_examples=300, deadline=None)
@given(
    earlier=st.lists(a_memory, max_size=12),
    batch=st.lists(a_memory, min_size=1, max_size=12),
    limit=st.integers(1, 6),
    window_hours=st.sampled_from([1, 6, 24]),
)
def test_the_walk_back_chooses_what_comparing_every_pair_chooses(
    earlier: list[tuple[int, int, bool]],
    batch: list[tuple[int, int, bool]],
    limit: int,
    window_hours: int,
) -> None:
    before = [memory(f"e{i}", *spec) for i, spec in enumerate(earlier)]
    stored = [memory(f"b{i}", *spec) for i, spec in enumerate(batch)]
    window = timedelta(hours=window_hours)

    chosen = [(m.id, p.id) for m, p in preceding(stored, before, window, limit)]

    assert chosen == every_pair(stored, before, window, limit)


def test_within_a_batch_of_one_instant_the_previous_message_comes_first() -> None:
    conversation = [memory(f"m{i}", 0, 0, occurred=True) for i in range(4)]
    older = memory("older", -1, -1, occurred=True)
    too_old = memory("too-old", -30, -30, occurred=True)

    chosen = [(m.id, p.id) for m, p in preceding(conversation, [older, too_old], WINDOW, 2)]

    assert chosen == [
        ("m0", "older"),
        ("m1", "m0"),
        ("m1", "older"),
        ("m2", "m1"),
        ("m2", "m0"),
        ("m3", "m2"),
        ("m3", "m1"),
    ]
