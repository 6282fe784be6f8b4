"""`AsyncRapport` against a real `rapport serve`: the same surface as the blocking client, awaited."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest

from rapport_client import AsyncRapport, InvalidRequest, NotFound, Unauthorized
from tests.e2e.conftest import RunningServer
from tests.sdk.conftest import API_KEY

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(rapport_server: RunningServer) -> AsyncIterator[AsyncRapport]:
    async with AsyncRapport(f"{rapport_server.base_url}/v1", API_KEY, max_retries=0) as client:
        yield client


@pytest.fixture
def user() -> str:
    return f"user-{uuid.uuid4().hex[:12]}"


async def test_memories_round_trip(client: AsyncRapport, user: str) -> None:
    added = await asyncio.gather(*(client.memories.add(user, f"Plays the {s}") for s in ("cello", "piano", "drums")))

    found = await client.memories.search(user, "cello", limit=1)
    assert [hit.content for hit in found.memories] == ["Plays the cello"]
    assert found.total_stored == 3

    listed = [m.id async for m in client.memories.list(user, page_size=2)]
    assert sorted(listed) == sorted(m.id for m in added)

    cello = next(m for m in added if m.content == "Plays the cello")
    assert (await client.memories.update(user, cello.id, type="preference")).type == "preference"
    assert (await client.memories.get(user, cello.id)).type == "preference"
    await client.memories.delete(user, cello.id)
    with pytest.raises(NotFound):
        await client.memories.get(user, cello.id)


async def test_add_many_with_one_bad_item(client: AsyncRapport, user: str) -> None:
    batch = await client.memories.add_many(user, [{"content": "Speaks Portuguese"}, {"content": ""}])

    assert (batch.created, batch.invalid) == (1, 1)
    assert batch.results[1].status == "invalid"


async def test_record_then_get_and_history(client: AsyncRapport, user: str) -> None:
    recorded = await client.interactions.record(
        user, [{"role": "user", "content": "My daughter Mia starts school on Monday"}], wait=True
    )

    status = await client.interactions.get(user, recorded.interaction.id)
    assert status.interaction.messages[0].content == "My daughter Mia starts school on Monday"
    assert status.pipeline is not None and status.pipeline.status == "done"
    assert [i.id async for i in client.interactions.history(user)] == [recorded.interaction.id]


async def test_turn_with_an_async_reply_model(client: AsyncRapport, user: str) -> None:
    async def my_model(system_prompt: str, message: str) -> str:
        await asyncio.sleep(0)
        assert system_prompt
        return f"You said: {message}"

    result = await client.turn(user, "I finally finished my thesis", reply=my_model)

    assert result.replied_by == "client"
    assert result.reply == "You said: I finally finished my thesis"
    assert result.interaction is not None
    assert [m.role for m in result.interaction.messages] == ["user", "assistant"]
    assert result.process.turn_id is not None
    status = await client.interactions.get(user, result.interaction.id)
    assert status.interaction.id == result.interaction.id


async def test_turn_with_a_plain_function(client: AsyncRapport, user: str) -> None:
    result = await client.turn(user, "Any tips for sleeping better?", reply=lambda prompt, message: "Keep a routine.")

    assert result.reply == "Keep a routine."
    assert result.interaction is not None


async def test_errors_and_clear_history(rapport_server: RunningServer, client: AsyncRapport, user: str) -> None:
    with pytest.raises(InvalidRequest):
        await client.memories.add(user, "  ")
    async with AsyncRapport(rapport_server.base_url, "wrong-key") as stranger:
        with pytest.raises(Unauthorized):
            await stranger.state.get(user)

    await client.memories.add(user, "Drinks oat milk")
    erased = await client.clear_history(user)

    assert erased.counts["memories"] == 1
    assert [m async for m in client.memories.list(user)] == []
