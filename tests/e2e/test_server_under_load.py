"""The local server holds load: many simultaneous clients on mixed routes get answers, none is lost, and health
answers while a long ingestion runs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.e2e.conftest import RunningServer

A = {"Authorization": "Bearer key-a", "Content-Type": "application/json"}
B = {"Authorization": "Bearer key-b", "Content-Type": "application/json"}
CLIENTS = 64
ROUNDS = 3  # each client's requests: a bounded run, whatever the machine's speed


def test_sixty_four_simultaneous_clients_on_mixed_routes(hashing_server: RunningServer) -> None:
    start = threading.Barrier(CLIENTS)

    def client(number: int) -> list[int]:
        statuses: list[int] = []
        with httpx.Client(base_url=hashing_server.base_url, timeout=120) as http:
            start.wait()  # all at once: the shape that used to exhaust the server's workers for good
            # Two tenants with the same user ids, so a request answered with another's identity would show
            key = A if number % 2 == 0 else B
            for round_ in range(ROUNDS):
                user = f"user-{number % 8}"
                kind = (number + round_) % 4
                if kind == 0:
                    response = http.get("/v1/health")
                elif kind == 1:
                    response = http.get(f"/v1/users/{user}/memories", headers=key, params={"query": "garden plans"})
                elif kind == 2:
                    response = http.post(
                        f"/v1/users/{user}/memories",
                        headers=key,
                        json={"content": f"Client {number} round {round_} likes the garden", "domain": "user"},
                    )
                else:
                    response = http.post(
                        f"/v1/users/{user}/interactions",
                        headers=key,
                        json={"messages": [{"role": "user", "content": f"Client {number} round {round_} here"}]},
                    )
                statuses.append(response.status_code)
        return statuses

    with ThreadPoolExecutor(max_workers=CLIENTS) as pool:
        results = [s for statuses in pool.map(client, range(CLIENTS)) for s in statuses]
    assert len(results) == CLIENTS * ROUNDS
    assert sorted(set(results)) == [200, 201]
    # Exactly what each tenant wrote is there: no write lost, none doubled, none under the other tenant
    for key, parity in ((A, 0), (B, 1)):
        sent = [(number, round_) for number in range(parity, CLIENTS, 2) for round_ in range(ROUNDS)]
        with httpx.Client(base_url=hashing_server.base_url, timeout=30) as http:
            for user in range(8):
                mine = [(n, r) for n, r in sent if n % 8 == user]
                history = http.get(f"/v1/users/user-{user}/history", headers=key, params={"limit": 100}).json()
                recorded = sorted(i["messages"][0]["content"] for i in history["interactions"])
                assert recorded == sorted(f"Client {n} round {r} here" for n, r in mine if (n + r) % 4 == 3)
                listed = http.get(f"/v1/users/user-{user}/memories", headers=key, params={"limit": 100}).json()
                remembered = sorted(m["content"] for m in listed["memories"] if m["content"].endswith("the garden"))
                assert remembered == sorted(
                    f"Client {n} round {r} likes the garden" for n, r in mine if (n + r) % 4 == 2
                )


def _answered_during_a_long_ingestion(server: RunningServer, probe: Callable[[httpx.Client], int]) -> int:
    """How many `probe` requests were answered (each asserted 200) while a 200-message ingestion was still running."""
    said = "we went over the deploy again, the staging database, the flaky migration and who reviews what next "
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"Message {i}: {said * 4}"} for i in range(200)
    ]
    done = threading.Event()

    def ingest() -> int:
        with httpx.Client(base_url=server.base_url, timeout=300) as http:
            response = http.post("/v1/users/dana/interactions", headers=A, json={"messages": messages})
        done.set()
        return response.status_code

    answered_during = 0
    with ThreadPoolExecutor(max_workers=1) as pool, httpx.Client(base_url=server.base_url, timeout=30) as http:
        ingestion = pool.submit(ingest)
        while not done.is_set():
            assert probe(http) == 200
            answered_during += not done.is_set()
        assert ingestion.result() == 201
    return answered_during


def test_health_answers_while_a_long_ingestion_runs(hashing_server: RunningServer) -> None:
    assert _answered_during_a_long_ingestion(hashing_server, lambda http: http.get("/v1/health").status_code) > 1


def test_a_recall_answers_while_a_long_ingestion_runs(hashing_server: RunningServer) -> None:
    """No head-of-line blocking: an authenticated route is answered beside a long request, not after it."""

    def recall(http: httpx.Client) -> int:
        return http.get("/v1/users/frank/memories", headers=B, params={"query": "deploy"}).status_code

    assert _answered_during_a_long_ingestion(hashing_server, recall) > 1
