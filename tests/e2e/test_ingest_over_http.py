"""The signed ingest routes of the local server over real HTTP: exactly one interaction per event, whatever arrives."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import ROOT, RunningServer, start_server
from tests.integration.ingest_requests import (
    SLACK_SECRET,
    WEBHOOK_SECRET,
    slack_headers,
    slack_message,
    standard_webhook_headers,
    webhook_body,
    webhook_headers,
)

KEY = {"Authorization": "Bearer key-a"}


def set_secret(data_dir: Path, tenant: str, source: str, secret: str) -> None:
    """`rapport ingest-secret set`, the secret on standard input as an operator would pipe it."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rapport.cli",
            "ingest-secret",
            "set",
            "--tenant",
            tenant,
            "--source",
            source,
            "--data-dir",
            str(data_dir),
        ],
        input=secret + "\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT / "layers" / "core"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert secret not in done.stdout


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    data_dir = tmp_path / "data"
    set_secret(data_dir, "tenant-a", "slack", SLACK_SECRET)
    set_secret(data_dir, "tenant-a", "webhook", WEBHOOK_SECRET)
    running = start_server(
        data_dir,
        {"RAPPORT_EMBEDDER": "hashing", "RAPPORT_HASHING_DIMENSIONS": "256", "RAPPORT_API_KEYS": "key-a:tenant-a"},
    )
    yield running
    running.stop()


def history(http: httpx.Client, user_id: str) -> list[dict[str, object]]:
    response = http.get(f"/v1/users/{user_id}/history", headers=KEY)
    assert response.status_code == 200, response.text
    return list(response.json()["interactions"])


def test_slack_events_over_http_ingest_exactly_one_interaction(server: RunningServer) -> None:
    # The exact bytes matter: odd spacing and non-ASCII text must reach the check unchanged
    body = slack_message("Café ☕ at  9, then the  standup", event_id="EvHTTP1")
    with httpx.Client(base_url=server.base_url, timeout=30, params={"tenant": "tenant-a"}) as http:
        now = int(time.time())
        challenge = json.dumps({"token": "t", "challenge": "ch-1", "type": "url_verification"}).encode()
        answered = http.post("/v1/ingest/slack", content=challenge, headers=slack_headers(challenge, timestamp=now))
        assert answered.status_code == 200 and answered.json() == {"challenge": "ch-1"}

        good = http.post("/v1/ingest/slack", content=body, headers=slack_headers(body, timestamp=now))
        assert good.status_code == 200 and good.json()["outcome"] == "accepted", good.text
        forged = http.post("/v1/ingest/slack", content=body, headers=slack_headers(body, timestamp=now, secret="x"))
        assert forged.status_code == 401 and forged.json()["error"] == "unauthorized"
        stale = http.post("/v1/ingest/slack", content=body, headers=slack_headers(body, timestamp=now - 301))
        assert stale.status_code == 401 and "window" in stale.json()["message"]
        retried = http.post("/v1/ingest/slack", content=body, headers=slack_headers(body, timestamp=now, retry=1))
        assert retried.status_code == 200 and retried.json()["outcome"] == "duplicate"
        garbage = b"this is not json"
        malformed = http.post("/v1/ingest/slack", content=garbage, headers=slack_headers(garbage, timestamp=now))
        assert malformed.status_code == 400 and "Slack Events API" in malformed.json()["message"]

        (interaction,) = history(http, "U061F7AUR")
        assert interaction["channel"] == "slack"
        assert interaction["messages"][0]["content"] == "Café ☕ at  9, then the  standup"  # type: ignore[index]


def test_webhooks_over_http_ingest_exactly_one_interaction(server: RunningServer) -> None:
    body = webhook_body("evt-42")
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        now = int(time.time())
        url = "/v1/ingest/webhook?tenant=tenant-a"
        good = http.post(url, content=body, headers=webhook_headers(body, timestamp=now))
        assert good.status_code == 202, good.text
        assert http.post(url, content=body, headers=webhook_headers(body, timestamp=now, secret="x")).status_code == 401
        assert http.post(url, content=body, headers=webhook_headers(body, timestamp=now + 400)).status_code == 401
        replay = http.post(url, content=body, headers=webhook_headers(body, timestamp=now))
        assert replay.status_code == 200 and replay.json()["outcome"] == "duplicate"
        bad = b'{"idempotency_key": "evt-43"}'
        assert http.post(url, content=bad, headers=webhook_headers(bad, timestamp=now)).status_code == 400
        no_tenant = http.post("/v1/ingest/webhook", content=body, headers=webhook_headers(body, timestamp=now))
        assert no_tenant.status_code == 400 and "tenant" in no_tenant.json()["message"]
        # Signed routes need no API key, and an API key does not replace a signature
        assert http.post(url, content=body, headers=KEY).status_code == 401

        assert len(history(http, "dana")) == 1


def test_a_standard_webhook_over_http_is_ingested_once_under_its_webhook_id(server: RunningServer) -> None:
    body = webhook_body("not-the-event-id")
    url = "/v1/ingest/webhook?tenant=tenant-a"
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        now = int(time.time())
        # Signed by the standardwebhooks library with the tenant's secret
        good = http.post(url, content=body, headers=standard_webhook_headers(body, message_id="msg_e2e", timestamp=now))
        assert good.status_code == 202 and good.json()["event_id"] == "webhook:msg_e2e", good.text
        again = http.post(
            url, content=body, headers=standard_webhook_headers(body, message_id="msg_e2e", timestamp=now)
        )
        assert again.status_code == 200 and again.json()["outcome"] == "duplicate"
        forged = standard_webhook_headers(body, message_id="msg_x", timestamp=now, secret="whsec_Zm9yZ2Vk")
        refused = http.post(url, content=body, headers=forged)
        unknown = http.post("/v1/ingest/webhook?tenant=nobody", content=body, headers=forged)
        assert refused.status_code == unknown.status_code == 401
        assert refused.json()["message"] == unknown.json()["message"]
        assert len(history(http, "dana")) == 1
