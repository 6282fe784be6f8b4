"""One person moved out and back over HTTP through the SDK and the CLI: export → erase → import gives the same recall
(ids, contents, order) and the same state; the tenant's user listing; Mem0's export through `rapport import`."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from rapport import cli
from rapport_client import Rapport
from tests.e2e.conftest import RunningServer

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _recall(client: Rapport, user_id: str, query: str) -> list[tuple[str, str]]:
    return [(hit.id, hit.content) for hit in client.memories.search(user_id, query, limit=5).memories]


def _state(client: Rapport, user_id: str) -> dict[str, object]:
    """The state as read, less the moment it was read at."""
    return client.state.get(user_id).model_dump(exclude={"as_of"})


def test_export_erase_import_gives_back_the_same_recall_and_state(hashing_server: RunningServer) -> None:
    with Rapport(hashing_server.base_url, "key-a") as client:
        client.memories.add("dana", "Has a dog named Max")
        client.memories.add("dana", "Prefers green tea in the morning", type="preference")
        client.memories.add("dana", "Works as a structural engineer in Lyon")
        client.interactions.record(
            "dana",
            [
                {"role": "user", "content": "My sister Anna visits next week and I am thrilled, thank you!"},
                {"role": "assistant", "content": "Wonderful, enjoy the visit."},
            ],
        )
        exported = list(client.users.export("dana"))
        assert exported[0]["kind"] == "header" and exported[0]["format"] == "rapport-export"
        assert "next_cursor" not in exported[0]
        recall_before = {q: _recall(client, "dana", q) for q in ("my dog", "what does dana drink", "sister Anna")}
        state_before = _state(client, "dana")
        people_before = [p.model_dump() for p in client.people.list("dana")]
        listed = {u.user_id: u for u in client.users.list()}
        assert listed["dana"].memory_count >= 5 and listed["dana"].interaction_count == 1

        # When the person is erased and the export imported through the SDK, in chunks
        client.users.erase("dana")
        assert client.memories.search("dana", "my dog").memories == []
        result = client.users.import_("dana", exported)

        # Then recall, state and people are what they were
        assert result.errors == [] and result.imported["memory"] >= 5
        assert {q: _recall(client, "dana", q) for q in recall_before} == recall_before
        # (sentiment decays from when it was set: read a moment later it is the same to the rounding)
        state_after = _state(client, "dana")
        assert state_after.pop("sentiment") == pytest.approx(state_before.pop("sentiment"), abs=1e-5)
        assert state_after == state_before
        assert [p.model_dump() for p in client.people.list("dana")] == people_before

        # And importing it again stores nothing twice
        again = client.users.import_("dana", exported)
        assert again.imported.get("memory", 0) == 0 and again.skipped["memory"] == result.imported["memory"]
        assert {q: _recall(client, "dana", q) for q in recall_before} == recall_before


def test_the_cli_exports_to_a_file_and_imports_it_and_mem0s_export(
    hashing_server: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAPPORT_URL", hashing_server.base_url)
    monkeypatch.setenv("RAPPORT_API_KEY", "key-b")
    with Rapport(hashing_server.base_url, "key-b") as client:
        stored = client.memories.add("lee", "Plays the cello on Sundays")
        out = tmp_path / "lee.jsonl"
        assert cli.main(["export", "lee", "--out", str(out)]) == 0
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        assert [line["kind"] for line in lines] == ["header", "memory"] and lines[1]["id"] == stored.id

        assert cli.main(["import", "kim", str(out)]) == 0
        assert _recall(client, "kim", "cello") == [(stored.id, "Plays the cello on Sundays")]

        assert cli.main(["import", "alice", str(FIXTURES / "mem0_export.json"), "--format", "mem0"]) == 1  # one bad
        contents = {m.content for m in client.memories.list("alice")}
        assert "Prefers window seats on flights" in contents and "Works as a nurse" not in contents


def test_import_answers_4xx_for_what_is_not_an_export(hashing_server: RunningServer) -> None:
    headers = {"Authorization": "Bearer key-a"}
    with httpx.Client(base_url=hashing_server.base_url, timeout=30) as http:
        as_json = http.post("/v1/users/dana/import", headers=headers, json={"memories": []})
        assert as_json.status_code == 415 and as_json.json()["error"] == "unsupported_media_type"
        ndjson = {**headers, "Content-Type": "application/x-ndjson"}
        no_header = http.post("/v1/users/dana/import", headers=ndjson, content=b'{"kind": "memory"}\n')
        assert no_header.status_code == 400 and "header" in no_header.json()["message"]
        bad_cursor = http.get("/v1/users/dana/export", headers=headers, params={"cursor": "zzz"})
        assert bad_cursor.status_code == 400
        too_big = http.post("/v1/users/dana/import", headers=ndjson, content=b"x" * (1024 * 1024 + 1))
        assert too_big.status_code == 413
