"""Several assistants of one tenant over real HTTP: `agent_id` on reads (query) and writes (body), each assistant's
relationship apart, the facts shared, `GET /v1/agents`, erasure across assistants, and a client that never names
an assistant answered as before."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.conftest import RunningServer

A = {"Authorization": "Bearer key-a", "Content-Type": "application/json"}
B = {"Authorization": "Bearer key-b", "Content-Type": "application/json"}


def said(http: httpx.Client, text: str, **extra: Any) -> dict[str, Any]:
    messages = [{"role": "user", "content": text}, {"role": "assistant", "content": "Understood."}]
    response = http.post("/v1/users/dana/interactions", headers=A, json={"messages": messages, **extra})
    assert response.status_code == 201, response.text
    return dict(response.json())


def contents(http: httpx.Client, **params: Any) -> set[str]:
    response = http.get("/v1/users/dana/memories", headers=A, params={"limit": 50, **params})
    assert response.status_code == 200, response.text
    return {m["content"] for m in response.json()["memories"]}


@pytest.fixture
def http(hashing_server: RunningServer) -> httpx.Client:
    return httpx.Client(base_url=hashing_server.base_url, timeout=60)


def test_two_assistants_keep_their_own_relationship_with_one_person(http: httpx.Client) -> None:
    # Given: a fact the support bot heard, and a relational note of each assistant
    fact = {"content": "Works at Acme on the billing API", "domain": "user", "agent_id": "support"}
    assert http.post("/v1/users/dana/memories", headers=A, json=fact).status_code == 201
    coder = http.post(
        "/v1/users/dana/memories",
        headers=A,
        json={
            "content": "Pairing on the billing proxy config worked well",
            "domain": "relational",
            "agent_id": "coder",
        },
    )
    support = http.post(
        "/v1/users/dana/memories?agent_id=support",
        headers=A,
        json={"content": "Prefers billing answers with a link to the docs", "domain": "relational"},
    )
    assert coder.status_code == support.status_code == 201
    assert coder.json()["agent_id"] == "coder" and support.json()["agent_id"] == "support"

    # Then: listings and recall mix the shared fact with each assistant's own notes only
    assert contents(http, agent_id="coder") == {
        "Works at Acme on the billing API",
        "Pairing on the billing proxy config worked well",
    }
    assert contents(http, domain="relational", agent_id="support") == {
        "Prefers billing answers with a link to the docs"
    }
    assert contents(http) == {"Works at Acme on the billing API"}  # no agent_id: the default assistant, as before
    recalled = contents(http, query="billing", domain="both", agent_id="coder")
    assert recalled == {"Works at Acme on the billing API", "Pairing on the billing proxy config worked well"}
    # another assistant's note is not found, nor deleted, through it
    other = http.get(f"/v1/users/dana/memories/{coder.json()['id']}", headers=A, params={"agent_id": "support"})
    assert other.status_code == 404 and other.json()["error"] == "not_found"
    assert http.delete(f"/v1/users/dana/memories/{coder.json()['id']}", headers=A).status_code == 404

    # When: the person snaps at the support bot only
    said(http, "WHY IS THIS STILL BROKEN? THIS IS RIDICULOUS!!", agent_id="support")
    said(http, "Thanks, that worked perfectly!", agent_id="coder")
    report = http.post("/v1/users/dana/events", headers=A, json={"type": "broken_promise", "agent_id": "support"})
    assert report.status_code == 201, report.text

    def state(agent: str | None) -> dict[str, Any]:
        response = http.get("/v1/users/dana/state", headers=A, params={"agent_id": agent} if agent else {})
        assert response.status_code == 200, response.text
        return dict(response.json())

    support_state, coder_state, default_state = state("support"), state("coder"), state(None)
    assert support_state["grudge"] > 0.1 and coder_state["grudge"] == default_state["grudge"] == 0.0
    assert coder_state["trust"] > support_state["trust"]
    events = http.get("/v1/users/dana/events", headers=A, params={"agent_id": "coder"}).json()["events"]
    assert events == []
    # the history is shared, each interaction naming who took part
    history = http.get("/v1/users/dana/history", headers=A).json()["interactions"]
    assert [i["agent_id"] for i in history] == ["coder", "support"]

    # And: the tenant lists its assistants with counts; another tenant sees none of them
    agents = http.get("/v1/agents", headers=A).json()["agents"]
    assert [a["agent_id"] for a in agents] == ["default", "coder", "support"]
    coder_listed = next(a for a in agents if a["agent_id"] == "coder")
    assert coder_listed["people"] == 1 and coder_listed["relational_memories"] >= 1
    assert [a["agent_id"] for a in http.get("/v1/agents", headers=B).json()["agents"]] == ["default"]


def test_a_bad_agent_id_is_a_400_that_says_what_an_id_is(http: httpx.Client) -> None:
    for response in (
        http.get("/v1/users/dana/state", headers=A, params={"agent_id": "Support Bot"}),
        http.post("/v1/users/dana/memories", headers=A, json={"content": "x", "domain": "user", "agent_id": "a#b"}),
        http.post("/v1/process", headers=A, json={"user_id": "dana", "message": "hi", "agent_id": "-x"}),
    ):
        assert response.status_code == 400, response.text
        assert response.json()["error"] == "invalid_input" and "agent_id" in response.json()["message"]
    both = http.post(
        "/v1/users/dana/memories?agent_id=coder",
        headers=A,
        json={"content": "x", "domain": "user", "agent_id": "support"},
    )
    assert both.status_code == 400 and "differ" in both.json()["message"]


def test_erasing_a_person_ends_every_assistants_relationship_in_one_audit_event(http: httpx.Client) -> None:
    for agent in ("coder", "support"):
        note = {"content": f"Notes of the {agent} assistant", "domain": "relational", "agent_id": agent}
        assert http.post("/v1/users/dana/memories", headers=A, json=note).status_code == 201
        said(http, f"Hello {agent}", agent_id=agent, session_id="s-1")

    erased = http.delete("/v1/privacy/erase/dana", headers=A)
    assert erased.status_code == 200, erased.text
    agents = erased.json()["agents"]
    assert agents["coder"]["relational_memories"] == agents["support"]["relational_memories"] == 1
    assert agents["coder"]["items"] >= 2 and agents["support"]["items"] >= 2  # state and session each
    audit = http.get("/v1/audit", headers=A).json()["events"]
    (erasure,) = [e for e in audit if e["action"] == "erase_user"]
    assert erasure["agents"] == agents
    for agent in ("coder", "support"):
        assert contents(http, agent_id=agent) == set()
    assert all(a["relational_memories"] == 0 for a in http.get("/v1/agents", headers=A).json()["agents"])


def test_the_contract_documents_agent_id_with_its_pattern(http: httpx.Client) -> None:
    document = http.get("/v1/openapi.json").json()
    state = document["paths"]["/v1/users/{user_id}/state"]["get"]
    (param,) = [p for p in state["parameters"] if p["name"] == "agent_id"]
    assert param["in"] == "query" and "^[a-z0-9]" in str(param["schema"])
    body = document["components"]["schemas"]["CreateMemoryRequest"]["properties"]["agent_id"]
    assert "^[a-z0-9]" in str(body)
    assert "/v1/agents" in document["paths"]
