"""A tenant sees its own keys (never a secret); a key removed from RAPPORT_API_KEYS stops at the next start; the CLI
revokes, and the server refuses the revoked key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx

from tests.e2e.conftest import ROOT, start_server

ENV = {"RAPPORT_EMBEDDER": "hashing", "RAPPORT_HASHING_DIMENSIONS": "256"}


def cli(data_dir: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "rapport.cli", "keys", *args, "--data-dir", str(data_dir)],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "layers" / "core"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_key_lifecycle_over_http_and_the_cli(tmp_path: Path) -> None:
    data = tmp_path / "data"
    issued = cli(data, "create", "--tenant", "tenant-a", "--name", "laptop").strip()
    server = start_server(data, {**ENV, "RAPPORT_API_KEYS": "key-a:tenant-a,key-b:tenant-b"})
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            listed = http.get("/v1/keys", headers={"Authorization": "Bearer key-a"}).json()["keys"]
            assert sorted(k["name"] for k in listed) == ["laptop", "seeded"]
            assert all(k["status"] == "active" and len(k["key_id"]) == 12 for k in listed)
            assert issued not in json.dumps(listed) and "key-a" not in json.dumps(listed)
            other = http.get("/v1/keys", headers={"Authorization": "Bearer key-b"}).json()["keys"]
            assert [k["name"] for k in other] == ["seeded"]  # only its own
            assert http.get("/v1/keys", headers={"Authorization": f"Bearer {issued}"}).status_code == 200
    finally:
        server.stop()

    laptop = next(k for k in json.loads(cli(data, "list", "--tenant", "tenant-a", "--json")) if k["name"] == "laptop")
    assert "revoked" in cli(data, "revoke", "--tenant", "tenant-a", laptop["key_id"])
    # key-b is no longer configured: it stops working with this start
    server = start_server(data, {**ENV, "RAPPORT_API_KEYS": "key-a:tenant-a"})
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            assert http.get("/v1/keys", headers={"Authorization": f"Bearer {issued}"}).status_code == 401
            assert http.get("/v1/keys", headers={"Authorization": "Bearer key-b"}).status_code == 401
            states = {
                k["name"]: k["status"] for k in http.get("/v1/keys", headers={"x-api-key": "key-a"}).json()["keys"]
            }
            assert states == {"laptop": "revoked", "seeded": "active"}
    finally:
        server.stop()
