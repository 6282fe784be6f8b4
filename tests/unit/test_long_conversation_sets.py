"""The sets of longer conversations (bench/long-conversations/): each line labelled with every relational type it calls
for, in pairs of a label so that the odd and the even half each hold every label, and read as the bench reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.relational_sets import NOTHING, due_types, labelled
from rapport.domain.models import MessageRole, RelationalMemoryType

pytestmark = pytest.mark.unit

SETS = sorted((Path(__file__).resolve().parents[2] / "bench" / "long-conversations").glob("*.txt"))
TYPES = {t.value for t in RelationalMemoryType}


def test_a_label_is_none_or_the_types_it_calls_for() -> None:
    assert due_types(NOTHING) == frozenset()
    assert due_types("shared_context+working_style") == {"shared_context", "working_style"}


@pytest.mark.parametrize("path", SETS, ids=[p.name for p in SETS])
def test_each_line_is_a_longer_conversation_the_user_opens_with_known_labels(path: Path) -> None:
    odd, even = labelled(path, "odd"), labelled(path, "even")
    assert len(odd) == len(even) >= 20
    for due, conversation in odd + even:
        assert due_types(due) <= TYPES, due
        assert conversation.messages[0].role is MessageRole.USER
        assert 4 <= len(conversation.messages) <= 10
    # Written in pairs of a label: each half holds every label the file has.
    assert sorted(due for due, _ in odd) == sorted(due for due, _ in even)
