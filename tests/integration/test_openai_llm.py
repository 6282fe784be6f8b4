"""The OpenAI language model against a real SDK client whose HTTP transport is an in-process fake of chat completions:
the request it sends, parsing, retries, refusals, malformed JSON, and the pipeline's examples end to end."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai
import pytest

from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.adapters.openai.language_model import OpenAiLanguageModel
from rapport.adapters.openai.retry import RetryPolicy
from rapport.clock import FixedClock
from rapport.composition.language_models import build_language_model
from rapport.composition.services import Services, build_services
from rapport.domain.filtering import Verdict
from rapport.domain.models import Message, MessageRole
from rapport.domain.prompts import extract_user, payload
from rapport.domain.prompts.constructive_filter import FilterInput
from rapport.domain.prompts.conversation import ConversationInput
from rapport.domain.relations import RelationType
from rapport.domain.rules.model import RulesLanguageModel
from rapport.domain.scope import Scope
from rapport.errors import InvalidModelOutputError, UpstreamError
from rapport.services.interactions import NewInteraction
from rapport.settings import LlmKind, Settings

pytestmark = pytest.mark.integration

BASE_URL = "https://llm.fake.test/v1"
Reply = Callable[[httpx.Request], httpx.Response]


def completion(content: str | None, *, refusal: str | None = None, finish_reason: str = "stop") -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": refusal},
                    "finish_reason": finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        },
    )


def status(code: int, headers: dict[str, str] | None = None) -> Reply:
    return lambda _: httpx.Response(code, headers=headers, json={"error": {"message": f"fake {code}", "type": "x"}})


def answer(value: Any) -> Reply:
    return lambda _: completion(value if isinstance(value, str) else json.dumps(value))


def read_timeout(request: httpx.Request) -> httpx.Response:
    raise httpx.ReadTimeout("fake timeout", request=request)


@dataclass
class FakeChat:
    script: list[Reply] = field(default_factory=list)
    requests: list[httpx.Request] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.script.pop(0)(request)

    def body(self, i: int = -1) -> dict[str, Any]:
        return json.loads(self.requests[i].content)


@pytest.fixture
def fake() -> FakeChat:
    return FakeChat()


@pytest.fixture
def sleeps() -> list[float]:
    return []


def client_for(handler: Callable[[httpx.Request], httpx.Response]) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="sk-test",
        base_url=BASE_URL,
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),  # type: ignore[arg-type]
    )


@pytest.fixture
def model(fake: FakeChat, sleeps: list[float]) -> OpenAiLanguageModel:
    return OpenAiLanguageModel(client_for(fake), "gpt-4o-mini", retry=RetryPolicy(max_retries=2), sleep=sleeps.append)


PROMPT = payload.render(extract_user.TASK, ConversationInput(messages=[]))
ONE_FACT = {
    "memories": [
        {
            "content": "User works at Acme",
            "type": "fact",
            "importance": 1.3,  # overshoots: clamped, not rejected
            "confidence": 0.9,
            "slot": "employer",
            "correction": False,
            "evidence": [0],
        }
    ]
}


def ask(model: OpenAiLanguageModel) -> extract_user.UserExtraction:
    return model.structured(system=extract_user.SYSTEM, user=PROMPT, response_model=extract_user.UserExtraction)


def test_a_structured_request_sends_a_strict_schema_and_parses_the_answer(
    fake: FakeChat, model: OpenAiLanguageModel
) -> None:
    fake.script = [answer(ONE_FACT)]
    parsed = ask(model)
    assert parsed.memories[0].content == "User works at Acme" and parsed.memories[0].importance == 1.0
    request = fake.requests[0]
    assert str(request.url) == f"{BASE_URL}/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = fake.body()
    assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0.0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][0]["content"] == extract_user.SYSTEM and body["messages"][1]["content"] == PROMPT
    schema = body["response_format"]["json_schema"]
    assert body["response_format"]["type"] == "json_schema" and schema["strict"] is True
    assert schema["name"] == "UserExtraction"
    memory_schema = schema["schema"]["$defs"]["ExtractedUserMemory"]
    # the field descriptions are what steer the model
    assert "third person" in memory_schema["properties"]["content"]["description"]
    assert set(memory_schema["required"]) == set(memory_schema["properties"])


def test_throttling_is_retried_with_the_servers_delay(
    fake: FakeChat, model: OpenAiLanguageModel, sleeps: list[float]
) -> None:
    fake.script = [status(429, {"retry-after-ms": "1500"}), read_timeout, answer(ONE_FACT)]
    assert ask(model).memories
    assert len(fake.requests) == 3
    assert sleeps[0] == 1.5  # what the server asked for
    assert 0.5 <= sleeps[1] <= 1.0  # equal jitter on the second attempt's 1 s ceiling


def test_a_server_that_stays_down_is_an_upstream_error_after_bounded_retries(
    fake: FakeChat, model: OpenAiLanguageModel, sleeps: list[float]
) -> None:
    fake.script = [status(503)] * 3
    with pytest.raises(UpstreamError, match="after 3 attempts: HTTP 503"):
        ask(model)
    assert len(fake.requests) == 3 and len(sleeps) == 2


def test_a_refused_request_is_not_retried(fake: FakeChat, model: OpenAiLanguageModel) -> None:
    fake.script = [status(400)]
    with pytest.raises(UpstreamError, match="refused: HTTP 400"):
        ask(model)
    assert len(fake.requests) == 1


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (lambda _: completion(None, refusal="I can't help with that."), "refused to answer: I can't help"),
        (answer('{"memories": [{"content": "User works at'), "not a valid UserExtraction"),
        (answer({"memories": [{"content": "no type"}]}), "not a valid UserExtraction"),
        (lambda _: completion('{"memories": [', finish_reason="length"), "cut off"),
    ],
    ids=["refusal", "malformed-json", "wrong-shape", "truncated"],
)
def test_an_answer_that_does_not_validate_is_an_invalid_output(
    fake: FakeChat, model: OpenAiLanguageModel, reply: Reply, message: str
) -> None:
    fake.script = [reply]
    with pytest.raises(InvalidModelOutputError, match=message):
        ask(model)
    assert len(fake.requests) == 1  # not the adapter's to retry: the pipeline asks once more, then uses the rules


def test_reply_sends_the_conversation_and_returns_the_text(fake: FakeChat, model: OpenAiLanguageModel) -> None:
    fake.script = [lambda _: completion("Glad it works now!")]
    messages = [Message(role=MessageRole.USER, content="it works"), Message(role=MessageRole.SYSTEM, content="x")]
    assert model.reply(system="Be kind.", messages=messages) == "Glad it works now!"
    assert fake.body()["messages"] == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "it works"},
    ]
    assert "response_format" not in fake.body()


def test_the_factory_picks_openai_with_a_key_and_the_rules_without(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(build_language_model(Settings(llm=LlmKind.AUTO)), RulesLanguageModel)
    keyed = build_language_model(Settings(llm=LlmKind.AUTO, openai_api_key="sk-x", openai_base_url=BASE_URL))
    assert isinstance(keyed, OpenAiLanguageModel) and keyed.name == "openai:gpt-4o-mini"
    assert isinstance(build_language_model(Settings(llm=LlmKind.RULES, openai_api_key="sk-x")), RulesLanguageModel)
    with pytest.raises(ValueError, match="needs an API key"):
        build_language_model(Settings(llm=LlmKind.OPENAI, openai_api_key=" "))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8080/v1")
    assert Settings().openai_base_url == "http://localhost:8080/v1"


# --- the pipeline's examples with the OpenAI model -------------------------------------------------------------------


@dataclass
class ScriptedLlm:
    """A fake OpenAI server that answers each prompt by its response model, the way a good model would answer the
    scripted conversations: extraction from `extracted`, filter verdicts from `verdicts` (by candidate content)."""

    extracted: dict[str, list[dict[str, Any]]]
    verdicts: dict[str, tuple[Verdict, str | None]]
    asked: list[str] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        name = body["response_format"]["json_schema"]["name"]
        self.asked.append(name)
        if name in self.extracted:
            return completion(json.dumps({"memories": self.extracted[name]}))
        if name == "FilterJudgement":
            prompt_input = payload.read(body["messages"][1]["content"], FilterInput)
            verdicts = []
            for candidate in prompt_input.candidates:
                verdict, reframe = self.verdicts.get(candidate.content, (Verdict.ALLOWED, None))
                verdicts.append(
                    {
                        "index": candidate.index,
                        "verdict": verdict,
                        "reason": f"judged {verdict}",
                        "reframed_content": reframe,
                    }
                )
            return completion(json.dumps({"verdicts": verdicts}))
        return completion("{}")  # other features' prompts: not this test's concern


def _memory(content: str, kind: str, importance: float = 0.7, **extra: Any) -> dict[str, Any]:
    return {"content": content, "type": kind, "importance": importance, "confidence": 0.9, "evidence": [0], **extra}


@pytest.fixture
def scripted() -> ScriptedLlm:
    return ScriptedLlm(
        extracted={
            "UserExtraction": [_memory("User is debugging an API at work", "event", slot=None, correction=False)],
            "RelationalExtraction": [
                _memory(
                    "We debugged a 500 on /users together — the auth layer was the root cause",
                    "collaboration_outcome",
                    0.8,
                ),
                _memory("Systematic logging worked well with this user", "approach_effectiveness"),
                _memory("User was frustrated with me", "interaction_pattern", 0.3),
                _memory("User got confused by my technical explanation", "communication_preference", 0.5),
            ],
        },
        verdicts={
            "User was frustrated with me": (Verdict.BLOCKED, None),
            "User got confused by my technical explanation": (
                Verdict.REFRAMED,
                "User benefits from simpler explanations first",
            ),
        },
    )


@pytest.fixture
def openai_pipeline(settings: Settings, clock: FixedClock, scripted: ScriptedLlm) -> Iterator[Services]:
    model = OpenAiLanguageModel(client_for(scripted), "gpt-4o-mini", retry=RetryPolicy(max_retries=0))
    embedder = HashingEmbedder(settings.hashing_dimensions)
    store = SqliteMemoryStore(settings.sqlite_path)
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    yield build_services(settings, clock=clock, store=store, index=index, embedder=embedder, language_model=model)
    store.close()
    index.close()


def test_the_brief_examples_with_the_openai_model(openai_pipeline: Services, scripted: ScriptedLlm) -> None:
    recorded = openai_pipeline.interactions.record(
        Scope("tenant-a", "user-1"),
        NewInteraction.model_validate(
            {
                "messages": [
                    {"role": "user", "content": "I'm getting a 500 on /users again"},
                    {"role": "assistant", "content": "Let's add step-by-step logging."},
                    {
                        "role": "user",
                        "content": "it was the auth middleware, thanks — the step-by-step logging really helped",
                    },
                ]
            }
        ),
    )
    assert recorded.pipeline is not None and recorded.pipeline.status == "completed"
    assert {"UserExtraction", "RelationalExtraction", "FilterJudgement"} <= set(scripted.asked)
    stored = {m.content: m for m in recorded.pipeline.memories}
    assert set(stored) == {
        "User is debugging an API at work",
        "We debugged a 500 on /users together — the auth layer was the root cause",
        "Systematic logging worked well with this user",
        "User benefits from simpler explanations first",
    }
    assert stored["Systematic logging worked well with this user"].type == "approach_effectiveness"
    for memory in stored.values():
        assert memory.metadata["extractor"] == "openai:gpt-4o-mini" and "fallback" not in memory.metadata
        (edge,) = openai_pipeline.edges.outgoing(Scope("tenant-a", "user-1"), memory.id, RelationType.DERIVED_FROM)
        assert edge.target_id == recorded.interaction.id
    decisions = {
        d.original: d
        for d in openai_pipeline.filter_decisions.list(Scope("tenant-a", "user-1"), limit=20, cursor=None).items
    }
    assert decisions["User was frustrated with me"].verdict is Verdict.BLOCKED
    assert decisions["User was frustrated with me"].decided_by == "openai:gpt-4o-mini"
    assert decisions["User got confused by my technical explanation"].verdict is Verdict.REFRAMED


def test_a_correction_the_model_blocks_is_kept_anyway(openai_pipeline: Services, scripted: ScriptedLlm) -> None:
    scripted.extracted = {
        "UserExtraction": [_memory("User works at Globex, not Acme", "fact", slot="employer", correction=True)],
        "RelationalExtraction": [],
    }
    scripted.verdicts = {"User works at Globex, not Acme": (Verdict.BLOCKED, None)}
    recorded = openai_pipeline.interactions.record(
        Scope("tenant-a", "user-1"),
        NewInteraction.model_validate({"messages": [{"role": "user", "content": "No, Globex!"}]}),
    )
    assert recorded.pipeline is not None
    assert [m.content for m in recorded.pipeline.memories] == ["User works at Globex, not Acme"]
    (decision,) = openai_pipeline.filter_decisions.list(Scope("tenant-a", "user-1"), limit=5, cursor=None).items
    assert decision.verdict is Verdict.ALLOWED and "correction" in decision.reason
