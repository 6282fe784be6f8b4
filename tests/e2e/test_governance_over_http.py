"""Governance end to end: a session's working memory over HTTP, and `rapport jobs` run by hand on the server's data."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from tests.e2e.conftest import ROOT, RunningServer, start_server

A = {"Authorization": "Bearer key-a", "Content-Type": "application/json"}
B = {"Authorization": "Bearer key-b", "Content-Type": "application/json"}
ENVIRONMENT = {
    "RAPPORT_EMBEDDER": "hashing",
    "RAPPORT_HASHING_DIMENSIONS": "1024",
    "RAPPORT_API_KEYS": "key-a:tenant-a,key-b:tenant-b",
}


def jobs(data_dir: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAPPORT_") and k != "OPENAI_API_KEY"}
    env.update({"PYTHONPATH": str(ROOT / "layers" / "core"), "HF_HUB_OFFLINE": "1", **ENVIRONMENT})
    done = subprocess.run(
        [sys.executable, "-m", "rapport.cli", "jobs", *args, "--data-dir", str(data_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_working_memory_and_jobs_by_hand(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    server: RunningServer = start_server(data_dir, ENVIRONMENT)
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            for text in ("I'm planning a trip to Rome next month.", "Which area is good for a first visit?"):
                exchange = {"messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "Ok."}]}
                created = http.post("/v1/users/dana/interactions", headers=A, json={**exchange, "session_id": "rome"})
                assert created.status_code == 201, created.text
            context = http.get("/v1/users/dana/sessions/rome/context", headers=A)
            assert context.status_code == 200, context.text
            assert [t["content"] for t in context.json()["turns"]][::2] == [
                "I'm planning a trip to Rome next month.",
                "Which area is good for a first visit?",
            ]
            assert http.get("/v1/users/dana/sessions/rome/context", headers=B).status_code == 404
            fact = http.post(
                "/v1/users/dana/memories", headers=A, json={"content": "Has a dog named Max", "domain": "user"}
            )
            fact_id = fact.json()["id"]
    finally:
        server.stop()

    # Three weeks on, by hand: decay, then compression of what faded; a second run changes nothing
    later = (datetime.now(UTC) + timedelta(days=21)).isoformat()
    assert f"decayed {fact_id}" in jobs(data_dir, "run", "decay", "--now", later)
    assert f"compression-into {fact_id}" in jobs(data_dir, "run", "compress", "--now", later)
    assert "nothing to change" in jobs(data_dir, "run", "compress", "--now", later)

    # The server (which loads the embedded index at start) sees the result: the original archived, listed only
    # when asked; the compact memory recalled in its place
    server = start_server(data_dir, ENVIRONMENT)
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            params = {"type": "fact", "limit": "50"}
            listed = http.get("/v1/users/dana/memories", headers=A, params=params).json()["memories"]
            assert fact_id not in {m["id"] for m in listed}
            everything = http.get(
                "/v1/users/dana/memories", headers=A, params={**params, "include_archived": "true"}
            ).json()["memories"]
            assert {m["id"]: m["status"] for m in everything}[fact_id] == "archived"
            hits = http.get("/v1/users/dana/memories", headers=A, params={"query": "dog named Max"}).json()["memories"]
            assert hits[0]["status"] == "compressed" and "Has a dog named Max" in hits[0]["content"]
    finally:
        server.stop()
