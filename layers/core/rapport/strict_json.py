"""JSON as Rapport reads a request body: standard JSON only, within bounds every later step can handle.

Python's `json` module accepts more than JSON (`NaN`, `Infinity`), turns `1e999` into infinity, parses integers of
any length (which a later `json.dumps` refuses past 4,300 digits), decodes an escaped lone surrogate (`"\\ud800"`)
into a string no UTF-8 encoder will write, and recurses once per nesting level until the interpreter's stack gives
out. Each would surface as a 500 further on, or as a stored value later answered as invalid JSON or as `null`. Here
each is a `JSONDecodeError` whose message says what is wrong. The API's resolver reads every body with `loads`
(Powertools turns the error into a validation error, which `api/errors.py` answers as 400 `malformed_json`), and
the signed ingest routes parse their verified bytes with it too.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 64
MAX_NUMBER_DIGITS = 100
_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(text: str | bytes | bytearray) -> Any:
    """Parse one JSON document, or raise `json.JSONDecodeError` saying what makes it unacceptable."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise json.JSONDecodeError("the body is not UTF-8 text", "", exc.start) from exc
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_int=_bounded_int, parse_float=_finite_float)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # what the number hooks below refuse
        raise json.JSONDecodeError(str(exc), text, 0) from exc
    except RecursionError as exc:
        raise json.JSONDecodeError(f"the body nests deeper than {MAX_DEPTH} levels", text, 0) from exc
    _check_tree(value, text)
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number: send a finite number, or null")


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise ValueError(f"a number has more than {MAX_NUMBER_DIGITS} digits")
    return int(digits)


def _finite_float(literal: str) -> float:
    if len(literal) > MAX_NUMBER_DIGITS + 10:
        raise ValueError(f"a number has more than {MAX_NUMBER_DIGITS} digits")
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(f"{literal} is out of the range of a double-precision number")
    return value


def _check_tree(value: Any, text: str) -> None:
    """Depth and strings, walked without recursion (a deep document must not exhaust the stack here either)."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, str):
            _check_text(node, text)
        elif isinstance(node, dict | list):
            if depth > MAX_DEPTH:
                raise json.JSONDecodeError(f"the body nests deeper than {MAX_DEPTH} levels", text, 0)
            children = node.items() if isinstance(node, dict) else ((None, item) for item in node)
            for key, item in children:
                if key is not None:
                    _check_text(key, text)
                pending.append((item, depth + 1))


def _check_text(value: str, text: str) -> None:
    # A valid surrogate pair is decoded into one code point, so any surrogate left is a lone one.
    if _SURROGATE.search(value):
        raise json.JSONDecodeError(
            "a string holds a lone UTF-16 surrogate escape (\\ud800-\\udfff): it is not a character", text, 0
        )
