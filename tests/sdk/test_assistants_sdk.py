"""The SDK and the MCP tools speak for one of the tenant's assistants: a client-level `agent_id`, a per-call override,
and none at all answered as the default assistant, against a started server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from mcp.types import TextContent

from rapport_client import AsyncRapport, Rapport
from rapport_client.errors import NotFound
from tests.e2e.conftest import RunningServer
from tests.sdk.conftest import API_KEY
from tests.sdk.test_mcp_server import stdio_client


@pytest.fixture
def user() -> str:
    return f"agents-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def support(rapport_server: RunningServer) -> Iterator[Rapport]:
    with Rapport(rapport_server.base_url, API_KEY, max_retries=0, agent_id="support") as client:
        yield client


@pytest.fixture
def plain(rapport_server: RunningServer) -> Iterator[Rapport]:
    with Rapport(rapport_server.base_url, API_KEY, max_retries=0) as client:
        yield client


def test_a_client_speaks_for_its_assistant_and_a_call_may_name_another(
    support: Rapport, plain: Rapport, user: str
) -> None:
    fact = support.memories.add(user, "Uses the EU data region", domain="user")
    own = support.memories.add(user, "Likes answers as numbered steps", domain="relational")
    coder = support.memories.add(user, "Reviews diffs before merging", domain="relational", agent_id="coder")
    assert (fact.agent_id, own.agent_id, coder.agent_id) == ("support", "support", "coder")

    assert {m.content for m in support.memories.list(user)} == {fact.content, own.content}
    assert {m.content for m in support.memories.list(user, agent_id="coder")} == {fact.content, coder.content}
    assert {m.content for m in plain.memories.list(user)} == {fact.content}  # the default assistant, as before
    with pytest.raises(NotFound):
        plain.memories.get(user, own.id)
    assert support.memories.get(user, own.id).id == own.id

    support.interactions.record(user, [{"role": "user", "content": "THIS IS USELESS!! NOTHING WORKS!!"}])
    assert support.state.get(user).grudge > 0.0
    assert plain.state.get(user).grudge == 0.0 and support.state.get(user, agent_id="coder").grudge == 0.0
    support.events.report(user, "broken_promise", "late again")
    assert [e.note for e in support.events.list(user)] == ["late again"]
    assert list(plain.events.list(user)) == []
    listed = {a.agent_id for a in plain.agents.list().agents}
    assert {"default", "support", "coder"} <= listed


@pytest.mark.anyio
async def test_the_async_client_takes_the_same_ids(rapport_server: RunningServer, user: str) -> None:
    async with AsyncRapport(rapport_server.base_url, API_KEY, max_retries=0, agent_id="intake") as client:
        note = await client.memories.add(user, "First visit went calmly", domain="relational")
        assert note.agent_id == "intake"
        found = await client.memories.search(user, "first visit", domain="relational")
        assert [h.id for h in found.memories] == [note.id]
        other = await client.memories.search(user, "first visit", domain="relational", agent_id="coach")
        assert other.memories == []


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_mcp_tools_take_an_agent_id(rapport_server: RunningServer, user: str) -> None:
    async with stdio_client(rapport_server, "--agent-id", "desk") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in ("remember", "recall", "record_conversation", "get_context", "relationship_state"):
            assert "agent_id" in tools[name].input_schema["properties"], name
        stored = await client.call_tool(
            "remember", {"content": "Calls after lunch", "user_id": user, "domain": "relational"}
        )
        assert not stored.is_error, [b.text for b in stored.content if isinstance(b, TextContent)]
        elsewhere = await client.call_tool(
            "recall", {"query": "after lunch", "user_id": user, "domain": "relational", "agent_id": "other"}
        )
        here = await client.call_tool("recall", {"query": "after lunch", "user_id": user, "domain": "relational"})
    assert isinstance(here.structured_content, dict) and isinstance(elsewhere.structured_content, dict)
    assert len(here.structured_content["memories"]) == 1
    assert elsewhere.structured_content["memories"] == []
