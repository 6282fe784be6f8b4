"""Loaded by `st run` (SCHEMATHESIS_HOOKS): how to send a body of the media types schemathesis has no serializer for.

An import's body is JSON lines; a generated value (a string, as the document says, or anything else in the negative
phases) is sent as its text, or as one JSON line, so the server's own checks answer it.
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def json_lines(ctx: Any, value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return (json.dumps(value) + "\n").encode("utf-8", "surrogatepass")
