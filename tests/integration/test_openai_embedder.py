"""The OpenAI embedder against a real SDK client whose HTTP transport is an in-process fake of the embeddings API."""

from __future__ import annotations

import base64
import json
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai
import pytest

from rapport.adapters.openai.embedder import OpenAiEmbedder
from rapport.errors import UpstreamError

pytestmark = pytest.mark.integration

BASE_URL = "https://fake.openai.test/v1"


def vector_for(text: str, dimensions: int) -> list[float]:
    """A deterministic, deliberately unnormalised vector, different for each text."""
    seed = sum(text.encode()) + len(text)
    return [float((seed * (i + 3)) % 17 + 1) for i in range(dimensions)]


def embeddings_response(request: httpx.Request, *, reverse: bool = False) -> httpx.Response:
    body = json.loads(request.content)
    dimensions = body.get("dimensions", 8)
    data = []
    for index, text in enumerate(body["input"]):
        vector = vector_for(text, dimensions)
        # Answer in the format asked for, as the real API does (the SDK may ask for base64 float32).
        encoded: Any = (
            base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            if body.get("encoding_format") == "base64"
            else vector
        )
        data.append({"object": "embedding", "index": index, "embedding": encoded})
    if reverse:
        data.reverse()
    return httpx.Response(
        200,
        json={"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1}},
    )


def error_response(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers, json={"error": {"message": f"fake {status}", "type": "fake"}})


@dataclass
class FakeOpenAi:
    """Answers each request with the next scripted reply; once the script runs out, with embeddings."""

    script: list[Callable[[httpx.Request], httpx.Response]] = field(default_factory=list)
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if self.script:
            return self.script.pop(0)(request)
        return embeddings_response(request)

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(request.content) for request in self.requests]


def reply(status: int, headers: dict[str, str] | None = None) -> Callable[[httpx.Request], httpx.Response]:
    return lambda _request: error_response(status, headers)


def read_timeout(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("fake read timeout", request=request)


def connect_error(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("fake connection refused", request=request)


@pytest.fixture
def fake() -> FakeOpenAi:
    return FakeOpenAi()


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_embedder(fake: FakeOpenAi, sleeps: list[float]) -> Callable[..., OpenAiEmbedder]:
    def make(**kwargs: Any) -> OpenAiEmbedder:
        client = openai.OpenAI(
            api_key="test",
            base_url=BASE_URL,
            http_client=httpx.Client(transport=httpx.MockTransport(fake)),  # type: ignore[arg-type]
            max_retries=0,
        )
        kwargs.setdefault("dimensions", 8)
        return OpenAiEmbedder(client, sleep=sleeps.append, **kwargs)

    return make


def norm(vector: list[float]) -> float:
    return math.sqrt(sum(v * v for v in vector))


def test_request_carries_model_input_dimensions_and_bearer_key(fake: FakeOpenAi, make_embedder: Any) -> None:
    embedder = make_embedder(model="text-embedding-3-small", dimensions=8)

    embedder.embed(["hello", "world"])

    (request,) = fake.requests
    assert request.method == "POST"
    assert request.url.path == "/v1/embeddings"
    assert request.headers["authorization"] == "Bearer test"
    body = json.loads(request.content)
    assert body["model"] == "text-embedding-3-small"
    assert body["input"] == ["hello", "world"]
    assert body["dimensions"] == 8


def test_dimensions_are_omitted_when_none(fake: FakeOpenAi, make_embedder: Any) -> None:
    embedder = make_embedder(model="text-embedding-ada-002", dimensions=None)

    # The fake answers 8-dimensional vectors when not told a width; ada-002 is 1536, so the adapter must refuse them.
    with pytest.raises(UpstreamError, match="8-dimensional"):
        embedder.embed(["hello"])

    assert "dimensions" not in fake.bodies()[0]
    assert embedder.dimensions == 1536


def test_vectors_come_back_in_input_order_and_unit_length(fake: FakeOpenAi, make_embedder: Any) -> None:
    # Given the API lists the embeddings in reverse order (only `index` says which input each belongs to)
    fake.script.append(lambda request: embeddings_response(request, reverse=True))
    embedder = make_embedder()
    texts = ["alpha", "a much longer bravo", "c"]

    vectors = embedder.embed(texts)

    assert len(vectors) == 3
    for text, vector in zip(texts, vectors, strict=True):
        raw = vector_for(text, 8)
        expected = [v / norm(raw) for v in raw]
        assert vector == pytest.approx(expected, rel=1e-6)
        assert norm(vector) == pytest.approx(1.0)
        assert all(type(v) is float for v in vector)


def test_large_inputs_are_split_into_batches(fake: FakeOpenAi, make_embedder: Any) -> None:
    embedder = make_embedder(batch_size=256)
    texts = [f"text number {i}" for i in range(600)]

    vectors = embedder.embed(texts)

    assert [len(body["input"]) for body in fake.bodies()] == [256, 256, 88]
    assert [text for body in fake.bodies() for text in body["input"]] == texts
    assert vectors[599] == pytest.approx([v / norm(vector_for(texts[599], 8)) for v in vector_for(texts[599], 8)])


def test_empty_input_makes_no_request(fake: FakeOpenAi, make_embedder: Any) -> None:
    assert make_embedder().embed([]) == []
    assert fake.requests == []


def test_rate_limit_is_retried_with_growing_delays(fake: FakeOpenAi, sleeps: list[float], make_embedder: Any) -> None:
    fake.script.extend([reply(429), reply(429), reply(429)])
    embedder = make_embedder(max_retries=4, base_delay=0.5)

    vectors = embedder.embed(["hello"])

    assert len(vectors) == 1
    assert len(fake.requests) == 4
    assert len(sleeps) == 3
    assert sleeps[0] < sleeps[1] < sleeps[2]
    # Equal jitter: each delay lies in [half, all] of base * 2**attempt
    for attempt, delay in enumerate(sleeps):
        assert 0.5 * 2**attempt / 2 <= delay <= 0.5 * 2**attempt


def test_retry_after_header_sets_the_delay(fake: FakeOpenAi, sleeps: list[float], make_embedder: Any) -> None:
    fake.script.extend([reply(429, {"Retry-After": "3"}), reply(503, {"retry-after-ms": "250"})])
    embedder = make_embedder(base_delay=0.01)

    embedder.embed(["hello"])

    assert sleeps == [3.0, 0.25]


def test_retry_after_is_capped(fake: FakeOpenAi, sleeps: list[float], make_embedder: Any) -> None:
    fake.script.append(reply(429, {"Retry-After": "600"}))

    make_embedder(max_delay=8.0).embed(["hello"])

    assert sleeps == [8.0]


def test_persistent_server_errors_become_upstream_error(
    fake: FakeOpenAi, sleeps: list[float], make_embedder: Any
) -> None:
    fake.script.extend([reply(500)] * 10)
    embedder = make_embedder(max_retries=3)

    with pytest.raises(UpstreamError, match="after 4 attempts") as caught:
        embedder.embed(["hello"])

    assert len(fake.requests) == 4
    assert len(sleeps) == 3
    assert isinstance(caught.value.__cause__, openai.InternalServerError)


def test_client_error_is_not_retried(fake: FakeOpenAi, sleeps: list[float], make_embedder: Any) -> None:
    fake.script.append(reply(400))

    with pytest.raises(UpstreamError, match="HTTP 400") as caught:
        make_embedder().embed(["hello"])

    assert len(fake.requests) == 1
    assert sleeps == []
    assert isinstance(caught.value.__cause__, openai.BadRequestError)


def test_bad_api_key_is_not_retried(fake: FakeOpenAi, sleeps: list[float], make_embedder: Any) -> None:
    message = {"error": {"message": "Incorrect API key provided: sk-abc***wxyz", "type": "invalid_request_error"}}
    fake.script.append(lambda _request: httpx.Response(401, json=message))

    with pytest.raises(UpstreamError, match="HTTP 401") as caught:
        make_embedder().embed(["hello"])

    assert len(fake.requests) == 1
    assert sleeps == []
    # The API shows this message to callers; OpenAI's text (which names the key) stays on the cause, for logs.
    assert "sk-abc" not in str(caught.value)
    assert "sk-abc" in str(caught.value.__cause__)


def test_timeouts_and_dropped_connections_are_retried(
    fake: FakeOpenAi, sleeps: list[float], make_embedder: Any
) -> None:
    fake.script.extend([read_timeout, connect_error])

    vectors = make_embedder().embed(["hello"])

    assert len(vectors) == 1
    assert len(fake.requests) == 3
    assert len(sleeps) == 2


def test_persistent_timeout_becomes_upstream_error(fake: FakeOpenAi, make_embedder: Any) -> None:
    fake.script.extend([read_timeout] * 3)

    with pytest.raises(UpstreamError) as caught:
        make_embedder(max_retries=2).embed(["hello"])

    assert len(fake.requests) == 3
    assert isinstance(caught.value.__cause__, openai.APITimeoutError)


def test_zero_retries_means_one_attempt(fake: FakeOpenAi, sleeps: list[float], make_embedder: Any) -> None:
    fake.script.append(reply(429))

    with pytest.raises(UpstreamError):
        make_embedder(max_retries=0).embed(["hello"])

    assert len(fake.requests) == 1
    assert sleeps == []


def test_a_missing_embedding_is_an_upstream_error(fake: FakeOpenAi, make_embedder: Any) -> None:
    def drop_last(request: httpx.Request) -> httpx.Response:
        payload = json.loads(embeddings_response(request).content)
        payload["data"].pop()
        return httpx.Response(200, json=payload)

    fake.script.append(drop_last)

    with pytest.raises(UpstreamError, match="indexes"):
        make_embedder().embed(["a", "b"])


def test_name_identifies_model_and_width(make_embedder: Any) -> None:
    assert make_embedder(model="text-embedding-3-small", dimensions=512).name == "openai:text-embedding-3-small:512"
