"""Scoped keys and the audit trail over HTTP: keys issued by the CLI with `--scope`, the local server refusing what a
key's scopes do not cover (403 naming the scope, declared in the document: the autouse contract check holds every
answer to it), the SDK raising its typed error, and the trail read back by end user and time."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from rapport_client import Forbidden, Rapport
from tests.e2e.conftest import ROOT, start_server

ENV = {"RAPPORT_EMBEDDER": "hashing", "RAPPORT_HASHING_DIMENSIONS": "256", "RAPPORT_API_KEYS": "admin-key:tenant-a"}
ADMIN = {"Authorization": "Bearer admin-key"}


def cli(data_dir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rapport.cli", "keys", *args, "--data-dir", str(data_dir)],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "layers" / "core"), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        check=check,
    )


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_scoped_keys_and_the_audit_trail_over_http(tmp_path: Path) -> None:
    data = tmp_path / "data"
    issue = ("create", "--tenant", "tenant-a", "--name")
    reader = cli(data, *issue, "reader", "--scope", "memories:read").stdout.strip()
    writer = cli(data, *issue, "writer", "--scope", "memories:write", "--scope", "memories:read").stdout.strip()
    eraser = cli(data, *issue, "eraser", "--scope", "privacy:erase").stdout.strip()
    # an unknown scope is refused by the CLI, listing the known ones
    typo = cli(data, *issue, "typo", "--scope", "memories:delete", check=False)
    assert typo.returncode != 0 and "memories:read" in typo.stderr
    listed = {k["name"]: k for k in json.loads(cli(data, "list", "--tenant", "tenant-a", "--json").stdout)}
    assert listed["writer"]["scopes"] == ["memories:read", "memories:write"]

    server = start_server(data, ENV)
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            started = datetime.now(UTC)
            # the reader reads, and is refused a write with the scope named
            assert http.get("/v1/users/ana/memories", headers=bearer(reader)).status_code == 200
            refused = http.post(
                "/v1/users/ana/memories", headers=bearer(reader), json={"content": "Has a dog", "domain": "user"}
            )
            assert refused.status_code == 403
            assert refused.json()["error"] == "forbidden"
            assert refused.json()["message"].startswith("memories_add requires scope memories:write")
            # the writer writes; neither may erase or read the trail; the eraser erases and reads nothing
            wrote = http.post(
                "/v1/users/ana/memories", headers=bearer(writer), json={"content": "Has a dog", "domain": "user"}
            )
            assert wrote.status_code == 201
            assert http.delete("/v1/privacy/erase/ana", headers=bearer(writer)).status_code == 403
            assert (
                http.get("/v1/audit", headers=bearer(writer))
                .json()["message"]
                .endswith("this key has memories:read, memories:write")
            )
            assert http.get("/v1/users/ana/memories", headers=bearer(eraser)).status_code == 403
            http.post("/v1/users/ben/memories", headers=bearer(writer), json={"content": "Chess", "domain": "user"})
            assert http.delete("/v1/privacy/erase/ben", headers=bearer(eraser)).status_code == 200

            # GET /v1/keys (admin) shows each key's scopes
            keys = {k["name"]: k for k in http.get("/v1/keys", headers=ADMIN).json()["keys"]}
            assert keys["reader"]["scopes"] == ["memories:read"] and keys["seeded"]["scopes"] == ["admin"]

            # the trail: ana's writes and refusals, by the key that made them, never the content
            trail = http.get("/v1/audit", headers=ADMIN, params={"user_id": "ana"}).json()["events"]
            made = [(e["operation"], e["status"], e["actor"]) for e in trail]
            assert sorted(made) == sorted(
                [
                    ("memories_add", 201, keys["writer"]["key_id"]),
                    ("memories_add", 403, keys["reader"]["key_id"]),
                    ("users_erase", 403, keys["writer"]["key_id"]),
                ]
            )
            assert "Has a dog" not in json.dumps(trail) and "ana" not in json.dumps(trail)
            window = {"since": (started - timedelta(minutes=1)).isoformat(), "user_id": "ben"}
            ben = http.get("/v1/audit", headers=ADMIN, params=window).json()["events"]
            assert [e["action"] for e in ben] == ["erase_user", "write"]
            future = {"since": (datetime.now(UTC) + timedelta(hours=1)).isoformat()}
            assert http.get("/v1/audit", headers=ADMIN, params=future).json()["events"] == []

        # the SDK raises its typed error, with the scopes the call needs
        with Rapport(server.base_url, reader, max_retries=0) as client:
            with pytest.raises(Forbidden) as raised:
                client.memories.add("ana", "Has a cat")
            assert raised.value.status == 403 and raised.value.error == "forbidden"
            assert raised.value.required_scopes == ["memories:write"]
            assert raised.value.missing_scopes == ["memories:write"]
            assert "requires scope memories:write" in str(raised.value)
        with Rapport(server.base_url, "admin-key", max_retries=0) as admin:
            events = list(admin.audit.list(user_id="ana"))
            # reading ana's trail is itself in ana's trail (a privileged read about her)
            assert {e.operation for e in events} == {"memories_add", "users_erase", "audit_list"}
            assert all(e.target_user_hash and e.target_user_hash.startswith("sha256:") for e in events)
    finally:
        server.stop()
