"""Latency of `rapport serve` under simultaneous clients: p50 / p95 per route at 1, 16 and 64 clients.

Each client sends the same mixed sequence (health, a recall, a recorded two-message interaction) a fixed number of
times; every request's latency is kept, and an error is counted, never retried. The server runs the local defaults
except the hashing embedder (the model would dominate every figure) and one tenant.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.measure import DIMENSIONS, free_port, percentile

CLIENT_COUNTS = (1, 16, 64)
ROUNDS = 5  # each client's mixed sequences
ROUTES = ("health", "recall", "record")
_KEY = {"Authorization": "Bearer load-key"}


@dataclass(frozen=True)
class LoadRow:
    clients: int
    route: str
    requests: int
    errors: int
    p50_ms: float
    p95_ms: float


def _client(base: str, number: int, start: threading.Barrier) -> list[tuple[str, float, bool]]:
    timings: list[tuple[str, float, bool]] = []
    user = f"user-{number % 8}"
    with httpx.Client(base_url=base, timeout=120) as http:
        start.wait()
        for round_ in range(ROUNDS):
            for route in ROUTES:
                began = time.perf_counter()
                if route == "health":
                    response = http.get("/v1/health")
                elif route == "recall":
                    response = http.get(f"/v1/users/{user}/memories", headers=_KEY, params={"query": "the trip"})
                else:
                    messages = [
                        {"role": "user", "content": f"Client {number} plans the trip to Porto, round {round_}"},
                        {"role": "assistant", "content": "Shall I keep a list of what to pack?"},
                    ]
                    response = http.post(f"/v1/users/{user}/interactions", headers=_KEY, json={"messages": messages})
                timings.append((route, time.perf_counter() - began, response.status_code >= 400))
    return timings


def _rows(base: str, clients: int) -> list[LoadRow]:
    start = threading.Barrier(clients)
    with ThreadPoolExecutor(max_workers=clients) as pool:
        timings = [t for part in pool.map(lambda n: _client(base, n, start), range(clients)) for t in part]
    rows = []
    for route in ROUTES:
        seconds = [s for r, s, _ in timings if r == route]
        errors = sum(1 for r, _, failed in timings if r == route and failed)
        rows.append(
            LoadRow(clients, route, len(seconds), errors, percentile(seconds, 50) * 1e3, percentile(seconds, 95) * 1e3)
        )
    return rows


def server_load(data_dir: Path) -> list[LoadRow] | None:
    port = free_port()
    env = {
        **os.environ,
        "RAPPORT_DATA_DIR": str(data_dir),
        "RAPPORT_EMBEDDER": "hashing",
        "RAPPORT_HASHING_DIMENSIONS": str(DIMENSIONS),
        "RAPPORT_API_KEYS": "load-key:load-tenant",
    }
    rapport = Path(sys.executable).parent / "rapport"
    process = subprocess.Popen(
        [str(rapport), "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(f"{base}/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                return None
            time.sleep(0.5)
        _rows(base, 1)  # warm: first writes create the users' items
        return [row for clients in CLIENT_COUNTS for row in _rows(base, clients)]
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


def markdown(rows: list[LoadRow] | None) -> list[str]:
    out = [
        "## The local server under simultaneous clients",
        "",
        f"`rapport serve` (hashing embedder, local pipeline), every client sending {ROUNDS} times: `GET /v1/health`, a "
        "recall (`GET …/memories?query=`), a recorded two-message interaction (`POST …/interactions`, its pipeline "
        "waited for). All clients start at once; latency per request, errors counted and never retried.",
        "",
    ]
    if rows is None:
        return [*out, "`rapport serve` did not come up within five minutes; not measured.", ""]
    out += ["| clients | route | requests | errors | p50 ms | p95 ms |", "|---:|---|---:|---:|---:|---:|"]
    out += [f"| {r.clients} | {r.route} | {r.requests} | {r.errors} | {r.p50_ms:.1f} | {r.p95_ms:.1f} |" for r in rows]
    return [*out, ""]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        print("\n".join(markdown(server_load(Path(work)))))
