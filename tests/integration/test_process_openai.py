"""/v1/process with the OpenAI language model, over a real SDK client whose HTTP transport is an in-process fake."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx
import openai
import pytest

from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.adapters.openai.language_model import OpenAiLanguageModel
from rapport.adapters.openai.retry import RetryPolicy
from rapport.api.app import create_lambda_app
from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.scope import Scope
from rapport.settings import Settings
from tests.integration.api_events import FakeLambdaContext, rest_event

pytestmark = pytest.mark.integration

BASE_URL = "https://fake.openai.test/v1"
REPLY = "I'm sorry Max is unwell. Let's look at his symptoms together."


def completion(content: str, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


@dataclass
class FakeChat:
    """Chat completions: structured requests for signals get `signals`; other structured requests (the pipeline's
    extraction, running in the background) get an empty object, which does not validate, so the pipeline falls
    back to its rules; free-text requests get the reply."""

    signals: dict[str, Any] = field(
        default_factory=lambda: {"emotions": ["anger"], "intent": "request", "mood_delta": -0.6, "crisis": False}
    )
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/chat/completions", request.url
        body = json.loads(request.content)
        self.requests.append(body)
        response_format = body.get("response_format")
        if response_format is None:
            content = REPLY
        elif response_format["json_schema"]["name"] == "SignalReading":
            content = json.dumps(self.signals)
        else:
            content = "{}"
        return httpx.Response(200, json=completion(content, body["model"]))

    def replies(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if "response_format" not in r]

    def signal_requests(self) -> list[dict[str, Any]]:
        return [
            r
            for r in self.requests
            if (r.get("response_format") or {}).get("json_schema", {}).get("name") == "SignalReading"
        ]


@pytest.fixture
def fake_chat() -> FakeChat:
    return FakeChat()


@pytest.fixture
def openai_services(settings: Settings, clock: FixedClock, fake_chat: FakeChat) -> Iterator[Services]:
    client = openai.OpenAI(
        api_key="sk-test",
        base_url=BASE_URL,
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(fake_chat)),
    )
    model = OpenAiLanguageModel(client, "gpt-4o-mini", retry=RetryPolicy(max_retries=0), sleep=lambda _: None)
    embedder = HashingEmbedder(settings.hashing_dimensions)
    store = SqliteMemoryStore(settings.sqlite_path)
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    services = build_services(settings, clock=clock, store=store, index=index, embedder=embedder, language_model=model)
    yield services
    drain = getattr(services.pipeline_trigger, "drain", None)
    if drain is not None:
        drain(timeout=60)
    store.close()
    index.close()


def test_process_with_openai_fills_the_reply_from_memories_and_tone(
    openai_services: Services, fake_chat: FakeChat, clock: FixedClock
) -> None:
    app = create_lambda_app(openai_services)

    def call(method: str, url: str, body: Any = None) -> tuple[int, Any]:
        response = app.resolve(rest_event(method, url, body), FakeLambdaContext())
        return response["statusCode"], json.loads(response["body"])

    status, dog = call("POST", "/v1/users/dana/memories", {"content": "Has a dog named Max", "domain": "user"})
    assert status == 201

    # Three angry, shouted messages: +0.15 grudge each, so the third reply is written in a cautious tone.
    for _ in range(3):
        # A second apart: two turns in one instant have no order, and the history below reads the newest
        clock.advance(timedelta(seconds=1))
        status, body = call("POST", "/v1/process", {"user_id": "dana", "message": "MY DOG MAX IS SICK AGAIN!!"})
        assert status == 200, body

    assert body["reply"] == REPLY
    # With a model the server replies itself, so the turn is recorded in the same call: nothing left to send
    assert body["turn_status"] == "recorded" and body["interaction_id"] == body["turn_id"]
    assert body["context"]["tone_grudge_modifier"] == "cautious"
    assert abs(body["user"]["grudge"] - 0.45) < 5e-4
    assert dog["id"] in [m["id"] for m in body["memory"]["relevant_memories"]]

    # What the model was asked: our system prompt, with the memory and the tone modifier, then the conversation.
    last = fake_chat.replies()[-1]
    system = last["messages"][0]
    assert system["role"] == "system" and system["content"] == body["context"]["system_prompt"]
    assert "Has a dog named Max" in system["content"]
    assert "Tone modifier: cautious" in system["content"]
    assert [m["role"] for m in last["messages"][1:]] == ["user", "assistant", "user", "assistant", "user"]
    assert last["messages"][-1]["content"] == "MY DOG MAX IS SICK AGAIN!!"

    # Signals came from the model (one structured call per message), typography from the rules.
    assert len(fake_chat.signal_requests()) == 3
    recorded = openai_services.interactions.history(Scope("tenant-a", "dana"), limit=5, cursor=None).items[0]
    assert recorded.metadata["detected_emotions"] == ["anger"] and recorded.metadata["intent"] == "request"
    assert recorded.metadata["signals"]["detector"] == "llm:openai:gpt-4o-mini"
    assert recorded.metadata["signals"]["shouting"] is True
    assert [m.content for m in recorded.messages] == ["MY DOG MAX IS SICK AGAIN!!", REPLY]
    assert recorded.id == body["turn_id"]
    # The same reply sent to the recorded turn is a replay, not a second interaction
    status, again = call("POST", f"/v1/turns/{body['turn_id']}/reply", {"user_id": "dana", "reply": REPLY})
    assert status == 200 and again["replayed"] is True
    assert len(openai_services.interactions.history(Scope("tenant-a", "dana"), limit=5, cursor=None).items) == 3


def test_a_crisis_the_model_misses_is_still_flagged(openai_services: Services, fake_chat: FakeChat) -> None:
    outcome = openai_services.process.process(Scope("tenant-a", "dana"), "I don't want to live anymore")
    assert outcome.crisis and outcome.signals.crisis
    assert "## Safety" in fake_chat.replies()[-1]["messages"][0]["content"]


def test_a_keyed_retry_answers_the_recorded_reply_without_asking_the_model_again(
    openai_services: Services, fake_chat: FakeChat
) -> None:
    from rapport.services.idempotency import KeyedRequest

    keyed = KeyedRequest(route="process", key="retry-1", request={"message": "Is the clinic open on Sunday?"})
    first = openai_services.process.process(Scope("tenant-a", "dana"), "Is the clinic open on Sunday?", keyed=keyed)
    asked = len(fake_chat.replies())
    again = openai_services.process.process(Scope("tenant-a", "dana"), "Is the clinic open on Sunday?", keyed=keyed)
    assert again.replayed and again.reply == first.reply == REPLY
    assert again.turn_id == first.turn_id and again.interaction is not None
    assert len(fake_chat.replies()) == asked  # the model was not asked twice
    assert len(openai_services.interactions.history(Scope("tenant-a", "dana"), limit=5, cursor=None).items) == 1
