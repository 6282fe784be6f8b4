"""The `rapport-export` format on the client side: reading an export's pages, and cutting lines into import chunks
that fit a request body (the local server's 1 MiB, API Gateway's 10 MB) and the server's lines per request."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from rapport_client._calls import Page
from rapport_client.models import ImportResult

FORMAT = "rapport-export"
VERSION = 1
NDJSON = "application/x-ndjson"
# Under the local gateway's 1 MiB with room for the header, and the server's 1000 lines a request.
MAX_CHUNK_BYTES = 900 * 1024
MAX_CHUNK_LINES = 999  # records, beside the header


def header(user_id: str | None = None) -> dict[str, Any]:
    return {
        "kind": "header",
        "format": FORMAT,
        "version": VERSION,
        "user_id": user_id,
        "exported_at": datetime.now(UTC).isoformat(),
    }


def export_page(first: bool) -> Any:
    """Parse one page of an export: its records, with the header on the first page only (its `next_cursor`
    dropped, as a file is the whole export), and the cursor of the next page."""

    def parse(response: httpx.Response) -> Page[dict[str, Any]]:
        lines = [json.loads(line) for line in response.text.splitlines() if line.strip()]
        if not lines or lines[0].get("kind") != "header":
            raise ValueError("the export answered no header line: is this a Rapport server?")
        head, records = lines[0], lines[1:]
        cursor = head.pop("next_cursor", None)
        return Page([head, *records] if first else records, cursor)

    return parse


def encode(line: Mapping[str, Any] | str) -> str:
    text = line if isinstance(line, str) else json.dumps(line, ensure_ascii=False, separators=(",", ":"))
    return text.strip()


@dataclass(frozen=True)
class Chunk:
    first_line: int  # the file line number of the chunk's first record
    head: str
    records: list[str]

    def body(self) -> bytes:
        return ("\n".join([self.head, *self.records]) + "\n").encode("utf-8")


def chunks(lines: Iterable[Mapping[str, Any] | str], *, user_id: str | None = None) -> Iterator[Chunk]:
    """The lines in request-sized chunks, each led by the file's header (or a fresh one when the lines have none),
    numbered as in the file so the server's per-line errors can name file lines."""
    head: str | None = None
    records: list[str] = []
    size = 0
    first_line = 0
    number = 0
    for line in lines:
        text = encode(line)
        octets = len(text.encode("utf-8")) + 1
        number += 1
        if not text:
            continue
        if head is None:
            if _is_header(text):
                head = text
                continue
            head = encode(header(user_id))
            number += 1  # the header the file lacked counts as its line 1
        if records and (len(records) >= MAX_CHUNK_LINES or size + octets > MAX_CHUNK_BYTES - len(head)):
            yield Chunk(first_line, head, records)
            records, size = [], 0
        if not records:
            first_line = number
        records.append(text)
        size += octets
    if records:
        yield Chunk(first_line, head or encode(header(user_id)), records)


def _is_header(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("kind") == "header"


def merged(total: ImportResult, chunk: Chunk, answer: ImportResult) -> ImportResult:
    """`total` with one chunk's answer added, its line numbers (2 = the chunk's first record) made the file's."""
    imported = dict(total.imported)
    for kind, count in answer.imported.items():
        imported[kind] = imported.get(kind, 0) + count
    skipped = dict(total.skipped)
    for kind, count in answer.skipped.items():
        skipped[kind] = skipped.get(kind, 0) + count
    errors = [*total.errors]
    for error in answer.errors:
        errors.append(error.model_copy(update={"line": chunk.first_line + error.line - 2}))
    return ImportResult(imported=imported, skipped=skipped, errors=errors)
