"""Hostile input through the Lambda resolver: every body, query or method a client can send answers a 4xx
`{error, message}` and stores nothing, never a 500 and never a value the API cannot answer as JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rapport.api.app import create_lambda_app
from rapport.composition.services import Services
from tests.integration.api_events import FakeLambdaContext, rest_event

pytestmark = pytest.mark.integration

MEMORIES = "/v1/users/u1/memories"
DEEP = '{"a":' * 1000 + "1" + "}" * 1000


def _memory_with(fragment: str) -> str:
    return '{"content": "x", "domain": "user", "metadata": {"v": ' + fragment + "}}"


@pytest.fixture
def resolve(services: Services):  # type: ignore[no-untyped-def]
    app = create_lambda_app(services)

    def _resolve(method: str, url: str, **kw: Any) -> dict[str, Any]:
        return app.resolve(rest_event(method, url, **kw), FakeLambdaContext())

    return _resolve


def _stored(resolve) -> int:  # type: ignore[no-untyped-def]
    return int(json.loads(resolve("GET", MEMORIES)["body"])["total_stored"])


@pytest.mark.parametrize(
    ("method", "url", "kwargs", "status", "code"),
    [
        # Bytes that are not UTF-8, as the local gateway (or a binary media type) hands them over: base64'd
        ("POST", MEMORIES, {"binary_body": b'{"content": "\xff\xfe", "domain": "user"}'}, 400, "malformed_json"),
        ("POST", "/v1/process", {"binary_body": b"\x80\x81 not text"}, 400, "malformed_json"),
        # Recall cut at zero or fewer hits
        ("GET", f"{MEMORIES}?query=dog&limit=0", {}, 400, "invalid_input"),
        ("GET", f"{MEMORIES}?query=dog&limit=-5", {}, 400, "invalid_input"),
        ("GET", f"{MEMORIES}?query=dog&limit=100000", {}, 400, "invalid_input"),
        # Media types no route reads: multipart (with and without a boundary), a form, XML
        ("POST", MEMORIES, {"raw_body": "x", "headers": {"Content-Type": "multipart/form-data"}}, 415, None),
        (
            "POST",
            MEMORIES,
            {"raw_body": "--b\r\n\r\n--b--", "headers": {"Content-Type": "multipart/form-data; boundary=b"}},
            415,
            None,
        ),
        (
            "POST",
            MEMORIES,
            {"raw_body": "content=x", "headers": {"Content-Type": "application/x-www-form-urlencoded"}},
            415,
            None,
        ),
        ("PATCH", f"{MEMORIES}/m1", {"raw_body": "<a/>", "headers": {"Content-Type": "application/xml"}}, 415, None),
        # JSON Python would read but no later step can handle
        ("POST", MEMORIES, {"raw_body": _memory_with(DEEP)}, 400, "malformed_json"),
        ("POST", "/v1/process", {"raw_body": "[" * 5000 + "]" * 5000}, 400, "malformed_json"),
        ("POST", "/v1/knowledge", {"raw_body": DEEP}, 400, "malformed_json"),
        ("POST", MEMORIES, {"raw_body": _memory_with("9" * 5000)}, 400, "malformed_json"),
        ("POST", MEMORIES, {"raw_body": _memory_with("1e999")}, 400, "malformed_json"),
        ("POST", MEMORIES, {"raw_body": '{"content": "x\\ud800y", "domain": "user"}'}, 400, "malformed_json"),
        ("POST", MEMORIES, {"raw_body": _memory_with('{"\\udfff": 1}')}, 400, "malformed_json"),
        # NaN and Infinity are not JSON: refused, never stored to be answered as null or as invalid JSON
        ("POST", MEMORIES, {"raw_body": _memory_with("NaN")}, 400, "malformed_json"),
        ("POST", MEMORIES, {"raw_body": _memory_with("-Infinity")}, 400, "malformed_json"),
        (
            "POST",
            MEMORIES,
            {"raw_body": '{"content": "x", "domain": "user", "importance": NaN}'},
            400,
            "malformed_json",
        ),
        # A moment no rule can compute with
        (
            "POST",
            "/v1/users/u1/interactions",
            {"body": {"messages": [{"role": "user", "content": "hi"}], "occurred_at": "0001-01-01T00:00:00+01:00"}},
            422,
            "validation_error",
        ),
        (
            "POST",
            MEMORIES,
            {"body": {"content": "x", "domain": "user", "occurred_at": "9999-12-31T23:59:59-01:00"}},
            422,
            "validation_error",
        ),
    ],
)
def test_hostile_input_gets_a_4xx_error_body_and_stores_nothing(  # type: ignore[no-untyped-def]
    resolve, method: str, url: str, kwargs: dict[str, Any], status: int, code: str | None
) -> None:
    response = resolve(method, url, **kwargs)
    payload = json.loads(response["body"])
    assert response["statusCode"] == status, payload
    expected = code or ("unsupported_media_type" if status == 415 else "malformed_json")
    assert payload["error"] == expected and payload["message"], payload
    assert _stored(resolve) == 0


def test_the_json_error_says_what_is_wrong(resolve) -> None:  # type: ignore[no-untyped-def]
    def message(raw: str) -> str:
        return str(json.loads(resolve("POST", MEMORIES, raw_body=raw)["body"])["message"])

    assert "NaN is not a JSON number" in message(_memory_with("NaN"))
    assert "deeper than 64 levels" in message(_memory_with(DEEP))
    assert "more than 100 digits" in message(_memory_with("9" * 5000))
    assert "lone UTF-16 surrogate" in message('{"content": "\\ud800", "domain": "user"}')
    assert "not UTF-8 text" in str(json.loads(resolve("POST", MEMORIES, binary_body=b'"\xff"')["body"])["message"])
    assert "multipart/form-data" in str(
        json.loads(resolve("POST", MEMORIES, raw_body="x", headers={"Content-Type": "multipart/form-data"})["body"])[
            "message"
        ]
    )


def test_a_valid_surrogate_pair_and_a_long_but_bounded_document_are_accepted(resolve) -> None:  # type: ignore[no-untyped-def]
    # An emoji escaped as its UTF-16 pair is one character, and 60 levels of nesting is within bounds
    nested = '{"a":' * 60 + "1" + "}" * 60
    raw = '{"content": "likes \\ud83d\\ude00", "domain": "user", "metadata": ' + nested + "}"
    response = resolve("POST", MEMORIES, raw_body=raw)
    assert response["statusCode"] == 201, response["body"]
    assert json.loads(response["body"])["content"] == "likes 😀"


@pytest.mark.parametrize(
    ("method", "url", "allowed"),
    [
        ("TRACE", MEMORIES, "GET, POST"),
        ("PUT", MEMORIES, "GET, POST"),
        ("POST", f"{MEMORIES}/m1", "DELETE, GET, PATCH"),
        ("DELETE", "/v1/health", "GET"),
    ],
)
def test_a_known_path_with_another_method_is_a_405_naming_the_allowed_ones(  # type: ignore[no-untyped-def]
    resolve, method: str, url: str, allowed: str
) -> None:
    response = resolve(method, url)
    assert response["statusCode"] == 405
    assert response["multiValueHeaders"]["Allow"] == [allowed]
    payload = json.loads(response["body"])
    assert payload["error"] == "method_not_allowed" and allowed in payload["message"]


def test_an_unknown_path_is_still_a_404(resolve) -> None:  # type: ignore[no-untyped-def]
    response = resolve("TRACE", "/v1/nowhere")
    assert response["statusCode"] == 404 and json.loads(response["body"])["error"] == "route_not_found"
