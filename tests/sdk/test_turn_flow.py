"""`turn()` decides who replies from the /v1/process answer: checked over a MockTransport, no server."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from rapport_client import Rapport, RapportError

pytestmark = pytest.mark.unit


def process_answer(*, reply: str | None, turn_id: str | None = "turn-1") -> dict[str, Any]:
    return {
        "reply": reply,
        "turn_id": turn_id,
        "turn_status": "recorded" if reply else "awaiting_reply",
        "interaction_id": "int-1" if reply else None,
        "memory": {"relevant_memories": [], "relational_notes": [], "total_stored": 0, "interaction_count": 0},
        "user": {"trust": 0.5, "sentiment": 0.0, "grudge": 0.0, "familiarity": 0.0},
        "context": {"tone_grudge_modifier": None, "relation_bias": 0.0, "system_prompt": "You are kind."},
        "safety": {"crisis": False},
    }


def client_answering(answers: list[dict[str, Any]], seen: list[httpx.Request]) -> Rapport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=answers.pop(0))

    return Rapport("http://rapport.test", "key", http_client=httpx.Client(transport=httpx.MockTransport(handler)))


def test_a_server_reply_is_returned_without_calling_the_model() -> None:
    seen: list[httpx.Request] = []
    client = client_answering([process_answer(reply="Hello from the server")], seen)

    def must_not_run(system_prompt: str, message: str) -> str:
        raise AssertionError("the server replied already")

    result = client.turn("dana", "hi", reply=must_not_run)

    assert (result.reply, result.replied_by, result.interaction_id) == ("Hello from the server", "server", "int-1")
    assert [r.url.path for r in seen] == ["/v1/process"]


def test_without_a_server_reply_a_model_is_required() -> None:
    client = client_answering([process_answer(reply=None)], [])

    with pytest.raises(ValueError, match="reply="):
        client.turn("dana", "hi")


def test_a_server_that_opens_no_turn_is_reported_not_guessed_at() -> None:
    client = client_answering([process_answer(reply=None, turn_id=None)], [])

    with pytest.raises(RapportError) as raised:
        client.turn("dana", "hi", reply=lambda prompt, message: "ok")
    assert raised.value.error == "turn_unsupported"


def test_a_model_that_returns_no_text_is_refused_before_anything_is_recorded() -> None:
    seen: list[httpx.Request] = []
    client = client_answering([process_answer(reply=None)], seen)

    with pytest.raises(TypeError, match="str"):
        client.turn("dana", "hi", reply=lambda prompt, message: None)  # type: ignore[arg-type, return-value]
    assert [r.url.path for r in seen] == ["/v1/process"]
