"""`RapportStore` (a LangGraph `BaseStore`) against a real `rapport serve`: items are an end user's memories."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any, TypedDict

import httpx
import pytest
from langgraph.graph import START, StateGraph
from langgraph.store.base import BaseStore, InvalidNamespaceError

from rapport_client import Rapport
from rapport_client.langgraph_store import RapportStore
from tests.e2e.conftest import RunningServer
from tests.sdk.conftest import API_KEY


@pytest.fixture
def client(rapport_server: RunningServer) -> Iterator[Rapport]:
    with Rapport(rapport_server.base_url, API_KEY, max_retries=0) as client:
        yield client


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def user() -> str:
    return f"graph-{uuid.uuid4().hex[:12]}"


def test_put_get_update_delete_keep_one_memory_per_key(client: Rapport, user: str) -> None:
    store = RapportStore(client)
    facts = ("users", user, "user")

    store.put(facts, "pet", {"content": "Has a dog named Max", "source": "onboarding"})
    item = store.get(facts, "pet")

    assert item is not None
    assert (item.key, item.namespace) == ("pet", facts)
    assert item.value == {"content": "Has a dog named Max", "source": "onboarding"}
    (memory,) = list(client.memories.list(user))
    assert memory.content == "Has a dog named Max" and memory.domain == "user"

    # When: the same key is put again, from a store that has not seen it (no cached id: found by its metadata)
    RapportStore(client).put(facts, "pet", {"content": "Has two dogs, Max and Rex", "source": "chat"})

    (updated,) = list(client.memories.list(user))
    assert updated.id == memory.id and updated.content == "Has two dogs, Max and Rex"
    again = store.get(facts, "pet")
    assert again is not None and again.value == {"content": "Has two dogs, Max and Rex", "source": "chat"}
    assert again.updated_at >= item.updated_at

    store.delete(facts, "pet")
    assert store.get(facts, "pet") is None
    assert list(client.memories.list(user)) == []
    store.delete(facts, "pet")  # deleting what is gone is a no-op, as in every LangGraph store


def test_a_value_without_text_is_stored_as_json_and_read_back_whole(client: Rapport, user: str) -> None:
    store = RapportStore(client)
    prefs = ("users", user, "relational")

    store.put(prefs, "format", {"bullets": True, "max_words": 120})

    item = store.get(prefs, "format")
    assert item is not None and item.value == {"bullets": True, "max_words": 120}
    (memory,) = list(client.memories.list(user, domain="relational"))
    assert '"bullets": true' in memory.content and memory.type == "shared_context"


def test_search_is_recall_with_similarity_as_score(client: Rapport, user: str) -> None:
    store = RapportStore(client)
    store.put(("users", user, "user"), "pet", {"content": "Has a dog named Max", "kind": "pet"})
    store.put(("users", user, "user"), "city", {"content": "Lives in Lisbon near the river", "kind": "place"})
    store.put(("users", user, "relational"), "style", {"content": "Likes short answers about the dog", "kind": "pet"})

    hits = store.search(("users", user), query="dog named Max", limit=5)
    user_only = store.search(("users", user, "user"), query="dog", limit=5)
    filtered = store.search(("users", user), query="dog", filter={"kind": "pet"}, limit=5)
    newest = store.search(("users", user, "user"))

    assert hits[0].key == "pet" and hits[0].score is not None and hits[0].score > 0
    assert {h.namespace for h in user_only} == {("users", user, "user")}
    assert {h.key for h in filtered} == {"pet", "style"}
    assert {h.key for h in newest} == {"pet", "city"} and all(h.score is None for h in newest)
    assert [h.key for h in store.search(("users", user, "user"), offset=1, limit=1)] == [newest[1].key]


def test_memories_rapport_made_are_items_keyed_by_their_id(client: Rapport, user: str) -> None:
    made = client.memories.add(user, "Plays the cello on weekends", type="preference")
    store = RapportStore(client)

    (hit,) = store.search(("users", user, "user"), query="cello", limit=1)
    item = store.get(("users", user, "user"), made.id)

    assert hit.key == made.id and hit.value == {"content": "Plays the cello on weekends", "type": "preference"}
    assert item is not None and item.key == made.id
    assert store.get(("users", user, "relational"), made.id) is None  # another domain, another namespace


def test_list_namespaces_of_one_user(client: Rapport, user: str) -> None:
    store = RapportStore(client)
    store.put(("users", user, "relational"), "style", {"content": "Prefers examples first"})

    assert store.list_namespaces(prefix=("users", user)) == [("users", user, "relational")]
    assert store.list_namespaces(prefix=("users", user), max_depth=2) == [("users", user)]
    assert store.list_namespaces(prefix=("users", user), suffix=("user",)) == []


@pytest.mark.anyio
async def test_the_async_methods(client: Rapport, user: str) -> None:
    store = RapportStore(client)
    await store.aput(("users", user, "user"), "goal", {"content": "Wants to run a marathon"})

    item = await store.aget(("users", user, "user"), "goal")
    hits = await store.asearch(("users", user), query="marathon")

    assert item is not None and item.value["content"] == "Wants to run a marathon"
    assert [h.key for h in hits] == ["goal"]


def test_what_rapport_cannot_do_says_so(client: Rapport, user: str) -> None:
    store = RapportStore(client)

    with pytest.raises(InvalidNamespaceError, match="'users', user_id"):
        store.put(("memories", user), "k", {"content": "x"})
    with pytest.raises(InvalidNamespaceError):
        store.get(("users", user, "facts"), "k")
    with pytest.raises(NotImplementedError, match="one end user at a time"):
        store.search(("users",), query="anything")
    with pytest.raises(NotImplementedError, match="cannot list its end users"):
        store.list_namespaces(prefix=("users",))
    with pytest.raises(NotImplementedError, match="TTL"):
        store.put(("users", user, "user"), "k", {"content": "x"}, ttl=5)
    assert list(client.memories.list(user)) == []


def test_a_graph_node_remembers_and_recalls_through_the_store(client: Rapport, user: str) -> None:
    class State(TypedDict):
        user_id: str
        message: str
        recalled: list[str]

    def remember_then_recall(state: State, *, store: BaseStore) -> dict[str, Any]:
        namespace = ("users", state["user_id"], "user")
        store.put(namespace, "latest", {"content": state["message"]})
        return {"recalled": [hit.value["content"] for hit in store.search(namespace, query="sourdough", limit=3)]}

    builder = StateGraph(State)
    builder.add_node("memory", remember_then_recall)
    builder.add_edge(START, "memory")
    graph = builder.compile(store=RapportStore(client))

    result = graph.invoke({"user_id": user, "message": "Bakes sourdough bread every Sunday", "recalled": []})

    assert result["recalled"] == ["Bakes sourdough bread every Sunday"]
    assert [m.content for m in client.memories.list(user)] == ["Bakes sourdough bread every Sunday"]


def test_a_sole_writer_puts_a_new_key_in_one_request(rapport_server: RunningServer, user: str) -> None:
    sent: list[str] = []
    http = httpx.Client(event_hooks={"request": [lambda request: sent.append(request.method)]})
    with Rapport(rapport_server.base_url, API_KEY, http_client=http) as client:
        shared = RapportStore(client, memory_types={"user": "preference"})
        sole = RapportStore(client, sole_writer=True)
        facts = ("users", user, "user")

        shared.put(facts, "tea", {"content": "Prefers green tea"})
        sole.put(facts, "first", {"content": "Was born in Oslo"})
        sent.clear()
        shared.put(facts, "coffee", {"content": "Takes coffee black"})
        shared_requests, sent[:] = list(sent), []
        sole.put(facts, "second", {"content": "Speaks Norwegian"})
        sole_requests = list(sent)

        types = {m.content: m.type for m in client.memories.list(user)}
    http.close()

    assert shared_requests == ["GET", "POST"]  # a pass over the user's items first: another writer may hold the key
    assert sole_requests == ["POST"]
    assert types["Prefers green tea"] == "preference" and types["Was born in Oslo"] == "fact"
