"""Retries, Retry-After, Idempotency-Key and error mapping, over an httpx MockTransport: no server, no sockets."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from rapport_client import (
    AsyncRapport,
    Forbidden,
    NotFound,
    Rapport,
    RapportConnectionError,
    RateLimited,
    RetryPolicy,
    ServerError,
)

pytestmark = pytest.mark.unit

BASE = "http://rapport.test"
MEMORY_ID = "01HZZZZZZZZZZZZZZZZZZZZZZZ"
MEMORY = {
    "id": MEMORY_ID,
    "user_id": "dana",
    "domain": "user",
    "type": "fact",
    "content": "Has a dog named Max",
    "strength": 1.0,
    "importance": 0.5,
    "confidence": 1.0,
    "tier": "short_term",
    "status": "active",
    "associations": [],
    "source": {"kind": "api"},
    "metadata": {},
    "created_at": "2026-01-05T09:00:00Z",
    "updated_at": "2026-01-05T09:00:00Z",
    "occurred_at": None,
    "last_reinforced_at": "2026-01-05T09:00:00Z",
    "a_field_from_a_newer_server": 7,
}

Answer = httpx.Response | Exception


class Script:
    """Answers the requests it receives with the scripted responses (or raises the scripted errors), in order."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def keys(self) -> list[str | None]:
        return [r.headers.get("Idempotency-Key") for r in self.requests]


def client_over(script: Script, sleeps: list[float], **kwargs: object) -> Rapport:
    kwargs.setdefault("retry", RetryPolicy(max_retries=2, initial_delay=0.5, max_delay=8.0, rng=random.Random(7)))
    client = Rapport(BASE, "key", http_client=httpx.Client(transport=httpx.MockTransport(script)), **kwargs)  # type: ignore[arg-type]
    client._runner_impl.sleep = sleeps.append
    return client


def error(status: int, code: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json={"error": code, "message": f"{code} happened"}, headers=headers)


def test_a_429_then_200_waits_the_retry_after_and_resends_the_same_key() -> None:
    # Given a server that throttles once, asking for 2 seconds
    script = Script(error(429, "too_many_requests", {"Retry-After": "2"}), httpx.Response(201, json=MEMORY))
    sleeps: list[float] = []

    # When a memory is added
    memory = client_over(script, sleeps).memories.add("dana", "Has a dog named Max")

    # Then the client waited what the server asked, sent twice with one key, and parsed the answer
    assert sleeps == [2.0]
    assert len(script.requests) == 2
    first, second = script.keys()
    assert first and first == second
    assert script.requests[0].content == script.requests[1].content
    assert memory.content == "Has a dog named Max"
    assert memory.model_extra == {"a_field_from_a_newer_server": 7}


def test_retry_after_as_an_http_date_waits_until_then() -> None:
    when = datetime.now(UTC) + timedelta(seconds=5)
    script = Script(error(503, "storage_unavailable", {"Retry-After": format_datetime(when, usegmt=True)}))
    script.answers.append(httpx.Response(200, json=MEMORY))
    sleeps: list[float] = []

    client_over(script, sleeps).memories.get("dana", MEMORY_ID)

    assert len(sleeps) == 1
    assert 3.0 < sleeps[0] <= 5.0


def test_a_503_on_every_attempt_backs_off_then_raises_a_server_error() -> None:
    script = Script(*(error(503, "storage_unavailable") for _ in range(3)))
    sleeps: list[float] = []

    with pytest.raises(ServerError) as raised:
        client_over(script, sleeps).memories.add("dana", "Has a dog named Max")

    assert len(script.requests) == 3  # the first attempt and max_retries=2
    assert raised.value.status == 503
    assert raised.value.error == "storage_unavailable"
    assert raised.value.message == "storage_unavailable happened"
    # Exponential with jitter: the n-th wait lies between half and all of 0.5 * 2**n
    assert 0.25 <= sleeps[0] <= 0.5
    assert 0.5 <= sleeps[1] <= 1.0
    assert len(set(script.keys())) == 1


def test_max_retries_bounds_the_attempts() -> None:
    script = Script(*(error(502, "bad_gateway") for _ in range(5)))
    sleeps: list[float] = []

    with pytest.raises(ServerError):
        client_over(script, sleeps, max_retries=4).state.get("dana")

    assert len(script.requests) == 5
    assert len(sleeps) == 4


def test_a_500_is_not_retried() -> None:
    script = Script(error(500, "internal_error"))

    with pytest.raises(ServerError):
        client_over(script, []).memories.add("dana", "Has a dog named Max")

    assert len(script.requests) == 1


def test_a_retry_after_longer_than_the_caller_waits_fails_at_once() -> None:
    script = Script(error(429, "too_many_requests", {"Retry-After": "120"}))
    sleeps: list[float] = []

    with pytest.raises(RateLimited) as raised:
        client_over(script, sleeps).memories.search("dana", "dog")

    assert sleeps == []
    assert raised.value.retry_after == 120.0


def test_connection_failures_are_retried_then_raised_as_a_connection_error() -> None:
    failure = httpx.ConnectError("connection refused")
    recovered = Script(failure, httpx.Response(200, json={"memories": [], "total_stored": 0, "next_cursor": None}))
    sleeps: list[float] = []

    assert client_over(recovered, sleeps).memories.search("dana", "dog").total_stored == 0
    assert len(sleeps) == 1

    down = Script(httpx.ReadTimeout("timed out"), httpx.ConnectError("refused"), httpx.ConnectError("refused"))
    with pytest.raises(RapportConnectionError) as raised:
        client_over(down, []).memories.add("dana", "Has a dog named Max")
    assert raised.value.status is None
    assert "after 3 attempts" in raised.value.message
    assert len(set(down.keys())) == 1


def test_a_duplicate_still_in_progress_is_waited_for() -> None:
    script = Script(error(409, "request_in_progress", {"Retry-After": "1"}), httpx.Response(201, json=MEMORY))
    sleeps: list[float] = []

    client_over(script, sleeps).memories.add("dana", "Has a dog named Max", idempotency_key="my-key-1")

    assert sleeps == [1.0]
    assert script.keys() == ["my-key-1", "my-key-1"]


def test_reads_carry_no_key_and_every_write_call_gets_its_own() -> None:
    answers = [httpx.Response(201, json=MEMORY), httpx.Response(201, json=MEMORY), httpx.Response(200, json=MEMORY)]
    script = Script(*answers)
    client = client_over(script, [])

    client.memories.add("dana", "one")
    client.memories.add("dana", "two")
    client.memories.get("dana", MEMORY_ID)

    first, second, read = script.keys()
    assert first and second and first != second
    assert read is None


def test_a_delete_retried_after_a_lost_answer_counts_a_404_as_done() -> None:
    lost = Script(httpx.ReadTimeout("answer lost"), error(404, "not_found"))
    client_over(lost, []).memories.delete("dana", MEMORY_ID)  # no exception: the first attempt deleted it

    never_there = Script(error(404, "not_found"))
    with pytest.raises(NotFound):
        client_over(never_there, []).memories.delete("dana", MEMORY_ID)


def test_api_gateway_answers_map_to_the_same_exceptions() -> None:
    script = Script(httpx.Response(403, json={"Message": "User is not authorized to access this resource"}))

    with pytest.raises(Forbidden) as raised:
        client_over(script, []).state.get("dana")

    assert raised.value.message == "User is not authorized to access this resource"
    assert raised.value.error == "forbidden"

    not_json = Script(*(httpx.Response(502, text="<html>Bad Gateway</html>") for _ in range(3)))
    with pytest.raises(ServerError) as raised_502:
        client_over(not_json, []).state.get("dana")
    assert "Bad Gateway" in raised_502.value.message


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/users/dana/state"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/users/dana/state"),
        ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1/users/dana/state"),
        (
            "https://abc123.execute-api.eu-west-1.amazonaws.com/prod/v1/",
            "https://abc123.execute-api.eu-west-1.amazonaws.com/prod/v1/users/dana/state",
        ),
        ("https://api.example.com/rapport/", "https://api.example.com/rapport/v1/users/dana/state"),
    ],
)
def test_base_url_forms_reach_the_same_routes(base_url: str, expected: str) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return error(404, "not_found")

    client = Rapport(base_url, "key", http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    with client, pytest.raises(NotFound):
        client.state.get("dana")

    assert seen == [expected]


def test_ids_are_one_path_segment_each_and_the_key_goes_in_the_authorization_header() -> None:
    script = Script(httpx.Response(200, json=MEMORY))

    client_over(script, []).memories.get("team/dana", "id?x=1")

    request = script.requests[0]
    assert request.url.raw_path == b"/v1/users/team%2Fdana/memories/id%3Fx%3D1"
    assert request.headers["Authorization"] == "Bearer key"


@pytest.mark.parametrize("base_url", ["localhost:8080", "ftp://host", "http://host/?tenant=a"])
def test_a_base_url_that_names_no_http_server_is_refused(base_url: str) -> None:
    with pytest.raises(ValueError, match="base_url"):
        Rapport(base_url, "key")


def test_an_empty_api_key_is_refused() -> None:
    with pytest.raises(ValueError, match="api_key"):
        Rapport(BASE, " ")


@pytest.mark.anyio
async def test_the_async_client_retries_the_same_way() -> None:
    script = Script(error(429, "too_many_requests", {"Retry-After": "3"}), httpx.Response(201, json=MEMORY))
    sleeps: list[float] = []

    async def record_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    transport = httpx.MockTransport(script)
    async with AsyncRapport(BASE, "key", http_client=httpx.AsyncClient(transport=transport)) as client:
        client._runner_impl.sleep = record_sleep
        memory = await client.memories.add("dana", "Has a dog named Max")

    assert memory.id == MEMORY_ID
    assert sleeps == [3.0]
    first, second = script.keys()
    assert first and first == second


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
