"""/v1/process with a language model (a fake), memory reinforcement, and concurrent interactions."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from unittest.mock import patch

import pytest

from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, Interaction, Message, MessageRole
from rapport.domain.scope import Scope
from rapport.errors import UpstreamError
from rapport.ids import new_id
from rapport.services.memories import NewMemory
from rapport.settings import Settings

pytestmark = pytest.mark.integration


class FakeLanguageModel:
    """Records what it is asked; answers replies with a fixed text (or fails)."""

    def __init__(self, answer: str | Exception | None = "Happy to help!") -> None:
        self.answer = answer
        self.replies: list[dict[str, Any]] = []

    @property
    def name(self) -> str:
        return "rules"  # keeps signal detection on the local rules, so the test sees only reply calls

    def structured(self, *, system: str, user: str, response_model: type) -> Any:
        raise AssertionError("not expected")

    def reply(self, *, system: str, messages: list[Message]) -> str | None:
        self.replies.append({"system": system, "messages": messages})
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.fixture
def model() -> FakeLanguageModel:
    return FakeLanguageModel()


@pytest.fixture
def with_model(settings: Settings, clock: FixedClock, model: FakeLanguageModel) -> Iterator[Services]:
    embedder = HashingEmbedder(settings.hashing_dimensions)
    store = SqliteMemoryStore(settings.sqlite_path)
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    services = build_services(settings, clock=clock, store=store, index=index, embedder=embedder, language_model=model)
    yield services
    # /v1/process starts the pipeline on a background thread: let it finish before the store closes.
    drain = getattr(services.pipeline_trigger, "drain", None)
    if drain is not None:
        drain(timeout=60)
    store.close()
    index.close()


def test_reply_is_written_from_memories_and_state_and_recorded(
    with_model: Services, model: FakeLanguageModel, clock: FixedClock
) -> None:
    services = with_model
    dog = services.memories.remember(Scope("t", "dana"), NewMemory(content="Has a dog named Max", domain=Domain.USER))
    bullets = services.memories.remember(
        Scope("t", "dana"),
        NewMemory(
            content="Bullet points about the dog Max work better",
            domain=Domain.RELATIONAL,
            type="communication_preference",
        ),
    )
    # A weakened memory, so its reinforcement shows.
    services.store.put_memory(
        services.store.get_memory(Scope("t", "dana"), dog.id).model_copy(update={"strength": 0.6})
    )
    clock.advance(timedelta(hours=1))

    outcome = services.process.process(Scope("t", "dana"), "What should I feed my dog Max?", session_id="s1")

    assert outcome.reply == "Happy to help!"
    asked = model.replies[0]
    assert asked["system"] == outcome.system_prompt
    assert asked["messages"] == [Message(role=MessageRole.USER, content="What should I feed my dog Max?")]
    assert "- Has a dog named Max" in outcome.system_prompt
    assert "Bullet points about the dog Max work better" in outcome.system_prompt
    assert {h.memory.id for h in outcome.memories} == {dog.id, bullets.id}
    assert all(h.similarity >= 0.3 for h in outcome.memories)
    # Used memories are reinforced: strength up (bounded), reinforcement time now.
    reinforced = services.store.get_memory(Scope("t", "dana"), dog.id)
    # (the boost adds to the strength left after an hour's decay at 0.1 a day: governance, docs/governance.md)
    expected = 0.6 * math.exp(-0.1 / 24) + 0.1
    assert reinforced.strength == pytest.approx(expected) and reinforced.last_reinforced_at == clock.now()
    assert services.store.get_memory(Scope("t", "dana"), bullets.id).strength == 1.0
    # The exchange is history, with its signals, and counts for the profile.
    assert outcome.interaction is not None
    assert [m.role for m in outcome.interaction.messages] == [MessageRole.USER, MessageRole.ASSISTANT]
    assert outcome.interaction.metadata["intent"] == "question"
    assert outcome.profile is not None and outcome.profile.interaction_count == 1
    assert outcome.total_stored == 4  # two memories + two episodes

    # The next turn of the session sees the previous one.
    services.process.process(Scope("t", "dana"), "And how often?", session_id="s1")
    assert [m.content for m in model.replies[1]["messages"]] == [
        "What should I feed my dog Max?",
        "Happy to help!",
        "And how often?",
    ]
    # Another session starts afresh.
    services.process.process(Scope("t", "dana"), "Different topic", session_id="s2")
    assert len(model.replies[2]["messages"]) == 1


def test_tone_modifier_reaches_the_model(with_model: Services, model: FakeLanguageModel) -> None:
    for _ in range(3):
        with_model.process.process(Scope("t", "dana"), "WHY IS THIS STILL BROKEN? THIS IS RIDICULOUS!!")
    assert "Tone modifier: cautious (grudge 0.45)" in model.replies[-1]["system"]


def test_a_failing_model_records_nothing(with_model: Services, model: FakeLanguageModel) -> None:
    model.answer = UpstreamError("the model is down")
    with pytest.raises(UpstreamError):
        with_model.process.process(Scope("t", "dana"), "My boss Sarah is great")
    assert with_model.interactions.history(Scope("t", "dana"), limit=5, cursor=None).items == []
    assert with_model.profiles.get(Scope("t", "dana")) is None
    assert with_model.relational_state.read(Scope("t", "dana")).trust == 0.5
    assert with_model.people.list_people(Scope("t", "dana"), limit=5, cursor=None).items == []


def test_a_model_without_replies_leaves_recording_to_the_caller(
    with_model: Services, model: FakeLanguageModel, clock: FixedClock
) -> None:
    # Given a model that writes no replies (the rule-based one), and a person we talked to yesterday
    model.answer = None
    with_model.process.process(Scope("t", "dana"), "hello")  # nothing recorded: this only previews
    assert with_model.profiles.get(Scope("t", "dana")) is None
    clock.advance(timedelta(days=1))
    # When a message comes
    outcome = with_model.process.process(Scope("t", "dana"), "I am so frustrated that you forgot my boss Sarah")
    # Then the answer describes the state the exchange will leave, and nothing is written until it is posted
    assert outcome.reply is None and outcome.interaction is None
    assert outcome.state.grudge == pytest.approx(0.05) and outcome.state.trust == pytest.approx(0.51)
    assert outcome.profile is not None and outcome.profile.interaction_count == 1
    assert with_model.interactions.history(Scope("t", "dana"), limit=5, cursor=None).items == []
    assert with_model.people.list_people(Scope("t", "dana"), limit=5, cursor=None).items == []


def test_a_long_reply_is_cut_to_fit_the_history(with_model: Services, model: FakeLanguageModel) -> None:
    model.answer = "lorem ipsum " * 1_700  # longer than the 16,000 characters a message may have
    outcome = with_model.process.process(Scope("t", "dana"), "Tell me everything")
    assert outcome.reply == model.answer and outcome.interaction is not None
    assert len(outcome.interaction.messages[1].content) == with_model.settings.max_message_chars


def test_the_message_is_embedded_once_for_both_recalls(with_model: Services, model: FakeLanguageModel) -> None:
    # Given memories of both domains, and a model that writes no replies (nothing is recorded, so nothing else embeds)
    model.answer = None
    with_model.memories.remember(Scope("t", "dana"), NewMemory(content="Has a dog named Max", domain=Domain.USER))
    with_model.memories.remember(
        Scope("t", "dana"),
        NewMemory(content="Short answers about my dog Max work better", domain=Domain.RELATIONAL),
    )
    embedded: list[list[str]] = []
    real_embed = with_model.embedder.embed

    def counting(texts: list[str]) -> list[list[float]]:
        embedded.append(list(texts))
        return real_embed(texts)

    # When a message comes
    with patch.object(with_model.embedder, "embed", counting):
        outcome = with_model.process.process(Scope("t", "dana"), "What should I feed my dog Max?")
    # Then both recalls (the top memories of both domains, then the relational ones) searched by one embedding
    assert embedded == [["What should I feed my dog Max?"]]
    assert {h.memory.domain for h in outcome.memories} == {Domain.USER, Domain.RELATIONAL}


def test_concurrent_interactions_lose_no_update(services: Services) -> None:
    # Given 8 threads each recording 10 interactions for the same person at the same time
    def record(worker: int) -> None:
        for n in range(10):
            now = services.clock.now()
            interaction = Interaction(
                id=new_id(now),
                tenant_id="t",
                user_id="dana",
                messages=[Message(role=MessageRole.USER, content=f"message {worker}-{n}")],
                occurred_at=now,
                created_at=now,
            )
            services.relational_state.record_interaction(interaction)
            services.profiles.record_interaction(interaction)

    threads = [threading.Thread(target=record, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Then every one of the 80 counted
    state = services.relational_state.read(Scope("t", "dana"))
    assert state.familiarity == pytest.approx(80 * 0.005)
    assert state.trust == pytest.approx(0.95)  # 0.5 + 0.8, held at the ceiling
    profile = services.profiles.get(Scope("t", "dana"))
    assert profile is not None and profile.interaction_count == 80
