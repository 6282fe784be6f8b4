"""The SDK's import sends a file of any size in chunks that fit a request, each led by the file's header, and names
the server's per-line errors by file line; its export pages are joined into one file with one header."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from rapport_client import AsyncRapport, Rapport
from rapport_client import _portability as portability
from rapport_client.mem0 import Mem0FormatError, to_lines, ulid_for

HEADER = {"kind": "header", "format": "rapport-export", "version": 1, "user_id": "dana"}


def _memory(n: int, size: int = 10) -> dict[str, Any]:
    return {"kind": "memory", "id": f"m{n}", "content": "x" * size}


class FakeImporter:
    """Answers each import like the server: counts its records, and calls every line holding "bad" an error."""

    def __init__(self) -> None:
        self.bodies: list[list[dict[str, Any]]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.headers["content-type"] == "application/x-ndjson"
        lines = [json.loads(line) for line in request.content.decode().splitlines()]
        self.bodies.append(lines)
        errors = [
            {"line": number, "error": "invalid_line", "message": "bad"}
            for number, line in enumerate(lines, start=1)
            if line.get("content") == "bad"
        ]
        imported = len(lines) - 1 - len(errors)
        return httpx.Response(200, json={"imported": {"memory": imported}, "skipped": {}, "errors": errors})


def test_a_large_file_goes_in_chunks_each_with_the_header_and_errors_name_file_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(portability, "MAX_CHUNK_LINES", 3)
    server = FakeImporter()
    lines: list[Any] = [HEADER, *(_memory(n) for n in range(7))]
    lines[5] = {"kind": "memory", "id": "m4", "content": "bad"}  # file line 6
    with Rapport("http://rapport.test", "k", http_client=httpx.Client(transport=httpx.MockTransport(server))) as c:
        progress: list[int] = []
        result = c.users.import_("dana", lines, on_chunk=lambda sent, _total: progress.append(sent))

    assert [len(body) for body in server.bodies] == [4, 4, 2]
    assert all(body[0] == HEADER for body in server.bodies)
    assert [line["id"] for body in server.bodies for line in body[1:]] == [f"m{n}" for n in range(7)]
    assert progress == [3, 6, 7]
    assert result.imported == {"memory": 6}
    assert [(e.line, e.message) for e in result.errors] == [(6, "bad")]


def test_a_chunk_stays_under_the_body_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(portability, "MAX_CHUNK_BYTES", 1000)
    chunks = list(portability.chunks([HEADER, *(_memory(n, size=300) for n in range(6))]))
    assert [len(c.records) for c in chunks] == [2, 2, 2]
    assert all(len(c.body()) <= 1000 for c in chunks)
    assert [c.first_line for c in chunks] == [2, 4, 6]


def test_lines_without_a_header_get_one_and_are_numbered_after_it() -> None:
    (chunk,) = portability.chunks([_memory(1)], user_id="dana")
    assert json.loads(chunk.head)["format"] == "rapport-export" and chunk.first_line == 2


def test_the_export_pages_make_one_file_with_one_header() -> None:
    def pages(request: httpx.Request) -> httpx.Response:
        cursor = request.url.params.get("cursor")
        head = {**HEADER, "next_cursor": None if cursor else "c2"}
        body = [head, _memory(2)] if cursor else [head, {"kind": "profile", "interaction_count": 1}, _memory(1)]
        return httpx.Response(
            200,
            text="".join(json.dumps(line) + "\n" for line in body),
            headers={"content-type": "application/x-ndjson"},
        )

    transport = httpx.MockTransport(pages)
    with Rapport("http://rapport.test", "k", http_client=httpx.Client(transport=transport)) as client:
        lines = list(client.users.export("dana"))
    assert [line["kind"] for line in lines] == ["header", "profile", "memory", "memory"]
    assert "next_cursor" not in lines[0]

    async def exported() -> list[dict[str, Any]]:
        async with AsyncRapport("http://rapport.test", "k", http_client=httpx.AsyncClient(transport=transport)) as c:
            return [line async for line in c.users.export("dana")]

    assert asyncio.run(exported()) == lines


def test_mem0_memories_keep_their_id_across_conversions_and_refuse_other_documents() -> None:
    document = {
        "memories": [{"id": "a1", "memory": "Likes jazz", "user_id": "alice", "created_at": "2024-01-02T03:04:05Z"}]
    }
    first, again = list(to_lines(document)), list(to_lines([document["memories"][0]]))
    assert first == again
    line = first[0]
    assert isinstance(line, dict)
    assert line["id"] == ulid_for("a1", line_time(line)) and line["trust"] == "imported"
    assert list(to_lines(document, source_user="bob")) == []
    with pytest.raises(Mem0FormatError):
        list(to_lines({"items": []}))


def line_time(line: dict[str, Any]) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(line["created_at"])
