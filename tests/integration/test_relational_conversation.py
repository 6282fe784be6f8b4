"""A scripted conversation through the Lambda app moves the relational state exactly as docs/relational-state.md says.

Every expected value below is computed by hand from those rules and the detected mood:
trust +0.01 and familiarity +0.005 per interaction; sentiment steps 0.7 of the way to the message's mood on the 0..1
scale (0.5 + mood / 2), never against the mood's sign and never up for a crisis, half-life 6 h toward 0.5;
grudge +0.05 frustration / +0.10 anger / +0.15 anger with shouting / +0.20 crisis, half-life 12 h.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from rapport.api.app import create_lambda_app
from rapport.clock import FixedClock
from rapport.composition.services import Services
from tests.conftest import START
from tests.integration.api_events import FakeLambdaContext, rest_event

pytestmark = pytest.mark.integration

HELLO = "Hi, I am setting up the new build server today."  # neutral: mood 0
FRUSTRATED = "The build keeps failing and I am so frustrated."  # frustration; VADER compound -0.8256
SHOUTING = "WHY IS THIS STILL BROKEN? THIS IS RIDICULOUS!!"  # anger + shouting; VADER compound -0.7339
ANGRY = "Why is this still broken, this is ridiculous."  # anger, no shouting
THANKS = "Thanks, that worked perfectly!"  # gratitude; VADER compound 0.8122
CRISIS = "Some days I just want to die."  # crisis language: mood at most -0.6


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


def _close(actual: dict[str, float], **expected: float) -> None:
    """Equal to the third decimal."""
    for name, value in expected.items():
        assert abs(actual[name] - value) < 5e-4, (name, actual[name], value)


def exchange(call, message: str, user_id: str = "dana", **kw: Any) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """What a caller with its own model does: ask /process for context, reply, post the exchange to /interactions."""
    status, processed = call("POST", "/v1/process", {"user_id": user_id, "message": message}, **kw)
    assert status == 200, processed
    assert processed["reply"] is None
    messages = [{"role": "user", "content": message}, {"role": "assistant", "content": "(the caller's reply)"}]
    status, recorded = call("POST", f"/v1/users/{user_id}/interactions", {"messages": messages}, **kw)
    assert status == 201, recorded
    # /process answered with the state this exchange leaves; recording it persisted exactly that.
    stored = call("GET", f"/v1/users/{user_id}/state", **kw)[1]
    _close(stored, **processed["user"])
    assert stored["profile"]["interaction_count"] == processed["memory"]["interaction_count"]
    return processed


def test_the_brief_by_hand(call, clock: FixedClock) -> None:  # type: ignore[no-untyped-def]
    def say(message: str) -> dict[str, Any]:
        return exchange(call, message)

    def state() -> dict[str, Any]:
        status, body = call("GET", "/v1/users/dana/state")
        assert status == 200, body
        return body

    # A stranger: trust 0.5, neutral sentiment, no grudge, no familiarity.
    _close(state(), trust=0.5, sentiment=0.5, grudge=0.0, familiarity=0.0)
    assert state()["profile"] is None

    first = say(HELLO)
    _close(first["user"], trust=0.51, sentiment=0.5, grudge=0.0, familiarity=0.005)
    assert first["reply"] is None and first["safety"] == {"crisis": False}

    # Frustration: grudge +0.05; mood -0.8256 is 0.0872 on the sentiment scale: 0.5 + 0.7 x (0.0872 - 0.5).
    frustrated = say(FRUSTRATED)
    _close(frustrated["user"], trust=0.52, sentiment=0.21104, grudge=0.05, familiarity=0.010)
    assert frustrated["context"]["tone_grudge_modifier"] is None

    # Six hours later: sentiment halfway back to 0.5; grudge 0.05 x 2^-0.5.
    clock.advance(timedelta(hours=6))
    _close(state(), trust=0.52, sentiment=0.35552, grudge=0.035355, familiarity=0.010)

    # Anger with shouting: +0.15; mood -0.7339 is 0.13305: 0.35552 + 0.7 x (0.13305 - 0.35552).
    _close(say(SHOUTING)["user"], trust=0.53, sentiment=0.199791, grudge=0.185355, familiarity=0.015)

    # Twelve hours later: grudge halved; sentiment 0.5 - (0.5 - 0.199791) x 2^-2.
    clock.advance(timedelta(hours=12))
    _close(state(), trust=0.53, sentiment=0.424948, grudge=0.092678, familiarity=0.015)

    # Gratitude lifts the mood, without jumping to the top: 0.424948 + 0.7 x (0.9061 - 0.424948).
    _close(say(THANKS)["user"], trust=0.54, sentiment=0.761754, grudge=0.092678, familiarity=0.020)

    # The grudge builds up; the tone modifier follows its thresholds.
    _close(say(SHOUTING)["user"], sentiment=0.321661, grudge=0.242678)
    just_below = say(SHOUTING)
    _close(just_below["user"], sentiment=0.189633, grudge=0.392678)
    assert just_below["context"]["tone_grudge_modifier"] is None
    cautious = say(ANGRY)  # mood -0.6808 is 0.1596: 0.189633 + 0.7 x (0.1596 - 0.189633)
    _close(cautious["user"], sentiment=0.16861, grudge=0.492678)
    assert cautious["context"]["tone_grudge_modifier"] == "cautious"
    assert "Tone modifier: cautious (grudge 0.49)" in cautious["context"]["system_prompt"]
    # A crisis never raises sentiment, though its mood (at most 0.2 on the scale) is above the current 0.16861.
    crisis = say(CRISIS)
    _close(crisis["user"], sentiment=0.16861, grudge=0.692678)
    assert crisis["safety"] == {"crisis": True} and crisis["context"]["tone_grudge_modifier"] == "cautious"
    assert "## Safety" in crisis["context"]["system_prompt"]
    defensive = say(FRUSTRATED)
    _close(defensive["user"], trust=0.59, sentiment=0.111623, grudge=0.742678, familiarity=0.045)
    assert defensive["context"]["tone_grudge_modifier"] == "cautious_defensive"
    assert defensive["safety"] == {"crisis": True}, "an unresolved crisis stays flagged"
    assert abs(defensive["context"]["relation_bias"] - 0.59 * 0.045) < 5e-4
    assert defensive["memory"]["interaction_count"] == 9
    assert defensive["memory"]["known_since"] == "2026-01-05T09:00:00Z"
    assert defensive["memory"]["last_seen"] == "2026-01-06T03:00:00Z"

    # Events: trust 0.59 is in the medium tier, so a broken promise costs 0.05.
    status, broken = call("POST", "/v1/users/dana/events", {"type": "broken_promise", "note": "missed the deadline"})
    assert status == 201
    _close(broken["event"]["before"], trust=0.59)
    _close(broken["state"], trust=0.54, grudge=0.742678)
    status, resolved = call("POST", "/v1/users/dana/events", {"type": "crisis_resolved"})
    _close(resolved["state"], grudge=0.542678)
    assert resolved["state"]["crisis_open"] is False and resolved["state"]["tone_grudge_modifier"] == "cautious"
    _close(call("POST", "/v1/users/dana/events", {"type": "promise_kept"})[1]["state"], trust=0.56)

    # Twelve quiet hours: grudge halves below the cautious threshold; no more crisis flag.
    clock.advance(timedelta(hours=12))
    quiet = state()
    _close(quiet, trust=0.56, sentiment=0.402906, grudge=0.271339, familiarity=0.045)
    assert quiet["tone_grudge_modifier"] is None and quiet["crisis_open"] is False
    assert say(HELLO)["safety"] == {"crisis": False}

    status, events = call("GET", "/v1/users/dana/events")
    assert [e["type"] for e in events["events"]] == ["promise_kept", "crisis_resolved", "broken_promise"]
    assert events["events"][2]["note"] == "missed the deadline"


def test_reading_the_state_writes_nothing(call, clock: FixedClock) -> None:  # type: ignore[no-untyped-def]
    exchange(call, SHOUTING)
    clock.advance(timedelta(hours=3))
    first = call("GET", "/v1/users/dana/state")[1]
    clock.advance(timedelta(hours=9))
    later = call("GET", "/v1/users/dana/state")[1]
    assert abs(later["grudge"] - 0.15 / 2) < 5e-4  # 12 h after, as if never read at 3 h
    assert first["last_updated"] == later["last_updated"]


def test_unknown_event_type_is_a_400_listing_the_known_ones(call) -> None:  # type: ignore[no-untyped-def]
    status, body = call("POST", "/v1/users/dana/events", {"type": "hug"})
    assert status == 400 and body["error"] == "invalid_input"
    for known in ("broken_promise", "promise_kept", "crisis_resolved"):
        assert known in body["message"]
    assert call("GET", "/v1/users/dana/events")[1]["events"] == []
    assert call("POST", "/v1/users/dana/events", {"type": "promise_kept", "mood": 1})[0] == 422
    assert call("POST", "/v1/users/dana/events", {"type": "promise_kept", "note": "x" * 1001})[0] == 400


def test_recording_through_interactions_updates_state_profile_and_metadata(call) -> None:  # type: ignore[no-untyped-def]
    status, recorded = call(
        "POST",
        "/v1/users/dana/interactions",
        {
            "messages": [
                {"role": "user", "content": "WHY IS THIS STILL BROKEN? THIS IS RIDICULOUS!!"},
                {"role": "assistant", "content": "I'm sorry, that is frustrating. Let's look at the logs."},
            ],
            # A client cannot set the detected signals itself: the enricher's keys win.
            "metadata": {"intent": "small_talk", "source": "crm"},
        },
    )
    assert status == 201
    metadata = recorded["interaction"]["metadata"]
    assert metadata["detected_emotions"] == ["anger"] and metadata["intent"] == "question"
    assert metadata["signals"]["shouting"] is True and metadata["source"] == "crm"
    state = call("GET", "/v1/users/dana/state")[1]
    _close(state, trust=0.51, grudge=0.15, familiarity=0.005)
    assert state["profile"]["interaction_count"] == 1 and state["profile"]["plan_tier"] == "community"


def test_process_without_a_model_records_nothing_itself(call) -> None:  # type: ignore[no-untyped-def]
    for _ in range(2):
        processed = call(
            "POST", "/v1/process", {"user_id": "dana", "message": "You ignored my boss Sarah again, ridiculous!!"}
        )[1]
    # Each answer is what the exchange would leave; none was recorded, so none counted.
    _close(processed["user"], trust=0.51, grudge=0.15)
    assert processed["memory"]["interaction_count"] == 1
    assert call("GET", "/v1/users/dana/history")[1]["interactions"] == []
    assert call("GET", "/v1/users/dana/state")[1]["profile"] is None
    assert call("GET", "/v1/users/dana/people")[1]["people"] == []


def test_state_and_people_are_fenced_by_tenant(call) -> None:  # type: ignore[no-untyped-def]
    exchange(call, "You ignored my boss Sarah again, ridiculous!!")
    other = call("GET", "/v1/users/dana/state", tenant="tenant-b")[1]
    _close(other, trust=0.5, grudge=0.0)
    assert other["profile"] is None
    assert call("GET", "/v1/users/dana/people", tenant="tenant-b")[1]["people"] == []
    assert call("GET", "/v1/users/dana/people/sarah", tenant="tenant-b")[0] == 404
    assert call("GET", "/v1/users/dana/people/sarah")[0] == 200


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"user_id": "dana", "message": "   "}, 400, "invalid_input"),
        ({"user_id": "dana", "message": "x" * 16_001}, 400, "invalid_input"),
        ({"user_id": "bad#id", "message": "hi"}, 400, "invalid_input"),
        ({"message": "hi"}, 422, "validation_error"),
        ({"user_id": "dana", "message": "hi", "mood": "sad"}, 422, "validation_error"),
    ],
)
def test_bad_process_requests(call, body: dict, status: int, code: str) -> None:  # type: ignore[no-untyped-def]
    got, payload = call("POST", "/v1/process", body)
    assert (got, payload["error"]) == (status, code), payload
    assert call("GET", "/v1/users/dana/history")[1]["interactions"] == []


def test_state_before_any_interaction_starts_at_the_defaults(call) -> None:  # type: ignore[no-untyped-def]
    body = call("GET", "/v1/users/nobody/state")[1]
    assert body["as_of"] == START.isoformat().replace("+00:00", "Z")
    assert body["last_updated"] == {"trust": None, "sentiment": None, "grudge": None, "familiarity": None}
