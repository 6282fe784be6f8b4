"""Browsers from the configured origins may call the local server; others get no CORS grant. `rapport --version`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from rapport import __version__
from tests.e2e.conftest import ROOT, start_server

ALLOWED = "http://localhost:5173"


def test_cors_for_the_configured_origins_only(tmp_path: Path) -> None:
    env = {
        "RAPPORT_EMBEDDER": "hashing",
        "RAPPORT_HASHING_DIMENSIONS": "256",
        "RAPPORT_API_KEYS": "key-a:tenant-a",
        "RAPPORT_CORS_ORIGINS": f"{ALLOWED}, https://app.example.com/",
    }
    server = start_server(tmp_path / "data", env)
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            preflight = http.options(
                "/v1/users/dana/memories",
                headers={
                    "Origin": ALLOWED,
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "authorization, content-type",
                },
            )
            assert preflight.status_code == 204
            assert preflight.headers["access-control-allow-origin"] == ALLOWED
            assert "POST" in preflight.headers["access-control-allow-methods"]
            assert "authorization" in preflight.headers["access-control-allow-headers"]

            created = http.post(
                "/v1/users/dana/memories",
                headers={"Origin": "https://app.example.com", "Authorization": "Bearer key-a"},
                json={"content": "Likes tea", "domain": "user"},
            )
            assert created.status_code == 201, created.text
            assert created.headers["access-control-allow-origin"] == "https://app.example.com"
            # An error answers with the grant too, so the page can read why
            refused = http.get("/v1/users/dana/memories", headers={"Origin": ALLOWED})
            assert refused.status_code == 401 and refused.headers["access-control-allow-origin"] == ALLOWED

            elsewhere = http.options("/v1/users/dana/memories", headers={"Origin": "https://evil.example"})
            assert elsewhere.status_code == 403 and elsewhere.json()["error"] == "forbidden"
            assert "access-control-allow-origin" not in elsewhere.headers
            read = http.get("/v1/health", headers={"Origin": "https://evil.example"})
            assert read.status_code == 200 and "access-control-allow-origin" not in read.headers
    finally:
        server.stop()


def test_version() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "rapport.cli", "--version"],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "layers" / "core"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == f"rapport {__version__}"
