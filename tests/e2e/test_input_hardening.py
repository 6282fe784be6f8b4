"""Hostile input over real HTTP, where it is the local gateway's business: bytes that are not UTF-8 (on the
unauthenticated webhook route too), header values that are not, requests that are not HTTP, a method a path does
not answer, and a body announced but never sent. Every answer is a 4xx `{error, message}`, and the server goes on
answering."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import RunningServer, start_server
from tests.e2e.test_ingest_over_http import set_secret
from tests.integration.ingest_requests import WEBHOOK_SECRET, webhook_headers

KEY = {"Authorization": "Bearer key-a"}
BODY_TIMEOUT_SECONDS = 1


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    data_dir = tmp_path / "data"
    set_secret(data_dir, "tenant-a", "webhook", WEBHOOK_SECRET)
    running = start_server(
        data_dir,
        {
            "RAPPORT_EMBEDDER": "hashing",
            "RAPPORT_HASHING_DIMENSIONS": "256",
            "RAPPORT_API_KEYS": "key-a:tenant-a",
            "RAPPORT_BODY_TIMEOUT_SECONDS": str(BODY_TIMEOUT_SECONDS),
        },
    )
    yield running
    running.stop()


def raw_exchange(server: RunningServer, request: bytes, *, wait: float = 10.0) -> tuple[bytes, float]:
    """Send bytes as they are, read until the server closes the connection; the answer and how long it took."""
    host, port = server.base_url.removeprefix("http://").split(":")
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=wait) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer, time.monotonic() - started


def status_and_body(answer: bytes) -> tuple[int, dict[str, object]]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)


def stored(http: httpx.Client) -> int:
    return int(http.get("/v1/users/u1/memories", headers=KEY).json()["total_stored"])


def test_bodies_that_are_not_utf8_are_a_400_on_keyed_and_signed_routes(server: RunningServer) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        keyed = http.post("/v1/users/u1/memories", headers=KEY, content=b'{"content": "\xff\xfe", "domain": "user"}')
        assert keyed.status_code == 400 and "not UTF-8" in keyed.json()["message"]
        # The webhook route needs no key: a stranger's bytes are refused by the signature, the sender's by encoding
        now = int(time.time())
        junk = b"\x80\x81\xfe{}"
        unsigned = http.post("/v1/ingest/webhook?tenant=tenant-a", content=junk)
        assert unsigned.status_code == 401 and unsigned.json()["error"] == "unauthorized"
        signed = http.post(
            "/v1/ingest/webhook?tenant=tenant-a", content=junk, headers=webhook_headers(junk, timestamp=now)
        )
        assert signed.status_code == 400 and "not UTF-8" in signed.json()["message"]
        assert stored(http) == 0


def test_header_values_that_are_not_utf8_are_read_as_latin1_bytes(server: RunningServer) -> None:
    body = b'{"content": "Has a dog named Max", "domain": "user"}'
    request = (
        b"POST /v1/users/u1/memories HTTP/1.1\r\nHost: local\r\nAuthorization: Bearer key-a\r\n"
        b"Idempotency-Key: caf\xe9-\xff\r\nX-Note: \x80\x81\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
    ) + body
    first, _ = raw_exchange(server, request)
    replay, _ = raw_exchange(server, request)
    assert status_and_body(first)[0] == 201 and status_and_body(replay)[0] == 201
    assert b"idempotent-replayed: true" in replay.lower()
    assert status_and_body(first)[1]["id"] == status_and_body(replay)[1]["id"]
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        assert stored(http) == 1


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"NOT HTTP AT ALL\r\n\r\n",
        b"GET /v1/health HTTP/1.1\r\nHost: local\r\nA header without a colon\r\n\r\n",
        b"GET /v1/health HTTP/1.1\r\nHost: local\r\nX-Nul: a\x00b\r\n\r\n",
    ],
)
def test_a_request_that_is_not_http_gets_the_api_error_shape(server: RunningServer, request_bytes: bytes) -> None:
    answer, _ = raw_exchange(server, request_bytes)
    status, body = status_and_body(answer)
    assert status == 400 and body["error"] == "bad_request" and body["message"]
    assert b"content-type: application/json" in answer.lower()


def test_a_method_a_path_does_not_answer_is_a_405_with_allow(server: RunningServer) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        for method, path, allowed in (
            ("TRACE", "/v1/users/u1/memories", "GET, POST"),
            ("PUT", "/v1/users/u1/memories", "GET, POST"),
            ("DELETE", "/v1/health", "GET"),
        ):
            answer = http.request(method, path, headers=KEY)
            assert answer.status_code == 405, (method, path, answer.text)
            assert answer.headers["allow"] == allowed and answer.json()["error"] == "method_not_allowed"
        assert http.request("TRACE", "/v1/nowhere", headers=KEY).status_code == 404


def test_a_body_of_another_media_type_is_a_415_in_the_error_shape(server: RunningServer) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        for content_type in ("multipart/form-data", "application/x-www-form-urlencoded", "text/plain"):
            answer = http.post(
                "/v1/users/u1/memories", headers={**KEY, "Content-Type": content_type}, content=b"content=x"
            )
            assert answer.status_code == 415 and answer.json()["error"] == "unsupported_media_type", answer.text
            assert content_type in answer.json()["message"]
        assert stored(http) == 0


@pytest.mark.parametrize("path", ["/v1/users/u1/memories", "/v1/ingest/webhook?tenant=tenant-a"])
def test_a_body_announced_and_never_sent_is_a_408_and_the_connection_is_closed(
    server: RunningServer, path: str
) -> None:
    # Given a client that promises 100 bytes, sends 12 and then nothing
    request = (
        f"POST {path} HTTP/1.1\r\nHost: local\r\nAuthorization: Bearer key-a\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    ).encode() + b'{"content": '
    # Then the server answers 408 at its deadline and closes the connection (the read ends)
    answer, took = raw_exchange(server, request, wait=BODY_TIMEOUT_SECONDS + 15)
    status, body = status_and_body(answer)
    assert status == 408 and body["error"] == "request_timeout"
    assert BODY_TIMEOUT_SECONDS * 0.9 <= took < BODY_TIMEOUT_SECONDS + 10
    assert b"connection: close" in answer.lower()
    # And it goes on answering everyone else
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        assert http.get("/v1/health").status_code == 200
        assert stored(http) == 0
