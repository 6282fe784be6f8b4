"""/v1/process, relational state, events and people over real HTTP on the local server, with no language model.

The caller asks for context, answers with its own model, and posts the exchange to /interactions.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.conftest import RunningServer

A = {"Authorization": "Bearer key-a", "Content-Type": "application/json"}
B = {"x-api-key": "key-b", "Content-Type": "application/json"}


def _exchange(http: httpx.Client, message: str, **extra: Any) -> dict[str, Any]:
    response = http.post("/v1/process", headers=A, json={"user_id": "dana", "message": message, **extra})
    assert response.status_code == 200, response.text
    processed = response.json()
    assert processed["reply"] is None
    messages = [{"role": "user", "content": message}, {"role": "assistant", "content": "(the caller's own reply)"}]
    recorded = http.post("/v1/users/dana/interactions", headers=A, json={"messages": messages, **extra})
    assert recorded.status_code == 201, recorded.text
    return dict(processed)


def test_process_without_a_language_model(hashing_server: RunningServer) -> None:
    with httpx.Client(base_url=hashing_server.base_url, timeout=30) as http:
        dog = http.post("/v1/users/dana/memories", headers=A, json={"content": "Has a dog named Max", "domain": "user"})
        assert dog.status_code == 201

        body = _exchange(http, "My dog Max is sick", channel="web", session_id="s1")
        assert set(body) == {"reply", "memory", "user", "context", "safety"}
        relevant = body["memory"]["relevant_memories"]
        assert [m["id"] for m in relevant] == [dog.json()["id"]]
        assert set(relevant[0]) == {"id", "text", "similarity", "timestamp"} and relevant[0]["similarity"] >= 0.3
        assert body["memory"]["total_stored"] == 1  # the caller had not posted the exchange yet
        assert body["memory"]["interaction_count"] == 1
        assert body["memory"]["known_since"] == body["memory"]["last_seen"]
        assert set(body["user"]) == {"trust", "sentiment", "grudge", "familiarity"}
        assert (body["user"]["trust"], body["user"]["familiarity"]) == (0.51, 0.005)
        assert body["user"]["sentiment"] < 0.5  # "sick" is a sad thing to say
        assert set(body["context"]) == {"tone_grudge_modifier", "relation_bias", "system_prompt"}
        assert "Has a dog named Max" in body["context"]["system_prompt"]
        assert body["safety"] == {"crisis": False}

        history = http.get("/v1/users/dana/history", headers=A).json()["interactions"]
        assert len(history) == 1 and history[0]["channel"] == "web"
        assert history[0]["metadata"]["intent"] == "statement"

        for _ in range(3):
            angry = _exchange(http, "THIS IS RIDICULOUS, FIX IT NOW!!")
        assert angry["context"]["tone_grudge_modifier"] == "cautious"
        assert "Tone modifier: cautious" in angry["context"]["system_prompt"]

        state = http.get("/v1/users/dana/state", headers=A).json()
        # Grudge decays continuously on the real clock, so a later read may be a hair lower.
        assert state["grudge"] == pytest.approx(angry["user"]["grudge"], abs=1e-3)
        assert state["profile"]["interaction_count"] == 4
        keyed = {**A, "Idempotency-Key": "evt-0001"}
        event = http.post("/v1/users/dana/events", headers=keyed, json={"type": "broken_promise", "note": "late"})
        assert event.status_code == 201 and event.json()["state"]["trust"] == round(0.54 - 0.05, 6)
        # A retry with the same key (the client timed out) counts once; the key for another event is a conflict
        retry = http.post("/v1/users/dana/events", headers=keyed, json={"type": "broken_promise", "note": "late"})
        assert retry.status_code == 200 and retry.json()["replayed"] is True
        assert retry.json()["event"]["id"] == event.json()["event"]["id"]
        assert retry.json()["state"]["trust"] == event.json()["state"]["trust"]
        clash = http.post("/v1/users/dana/events", headers=keyed, json={"type": "promise_kept"})
        assert clash.status_code == 409 and "Idempotency-Key" in clash.json()["message"]
        unknown = http.post("/v1/users/dana/events", headers=A, json={"type": "apology"})
        assert unknown.status_code == 400 and "promise_kept" in unknown.json()["message"]

        assert _exchange(http, "I want to end my life")["safety"] == {"crisis": True}
        assert http.get("/v1/users/dana/state", headers=A).json()["crisis_open"] is True

        _exchange(http, "My boss Sarah keeps yelling at me.")
        people = http.get("/v1/users/dana/people", headers=A).json()["people"]
        assert [(p["slug"], p["role"], p["sentiment_label"]) for p in people] == [("sarah", "boss", "negative")]
        assert http.get("/v1/users/dana/people/sarah", headers=A).json()["mention_count"] == 1
        assert http.get("/v1/users/dana/people/sarah", headers=B).status_code == 404
        assert http.get("/v1/users/dana/state", headers=B).json()["profile"] is None

        erased = http.delete("/v1/privacy/erase/dana", headers=A).json()
        assert erased["counts"]["other_items"] >= 4  # state, profile, person, event (and more)
        assert http.get("/v1/users/dana/people", headers=A).json()["people"] == []
        assert http.get("/v1/users/dana/state", headers=A).json()["profile"] is None
