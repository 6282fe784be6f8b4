"""The pieces around the rules: the summarizer's model-or-extractive choice and the SQS queue's retries."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel

from rapport.adapters.aws.sqs import SqsWorkQueue
from rapport.domain.models import Domain, Memory, Message
from rapport.errors import InvalidModelOutputError, StorageError, UpstreamError
from rapport.jobs.summarize import CompactSummary, MergedMemory, Summarizer, SummaryMethod

T0 = datetime(2026, 1, 5, tzinfo=UTC)


def memory(n: int, content: str) -> Memory:
    return Memory(
        id=f"m{n}",
        tenant_id="t",
        user_id="u",
        domain=Domain.USER,
        type="fact",
        content=content,
        created_at=T0,
        updated_at=T0,
        last_reinforced_at=T0,
    )


class ScriptedModel:
    def __init__(self, name: str, answer: BaseModel | Exception) -> None:
        self._name = name
        self._answer = answer
        self.prompts: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    def structured(self, *, system: str, user: str, response_model: type[Any]) -> Any:
        self.prompts.append(user)
        if isinstance(self._answer, Exception):
            raise self._answer
        assert isinstance(self._answer, response_model)
        return self._answer

    def reply(self, *, system: str, messages: list[Message]) -> str | None:
        return None


MEMORIES = [memory(1, "Has a dog named Max"), memory(2, "Walks the dog every morning")]


def test_a_configured_model_writes_the_compact_memory() -> None:
    model = ScriptedModel("openai:gpt-4o-mini", CompactSummary(summary="  Has a dog, Max,  walked every morning. "))
    text, method = Summarizer(model, 2_000).compress(MEMORIES)
    assert (text, method) == ("Has a dog, Max, walked every morning.", SummaryMethod.LLM)
    assert "Walks the dog every morning" in model.prompts[0]


@pytest.mark.parametrize(
    "model",
    [
        None,
        ScriptedModel("rules", CompactSummary(summary="never asked")),
        ScriptedModel("openai:gpt-4o-mini", UpstreamError("rate limited after retries")),
        ScriptedModel("openai:gpt-4o-mini", InvalidModelOutputError("not JSON")),
        ScriptedModel("openai:gpt-4o-mini", CompactSummary(summary="   ")),
    ],
)
def test_without_a_usable_answer_the_summary_is_extractive(model: ScriptedModel | None) -> None:
    text, method = Summarizer(model, 2_000).compress(MEMORIES)
    assert method is SummaryMethod.EXTRACTIVE
    assert text == "Compressed 2 fact memories: Has a dog named Max; Walks the dog every morning."
    if model is not None and model.name == "rules":
        assert model.prompts == []  # the rule-based model has no rules for this: it is not asked


def test_a_merge_is_the_models_or_else_the_strongest_members_words() -> None:
    model = ScriptedModel("openai:gpt-4o-mini", MergedMemory(content="Has a dog named Max"))
    assert Summarizer(model, 2_000).merge(MEMORIES[1], MEMORIES) == ("Has a dog named Max", SummaryMethod.LLM)
    assert Summarizer(None, 2_000).merge(MEMORIES[1], MEMORIES) == (MEMORIES[1].content, SummaryMethod.EXTRACTIVE)


class FakeSqs:
    """Fails the entries it is told to, a given number of times, as SQS does when throttling part of a batch."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.delivered: list[str] = []
        self.calls = 0

    def send_message_batch(self, *, QueueUrl: str, Entries: list[dict[str, str]]) -> dict[str, Any]:  # noqa: N803
        self.calls += 1
        assert len(Entries) <= 10
        if self.failures:
            self.failures -= 1
            failed, ok = Entries[:1], Entries[1:]
        else:
            failed, ok = [], Entries
        self.delivered += [e["MessageBody"] for e in ok]
        return {"Failed": [{"Id": e["Id"], "SenderFault": False, "Code": "Throttled"} for e in failed]}


def test_the_queue_sends_in_batches_of_ten_and_retries_what_sqs_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rapport.adapters.aws.sqs.time.sleep", lambda _: None)
    sqs = FakeSqs(failures=2)
    bodies = [f"user-{n}" for n in range(23)]
    SqsWorkQueue("https://queue", sqs_client=sqs).send(bodies)
    assert sorted(sqs.delivered) == sorted(bodies)  # every one, once
    assert sqs.calls == 5  # three batches, two of the refused entries resent


def test_a_queue_that_keeps_refusing_is_a_storage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rapport.adapters.aws.sqs.time.sleep", lambda _: None)
    with pytest.raises(StorageError, match="refused 1 messages"):
        SqsWorkQueue("https://queue", sqs_client=FakeSqs(failures=99)).send(["user-1"])
