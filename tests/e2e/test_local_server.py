"""The local server over real HTTP: every route, tenancy, bad input, erasure, and data kept across restarts."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import RunningServer, dev_key_of, start_server

A = {"Authorization": "Bearer key-a", "Content-Type": "application/json"}
B = {"x-api-key": "key-b", "Content-Type": "application/json"}


def test_every_route_over_http(hashing_server: RunningServer) -> None:
    with httpx.Client(base_url=hashing_server.base_url, timeout=30) as http:
        assert http.get("/v1/health").json()["status"] == "ok"
        assert "/v1/users/{user_id}/memories" in http.get("/v1/openapi.json").json()["paths"]
        assert "swagger" in http.get("/v1/docs").text.lower()

        dog = http.post("/v1/users/dana/memories", headers=A, json={"content": "Has a dog named Max", "domain": "user"})
        assert dog.status_code == 201, dog.text
        dog_id = dog.json()["id"]
        http.post("/v1/users/dana/memories", headers=A, json={"content": "Works at Acme", "domain": "user"})
        bullets = http.post(
            "/v1/users/dana/memories",
            headers=A,
            json={
                "content": "Bullet points work better than long paragraphs with this user",
                "domain": "relational",
                "type": "communication_preference",
            },
        )
        assert bullets.status_code == 201

        recalled = http.get(
            "/v1/users/dana/memories", headers=A, params={"query": "bullet points", "domain": "relational"}
        )
        assert [m["id"] for m in recalled.json()["memories"]] == [bullets.json()["id"]]
        assert recalled.json()["total_stored"] == 3
        by_keyword = http.get("/v1/users/dana/memories", headers=A, params={"query": "Max", "domain": "user"}).json()
        assert by_keyword["memories"][0]["id"] == dog_id and by_keyword["memories"][0]["matched_terms"] == ["max"]

        page = http.get("/v1/users/dana/memories", headers=A, params={"limit": 2}).json()
        rest = http.get("/v1/users/dana/memories", headers=A, params={"limit": 2, "cursor": page["next_cursor"]}).json()
        assert len(page["memories"]) == 2 and len(rest["memories"]) == 1 and rest["next_cursor"] is None

        assert http.get(f"/v1/users/dana/memories/{dog_id}", headers=A).json()["content"] == "Has a dog named Max"
        patched = http.patch(f"/v1/users/dana/memories/{dog_id}", headers=A, json={"content": "Has a dog named Rex"})
        assert patched.status_code == 200 and patched.json()["content"] == "Has a dog named Rex"

        interaction = http.post(
            "/v1/users/dana/interactions",
            headers=A,
            json={
                "messages": [
                    {"role": "user", "content": "I'm getting a 500 on /users again"},
                    {"role": "assistant", "content": "Let's add logging around the auth middleware"},
                ],
                "channel": "web",
                "session_id": "s1",
            },
        )
        assert interaction.status_code == 201, interaction.text
        history = http.get("/v1/users/dana/history", headers=A).json()
        assert history["interactions"][0]["id"] == interaction.json()["interaction"]["id"]
        episode = http.get("/v1/users/dana/memories", headers=A, params={"query": "500 on /users"}).json()["memories"][
            0
        ]
        assert episode["source"]["interaction_id"] == interaction.json()["interaction"]["id"]

        # Another tenant sees nothing and cannot touch anything.
        assert http.get(f"/v1/users/dana/memories/{dog_id}", headers=B).status_code == 404
        assert http.delete(f"/v1/users/dana/memories/{dog_id}", headers=B).status_code == 404
        assert http.get("/v1/users/dana/memories", headers=B).json()["total_stored"] == 0
        assert http.get("/v1/users/dana/history", headers=B).json()["interactions"] == []

        assert http.delete(f"/v1/users/dana/memories/{dog_id}", headers=A).status_code == 204
        assert http.get(f"/v1/users/dana/memories/{dog_id}", headers=A).status_code == 404

        erased = http.delete("/v1/privacy/erase/dana", headers=A)
        assert erased.status_code == 200
        counts = erased.json()["counts"]
        # Besides the episodes and API memories, the ingestion pipeline's memories; its edges, filter decisions and
        # the relational state are among the other items.
        extracted = len(interaction.json()["pipeline"]["stored"])
        assert extracted >= 1
        assert counts["memories"] == counts["index_entries"] == 4 + extracted
        assert counts["interactions"] == 1 and counts["other_items"] > 1
        assert http.get("/v1/users/dana/memories", headers=A).json()["total_stored"] == 0
        audit = http.get("/v1/audit", headers=A).json()["events"]
        assert audit[0]["id"] == erased.json()["audit_event_id"] and audit[0]["target_user_hash"].startswith("sha256:")
        assert "dana" not in json.dumps(audit[0])
        # tenant B sees none of A's trail: only its own calls (its refused reach for A's memory above)
        theirs = http.get("/v1/audit", headers=B).json()["events"]
        own_ids = {e["id"] for e in audit}
        assert theirs and not own_ids & {e["id"] for e in theirs}
        assert {e["actor"] for e in theirs}.isdisjoint({e["actor"] for e in audit})


def test_auth_and_bad_input_get_clear_errors(hashing_server: RunningServer) -> None:
    with httpx.Client(base_url=hashing_server.base_url, timeout=30) as http:
        assert http.get("/v1/users/dana/memories").status_code == 401
        assert http.get("/v1/users/dana/memories", headers={"Authorization": "Bearer nope"}).status_code == 401
        # A client cannot pick its tenant with the gateway's own header.
        spoof = http.get("/v1/users/dana/memories", headers={"x-rapport-tenant": "tenant-a"})
        assert spoof.status_code == 401

        cases = [
            (http.post("/v1/users/dana/memories", headers=A, content=b'{"content": '), 400, "malformed_json"),
            (
                http.post("/v1/users/dana/memories", headers=A, json={"content": "x", "domain": "moods"}),
                422,
                "validation_error",
            ),
            (
                http.post("/v1/users/dana/memories", headers=A, json={"content": "", "domain": "user"}),
                400,
                "invalid_input",
            ),
            (
                http.post("/v1/users/dana/memories", headers=A, json={"content": "x" * 8001, "domain": "user"}),
                400,
                "invalid_input",
            ),
            (
                http.post("/v1/users/dana/memories", headers=A, content=b"{" + b" " * 2_000_000 + b"}"),
                413,
                "payload_too_large",
            ),
            (http.get("/v1/users/dana/memories", headers=A, params={"limit": 1000}), 400, "invalid_input"),
            (
                http.post(
                    "/v1/users/dana/interactions", headers=A, json={"messages": [{"role": "bot", "content": "x"}]}
                ),
                422,
                "validation_error",
            ),
        ]
        for response, status, code in cases:
            assert (response.status_code, response.json()["error"]) == (status, code), response.text
            assert response.json()["message"]
        assert http.get("/v1/users/dana/memories", headers=A).json()["total_stored"] == 0


def test_data_survives_a_restart(tmp_path: Path) -> None:
    env = {"RAPPORT_EMBEDDER": "hashing", "RAPPORT_HASHING_DIMENSIONS": "1024", "RAPPORT_API_KEYS": "key-a:tenant-a"}
    first = start_server(tmp_path / "data", env)
    try:
        created = httpx.post(
            f"{first.base_url}/v1/users/dana/memories",
            headers=A,
            json={"content": "Has a dog named Max", "domain": "user"},
        )
        assert created.status_code == 201
    finally:
        first.stop()
    second = start_server(tmp_path / "data", env)
    try:
        hits = httpx.get(f"{second.base_url}/v1/users/dana/memories", headers=A, params={"query": "dog"}).json()
        assert [m["id"] for m in hits["memories"]] == [created.json()["id"]]
    finally:
        second.stop()


@pytest.mark.slow
def test_default_server_uses_minilm_and_prints_a_dev_key(tmp_path: Path) -> None:
    """What `make dev` runs: no settings at all. Recall must work by meaning, not only by shared words."""
    server = start_server(tmp_path / "data", {})
    try:
        key = dev_key_of(server)
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        base = f"{server.base_url}/v1/users/dana/memories"
        for content in ("Has a golden retriever puppy", "Works as a nurse at the city hospital"):
            assert (
                httpx.post(base, headers=headers, json={"content": content, "domain": "user"}, timeout=60).status_code
                == 201
            )
        hits = httpx.get(base, headers=headers, params={"query": "what pet does she have?"}, timeout=60).json()
        assert hits["memories"][0]["content"] == "Has a golden retriever puppy"
        assert hits["memories"][0]["matched_terms"] == []
    finally:
        server.stop()
    # The dev key is kept in the data directory and still works after a restart.
    again = start_server(tmp_path / "data", {})
    try:
        assert dev_key_of(again) == key
    finally:
        again.stop()
