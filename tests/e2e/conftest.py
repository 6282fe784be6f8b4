"""Starts `rapport serve` as a real process on a free port and waits until it answers."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.openapi_contract import Answer, Contract

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.e2e)


class ContractRecorder:
    """Every response an httpx client of the test receives, with the document of the server that gave it, fetched
    from that server the first time it answers (while it runs)."""

    def __init__(self) -> None:
        self.checked: list[tuple[Contract, Answer]] = []
        self._contracts: dict[str, Contract] = {}
        self._lock = threading.Lock()

    def record(self, request: httpx.Request, response: httpx.Response) -> None:
        origin = f"{request.url.scheme}://{request.url.netloc.decode()}"
        answer = Answer(
            method=request.method,
            path=request.url.path,
            status=response.status_code,
            content_type=response.headers.get("content-type", ""),
            body=response.content,
        )
        with self._lock:
            if origin not in self._contracts:
                self._contracts[origin] = Contract(_fetch_document(origin))
            self.checked.append((self._contracts[origin], answer))

    def violations(self) -> list[str]:
        with self._lock:
            return [problem for contract, answer in self.checked for problem in contract.violations(answer)]


def _fetch_document(origin: str) -> dict[str, Any]:
    # urllib, not httpx: this request is the contract's own and must not be recorded against it.
    with urllib.request.urlopen(f"{origin}/v1/openapi.json", timeout=30) as answer:  # noqa: S310 - a local server
        document: dict[str, Any] = json.load(answer)
        return document


_OWN_PATHS = frozenset({"/v1/openapi.json", "/v1/docs"})


@contextmanager
def contract_checked(monkeypatch: pytest.MonkeyPatch) -> Iterator[ContractRecorder]:
    """Every response an httpx client (sync or async) receives inside is checked against the answering server's own
    OpenAPI document on the way out: an undeclared status or a body outside its schema fails the test, listed."""
    recorder = ContractRecorder()
    send, send_async = httpx.Client.send, httpx.AsyncClient.send

    def recording_send(client: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        response = send(client, request, **kwargs)
        if not kwargs.get("stream") and request.url.path not in _OWN_PATHS:
            recorder.record(request, response)
        return response

    async def recording_send_async(client: httpx.AsyncClient, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        response = await send_async(client, request, **kwargs)
        if not kwargs.get("stream") and request.url.path not in _OWN_PATHS:
            await response.aread()
            recorder.record(request, response)
        return response

    monkeypatch.setattr(httpx.Client, "send", recording_send)
    monkeypatch.setattr(httpx.AsyncClient, "send", recording_send_async)
    yield recorder
    problems = recorder.violations()
    if problems:
        listed = "\n  ".join(problems[:25])
        more = f"\n  ... and {len(problems) - 25} more" if len(problems) > 25 else ""
        pytest.fail(f"{len(problems)} answer(s) break the OpenAPI contract:\n  {listed}{more}", pytrace=False)


@pytest.fixture(autouse=True)
def http_contract(monkeypatch: pytest.MonkeyPatch) -> Iterator[ContractRecorder]:
    with contract_checked(monkeypatch) as recorder:
        yield recorder


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class RunningServer:
    process: subprocess.Popen[str]
    base_url: str
    log_path: Path

    def output(self) -> str:
        return self.log_path.read_text()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_server(data_dir: Path, env_overrides: dict[str, str], startup_timeout: float = 120.0) -> RunningServer:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAPPORT_") and k != "OPENAI_API_KEY"}
    env.update({"HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **env_overrides})
    log_path = data_dir.parent / f"server-{port}.log"
    log = log_path.open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "rapport.cli", "serve", "--port", str(port), "--data-dir", str(data_dir)],
        cwd=ROOT,
        env={**env, "PYTHONPATH": str(ROOT / "layers" / "core")},
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    server = RunningServer(process, f"http://127.0.0.1:{port}", log_path)
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{server.output()}")
        try:
            if httpx.get(f"{server.base_url}/v1/health", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"server did not start:\n{server.output()}")


@pytest.fixture
def hashing_server(tmp_path: Path) -> Iterator[RunningServer]:
    server = start_server(
        tmp_path / "data",
        {
            "RAPPORT_EMBEDDER": "hashing",
            "RAPPORT_HASHING_DIMENSIONS": "1024",
            "RAPPORT_API_KEYS": "key-a:tenant-a,key-b:tenant-b",
        },
    )
    yield server
    server.stop()


def dev_key_of(server: RunningServer) -> str:
    match = re.search(r"Development API key \(tenant 'dev'\): (\S+)", server.output())
    assert match, server.output()
    return match.group(1)
