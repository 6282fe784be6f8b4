"""People the user mentions, across several sessions, with the user's feelings toward them following their words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from rapport.api.app import create_lambda_app
from rapport.clock import FixedClock
from rapport.composition.services import Services
from tests.integration.api_events import FakeLambdaContext, rest_event

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _pipeline_settles(services: Services) -> Iterator[None]:
    """/v1/process starts the pipeline on a background thread: let it finish before the store closes."""
    yield
    drain = getattr(services.pipeline_trigger, "drain", None)
    if drain is not None:
        drain(timeout=60)


@pytest.fixture
def call(services: Services):  # type: ignore[no-untyped-def]
    app = create_lambda_app(services)

    def _call(method: str, url: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        response = app.resolve(rest_event(method, url, body, **kw), FakeLambdaContext())
        return response["statusCode"], json.loads(response["body"]) if response["body"] else None

    return _call


def _session(call, session_id: str, *user_messages: str) -> None:  # type: ignore[no-untyped-def]
    messages: list[dict[str, str]] = []
    for text in user_messages:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "I see. Tell me more."}]
    status, body = call("POST", "/v1/users/dana/interactions", {"messages": messages, "session_id": session_id})
    assert status == 201, body


def _people(call) -> dict[str, dict[str, Any]]:  # type: ignore[no-untyped-def]
    status, body = call("GET", "/v1/users/dana/people")
    assert status == 200
    return {p["slug"]: p for p in body["people"]}


def test_people_across_sessions(call, clock: FixedClock) -> None:  # type: ignore[no-untyped-def]
    # Session 1: a complaint about the boss; mom called (no name yet); the assistant's words never count.
    _session(call, "s1", "My boss Sarah keeps moving deadlines. It is exhausting.", "My mom called last night.")
    people = _people(call)
    assert set(people) == {"sarah", "mother"}
    sarah = people["sarah"]
    assert (sarah["name"], sarah["role"], sarah["mention_count"]) == ("Sarah", "boss", 1)
    assert sarah["sentiment_label"] == "negative"
    assert sarah["facts"][0]["text"] == "My boss Sarah keeps moving deadlines."
    assert (people["mother"]["name"], people["mother"]["sentiment_label"]) == (None, "neutral")

    # Session 2, a day later: Sarah did something kind, and mom gets a name. /process already tells the model
    # what we know of Sarah (and how this message changes it); recording the exchange stores it.
    clock.advance(timedelta(days=1))
    message = "Sarah approved my vacation, she is wonderful. My mom Linda is so happy."
    status, processed = call("POST", "/v1/process", {"user_id": "dana", "message": message})
    assert status == 200
    prompt = processed["context"]["system_prompt"]
    assert "Sarah (their boss): they speak warmly of them (mentioned 2 times)" in prompt
    assert "My boss Sarah keeps moving deadlines." in prompt
    assert _people(call)["sarah"]["mention_count"] == 1, "/process without a model writes nothing"
    _session(call, "s2", message)
    people = _people(call)
    assert set(people) == {"sarah", "linda"}, "the unnamed mother joined Linda"
    sarah = people["sarah"]
    assert sarah["mention_count"] == 2 and sarah["sentiment_label"] == "positive"
    assert sarah["last_mentioned"] == "2026-01-06T09:00:00Z" and sarah["first_mentioned"] == "2026-01-05T09:00:00Z"
    linda = people["linda"]
    assert (linda["role"], linda["mention_count"]) == ("mother", 2)
    assert [f["text"] for f in linda["facts"]] == ["My mom called last night.", "My mom Linda is so happy."]
    assert call("GET", "/v1/users/dana/people/mother")[0] == 404

    # Session 3: a neutral mention by name only counts; a bitter one turns the feeling again.
    clock.advance(timedelta(days=1))
    _session(call, "s3", "I had lunch with Sarah.")
    assert _people(call)["sarah"]["sentiment"] == sarah["sentiment"]
    _session(call, "s3", "Sarah yelled at me in front of everyone, I hate working for her.")
    sarah_now = call("GET", "/v1/users/dana/people/sarah")[1]
    assert sarah_now["mention_count"] == 4 and sarah_now["sentiment_label"] == "negative"
    # And "my mom" now means Linda.
    _session(call, "s3", "My mom sent cookies, she is the best.")
    assert _people(call)["linda"]["mention_count"] == 3


def test_unknown_person_and_paging(call) -> None:  # type: ignore[no-untyped-def]
    status, body = call("GET", "/v1/users/dana/people/nobody")
    assert status == 404 and body["error"] == "not_found"
    _session(call, "s1", "My sister Emma and my brother Jack visited. My friend Tom came too.")
    first = call("GET", "/v1/users/dana/people?limit=2")[1]
    rest = call("GET", f"/v1/users/dana/people?limit=2&cursor={first['next_cursor']}")[1]
    assert [p["slug"] for p in first["people"] + rest["people"]] == ["emma", "jack", "tom"]
    assert call("GET", "/v1/users/dana/people?limit=0")[0] == 400
