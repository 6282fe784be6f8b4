"""`RapportRetriever` and `RapportChatMessageHistory` (LangChain) against a real `rapport serve`, no model needed."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from rapport_client import AsyncRapport, Rapport
from rapport_client.langchain_memory import RapportChatMessageHistory, RapportRetriever
from tests.e2e.conftest import RunningServer
from tests.sdk.conftest import API_KEY


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def client(rapport_server: RunningServer) -> Iterator[Rapport]:
    with Rapport(rapport_server.base_url, API_KEY, max_retries=0) as client:
        yield client


@pytest.fixture
async def async_client(rapport_server: RunningServer) -> AsyncIterator[AsyncRapport]:
    async with AsyncRapport(rapport_server.base_url, API_KEY, max_retries=0) as client:
        yield client


@pytest.fixture
def user() -> str:
    return f"chain-{uuid.uuid4().hex[:12]}"


def test_the_retriever_answers_recall_as_documents(client: Rapport, user: str) -> None:
    dog = client.memories.add(user, "Has a dog named Max")
    client.memories.add(user, "Works as a nurse on night shifts")
    client.memories.add(user, "Likes answers with a dog example", domain="relational")

    docs = RapportRetriever(client=client, user_id=user, k=2).invoke("dog named Max")
    relational = RapportRetriever(client=client, user_id=user, domain="relational").invoke("dog")

    assert docs[0].page_content == "Has a dog named Max" and docs[0].id == dog.id
    assert len(docs) <= 2
    meta = docs[0].metadata
    assert meta["id"] == dog.id and meta["domain"] == "user" and meta["type"] == "fact"
    assert 0 < meta["similarity"] <= 1 and meta["match_strength"] and meta["match_reasons"]
    assert [d.metadata["domain"] for d in relational] == ["relational"]


@pytest.mark.anyio
async def test_the_retriever_awaits_the_async_client(client: Rapport, async_client: AsyncRapport, user: str) -> None:
    client.memories.add(user, "Is training for the Berlin marathon")

    native = await RapportRetriever(client=client, async_client=async_client, user_id=user).ainvoke("marathon")
    threaded = await RapportRetriever(client=client, user_id=user).ainvoke("marathon")

    assert (
        [d.page_content for d in native]
        == [d.page_content for d in threaded]
        == ["Is training for the Berlin marathon"]
    )


def test_chat_history_records_turns_as_interactions_and_reads_them_back(client: Rapport, user: str) -> None:
    history = RapportChatMessageHistory(client, user, session_id="chat-1")
    other_chat = RapportChatMessageHistory(client, user, session_id="chat-2")

    history.add_messages([HumanMessage("My sister Ana is visiting next week"), AIMessage("How lovely! For how long?")])
    history.add_messages(
        [
            HumanMessage("Ten days"),
            AIMessage(content="", tool_calls=[{"name": "calendar", "args": {}, "id": "call-1"}]),
            ToolMessage("ok", tool_call_id="call-1"),
            AIMessage("Noted: ten days with Ana."),
        ]
    )
    other_chat.add_user_message("Something else entirely")

    messages = history.messages
    assert [(type(m).__name__, m.content) for m in messages] == [
        ("HumanMessage", "My sister Ana is visiting next week"),
        ("AIMessage", "How lovely! For how long?"),
        ("HumanMessage", "Ten days"),
        ("AIMessage", "Noted: ten days with Ana."),
    ]
    recorded = list(client.interactions.history(user))
    assert len(recorded) == 3 and {i.channel for i in recorded} == {"langchain"}
    # Every session of the user, oldest first, when none is named
    everything = RapportChatMessageHistory(client, user).messages
    assert everything[-1].content == "Something else entirely" and len(everything) == 5
    assert [m.content for m in RapportChatMessageHistory(client, user, max_interactions=1).messages] == [
        "Something else entirely"
    ]


def test_chat_history_keeps_system_messages_and_names(client: Rapport, user: str) -> None:
    history = RapportChatMessageHistory(client, user)
    history.add_messages([SystemMessage("Be brief"), HumanMessage("hi", name="Dana")])

    system, human = history.messages
    assert isinstance(system, SystemMessage) and system.content == "Be brief"
    assert isinstance(human, HumanMessage) and human.name == "Dana"


def test_clear_erases_only_when_asked_to(client: Rapport, user: str) -> None:
    history = RapportChatMessageHistory(client, user)
    history.add_user_message("I moved to Porto")

    with pytest.raises(NotImplementedError, match="erase_on_clear=True"):
        history.clear()
    assert len(history.messages) == 1

    RapportChatMessageHistory(client, user, erase_on_clear=True).clear()
    assert history.messages == []
    assert list(client.memories.list(user)) == []
