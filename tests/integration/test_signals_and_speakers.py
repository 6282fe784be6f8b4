"""Through the Lambda app: crisis and worry read right in the state, feelings about a person said by pronoun reach
the person, and the assistant's own replies are weighed below and rendered apart from what the person said."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from rapport.api.app import create_lambda_app
from rapport.composition.services import Services
from tests.integration.api_events import FakeLambdaContext, rest_event

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _pipeline_settles(services: Services) -> Iterator[None]:
    yield
    drain = getattr(services.pipeline_trigger, "drain", None)
    if drain is not None:
        drain(timeout=60)


@pytest.fixture
def call(services: Services):  # type: ignore[no-untyped-def]
    app = create_lambda_app(services)

    def _call(method: str, url: str, body: Any = None) -> tuple[int, Any]:
        response = app.resolve(rest_event(method, url, body), FakeLambdaContext())
        return response["statusCode"], json.loads(response["body"]) if response["body"] else None

    return _call


def record(call, user: str, *turns: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    messages = [{"role": role, "content": content} for role, content in turns]
    status, body = call("POST", f"/v1/users/{user}/interactions", {"messages": messages})
    assert status == 201, body


def state(call, user: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    status, body = call("GET", f"/v1/users/{user}/state")
    assert status == 200, body
    return body  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    "crisis",
    [
        "Everyone would honestly be better off without me. Thanks for listening.",
        "I just want it all to end :)",
        "Sometimes I think about killing myself, but today was a nice day.",
    ],
)
def test_a_crisis_after_friendly_talk_lowers_the_mood_and_opens_the_flag(call, crisis: str) -> None:  # type: ignore[no-untyped-def]
    record(call, "ana", ("user", "Thanks so much, this is wonderful!"), ("assistant", "Glad to help."))
    before = state(call, "ana")["sentiment"]
    assert 0.5 < before < 1.0

    status, processed = call("POST", "/v1/process", {"user_id": "ana", "message": crisis})

    assert status == 200, processed
    assert processed["safety"] == {"crisis": True}
    assert processed["user"]["sentiment"] < before
    assert "## Safety" in processed["context"]["system_prompt"]


def test_two_friendly_interactions_leave_room_above(call) -> None:  # type: ignore[no-untyped-def]
    record(call, "ben", ("user", "This is amazing, thank you so much!"), ("assistant", "Happy to help!"))
    record(call, "ben", ("user", "You're awesome, it works perfectly now!"), ("assistant", "Great!"))
    assert 0.75 < state(call, "ben")["sentiment"] < 0.99


@pytest.mark.parametrize(
    "worry",
    [
        "I keep waking up at night worrying about my operation on Thursday.",
        "I'm terrified of the surgery tomorrow and I can't sleep.",
    ],
)
def test_a_patients_worry_adds_no_grudge(call, worry: str) -> None:  # type: ignore[no-untyped-def]
    record(call, "cai", ("user", worry), ("assistant", "That sounds hard. Do you want to talk it through?"))
    reading = state(call, "cai")
    assert reading["grudge"] == 0.0 and reading["tone_grudge_modifier"] is None
    assert reading["sentiment"] < 0.5


@pytest.mark.parametrize(
    ("said", "slug"),
    [
        ("My boss moved the deadline again. I'm so fed up with him.", "boss"),
        ("My manager Priya cancelled my leave. Honestly I can't stand her, she is awful.", "priya"),
    ],
)
def test_a_feeling_said_by_pronoun_reaches_the_person(call, said: str, slug: str) -> None:  # type: ignore[no-untyped-def]
    record(call, "dev", ("user", said), ("assistant", "That sounds frustrating."))
    status, person = call("GET", f"/v1/users/dev/people/{slug}")
    assert status == 200, person
    assert person["sentiment"] < 0 and person["sentiment_label"] == "negative"
    assert person["mention_count"] >= 2


def test_the_assistants_reply_is_weighed_below_and_rendered_apart(call) -> None:  # type: ignore[no-untyped-def]
    # Given the person said something and the assistant repeated it back in more of the same words
    record(
        call,
        "eve",
        ("user", "I am allergic to peanuts, so no peanut recipes for me."),
        ("assistant", "Noted: no peanut recipes for you, and no peanuts, peanut butter or peanut oil in any recipe."),
    )

    status, processed = call("POST", "/v1/process", {"user_id": "eve", "message": "any peanut recipe ideas?"})

    assert status == 200, processed
    recalled = [m["text"] for m in processed["memory"]["relevant_memories"]]
    assert recalled and recalled[0] == "I am allergic to peanuts, so no peanut recipes for me.", recalled
    prompt = processed["context"]["system_prompt"]
    remembered = prompt.split("### What you remember about them", 1)[1].split("###", 1)[0]
    assert "they said: I am allergic to peanuts" in remembered
    assert "peanut oil" not in remembered  # the reply is no fact about them...
    assert "### What you told them before (your own replies, not facts about them)" in prompt
    assert "you said: Noted: no peanut recipes for you" in prompt  # ...but it is still there, as its own words


def test_recall_says_why_a_reply_ranks_lower(call) -> None:  # type: ignore[no-untyped-def]
    record(
        call,
        "fay",
        ("user", "My flight to Oslo is on Friday."),
        ("assistant", "Your flight to Oslo is on Friday: I will remind you about the Oslo flight."),
    )
    status, body = call("GET", "/v1/users/fay/memories?query=Oslo%20flight&limit=5")
    assert status == 200, body
    episodes = [m for m in body["memories"] if m["type"] == "episode"]
    assert [m["trust"] for m in episodes][:2] == ["user_said", "assistant_said"]
    reply = next(m for m in episodes if m["trust"] == "assistant_said")
    assert any("assistant's own reply" in reason for reason in reply["match_reasons"])
