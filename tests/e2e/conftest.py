"""Starts `rapport serve` as a real process on a free port and waits until it answers."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.e2e)


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
