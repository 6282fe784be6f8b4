"""Outbound webhooks over real HTTP: `/v1/webhooks` CRUD against the local server (every answer checked against the
OpenAPI document), and a memory stored through the API delivered to a receiver in this test, signed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from standardwebhooks import Webhook

from tests.e2e.conftest import RunningServer, start_server
from tests.webhook_receiver import Receiver

KEY_A = {"Authorization": "Bearer key-a"}
KEY_B = {"Authorization": "Bearer key-b"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    running = start_server(
        tmp_path / "data",
        {
            "RAPPORT_EMBEDDER": "hashing",
            "RAPPORT_HASHING_DIMENSIONS": "256",
            "RAPPORT_API_KEYS": "key-a:tenant-a,key-b:tenant-b",
            "RAPPORT_WEBHOOK_ALLOW_LOCAL_HTTP": "true",
            "RAPPORT_WEBHOOK_RETRY_BASE_SECONDS": "0.1",
        },
    )
    yield running
    running.stop()


def test_register_receive_log_and_delete_over_http(server: RunningServer) -> None:
    receiver = Receiver([500])
    try:
        with httpx.Client(base_url=server.base_url, timeout=30) as http:
            # Register: 201 with the secret, once
            created = http.post(
                "/v1/webhooks", json={"url": receiver.url, "event_types": ["memory.stored"]}, headers=KEY_A
            )
            assert created.status_code == 201, created.text
            endpoint = created.json()
            secret, webhook_id = endpoint["secret"], endpoint["id"]
            assert secret.startswith("whsec_")
            # Listed and read without the secret; another tenant sees none of it
            listed = http.get("/v1/webhooks", headers=KEY_A).json()["webhooks"]
            assert [w["id"] for w in listed] == [webhook_id] and "secret" not in listed[0]
            assert "secret" not in http.get(f"/v1/webhooks/{webhook_id}", headers=KEY_A).json()
            assert http.get("/v1/webhooks", headers=KEY_B).json()["webhooks"] == []
            assert http.get(f"/v1/webhooks/{webhook_id}", headers=KEY_B).status_code == 404
            # A memory stored through the API is delivered (after one 500), signed with that secret
            stored = http.post(
                "/v1/users/dana/memories", json={"content": "Dana keeps bees", "domain": "user"}, headers=KEY_A
            )
            assert stored.status_code == 201, stored.text
            (_, (headers, body)) = receiver.wait_for(2)
            payload = Webhook(secret).verify(body, headers)
            assert payload["data"]["memory_ids"] == [stored.json()["id"]] and b"bees" not in body
            # The log shows both attempts, newest first, and nothing of the payload
            for _ in range(50):
                log = http.get(f"/v1/webhooks/{webhook_id}/deliveries", headers=KEY_A).json()["deliveries"]
                if len(log) == 2:
                    break
                receiver.wait_for(2, timeout=0.1)
            assert [(d["attempt"], d["status_code"], d["delivered"]) for d in log] == [(2, 200, True), (1, 500, False)]
            assert set(log[0]) == {"event_id", "type", "attempt", "status_code", "error", "delivered", "at"}
            # Bad input is a 4xx with a message
            https_only = http.post(
                "/v1/webhooks", json={"url": "http://hooks.example.com", "event_types": ["user.erased"]}, headers=KEY_A
            )
            assert https_only.status_code == 400 and "https" in https_only.json()["message"]
            private = http.post(
                "/v1/webhooks", json={"url": "https://10.1.2.3/x", "event_types": ["user.erased"]}, headers=KEY_A
            )
            assert private.status_code == 400 and "private" in private.json()["message"]
            unknown_type = http.post("/v1/webhooks", json={"url": receiver.url, "event_types": ["x"]}, headers=KEY_A)
            assert unknown_type.status_code == 422
            assert http.get(f"/v1/webhooks/{webhook_id}/deliveries?limit=0", headers=KEY_A).status_code == 400
            # Delete: 204, then 404 everywhere
            assert http.delete(f"/v1/webhooks/{webhook_id}", headers=KEY_B).status_code == 404
            assert http.delete(f"/v1/webhooks/{webhook_id}", headers=KEY_A).status_code == 204
            assert http.get(f"/v1/webhooks/{webhook_id}", headers=KEY_A).status_code == 404
            assert http.get(f"/v1/webhooks/{webhook_id}/deliveries", headers=KEY_A).status_code == 404
            assert http.delete(f"/v1/webhooks/{webhook_id}", headers=KEY_A).status_code == 404
    finally:
        receiver.close()
