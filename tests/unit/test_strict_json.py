"""`rapport.strict_json`: standard JSON within bounds reads exactly as `json` reads it; anything else is refused with
a decode error that says why."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rapport import strict_json

pytestmark = pytest.mark.unit

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_DOCUMENTS = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4), max_leaves=30
)


@given(_DOCUMENTS)
def test_any_standard_document_within_bounds_reads_as_json_reads_it(document: Any) -> None:
    text = json.dumps(document)
    assert strict_json.loads(text) == json.loads(text)
    assert strict_json.loads(text.encode()) == json.loads(text)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"a": NaN}', "NaN is not a JSON number"),
        ("[Infinity]", "Infinity is not a JSON number"),
        ('{"a": -Infinity}', "-Infinity is not a JSON number"),
        ("1e400", "out of the range"),
        ("-" + "9" * 101, "more than 100 digits"),
        ("0." + "1" * 200, "more than 100 digits"),
        ("[" * 65 + "]" * 65, "deeper than 64"),
        ('{"a":' * 3000 + "1" + "}" * 3000, "deeper than 64"),
        ('"\\ud800"', "lone UTF-16 surrogate"),
        ('{"\\udc00": 1}', "lone UTF-16 surrogate"),
        ('["ok", "\\ude00\\ud83d"]', "lone UTF-16 surrogate"),  # a pair in the wrong order is two lone ones
        ("{", "Expecting property name"),
    ],
)
def test_what_no_later_step_could_handle_is_a_decode_error_saying_why(text: str, reason: str) -> None:
    with pytest.raises(json.JSONDecodeError, match=reason):
        strict_json.loads(text)


def test_bytes_that_are_not_utf8_are_a_decode_error() -> None:
    with pytest.raises(json.JSONDecodeError, match="not UTF-8"):
        strict_json.loads(b'{"a": "\xff"}')


def test_the_bounds_are_inclusive() -> None:
    assert strict_json.loads("[" * 64 + "]" * 64) is not None
    assert strict_json.loads("9" * 100) == int("9" * 100)
    assert strict_json.loads('"\\ud83d\\ude00"') == "😀"
