"""The contract check itself, over HTTP: every response a test receives is recorded and checked against the
document the server serves (tests/e2e/conftest.py), so a passing e2e suite means the document told the truth."""

from __future__ import annotations

import httpx

from tests.e2e.conftest import ContractRecorder, RunningServer

A = {"Authorization": "Bearer key-a"}


def test_every_answer_is_checked_against_the_servers_document(
    hashing_server: RunningServer, http_contract: ContractRecorder
) -> None:
    with httpx.Client(base_url=hashing_server.base_url, timeout=30) as http:
        before = len(http_contract.checked)
        spec = http.get("/v1/openapi.json").json()
        # The document names this server without /v1: its paths carry it
        assert spec["servers"][0]["url"] == hashing_server.base_url
        made = [
            http.post("/v1/users/ann/memories", headers=A, json={"content": "Has a dog named Max", "domain": "user"}),
            http.get("/v1/users/ann/memories", headers=A, params={"query": "dog"}),
            http.get("/v1/users/ann/memories", headers={"Authorization": "Bearer nope"}),  # 401 from the gateway
            http.post("/v1/users/ann/memories", headers=A, content=b"x" * 1_100_000),  # 413 from the gateway
            http.post("/v1/users/ann/memories", headers={**A, "Content-Type": "text/plain"}, content=b"hi"),  # 415
            http.get("/v1/users/ann/memories/missing", headers=A),  # 404
        ]
        assert [r.status_code for r in made] == [201, 200, 401, 413, 415, 404]
    # The document's own fetch is not checked against itself; every other answer is
    recorded = [answer.status for _, answer in http_contract.checked[before:]]
    assert recorded == [201, 200, 401, 413, 415, 404]
    assert http_contract.violations() == []
