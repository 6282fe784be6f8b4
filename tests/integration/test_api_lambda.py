"""The HTTP API as Lambda runs it: REST proxy events with the authorizer's tenant, through the real resolver."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rapport.api.app import create_lambda_app
from rapport.composition.services import Services
from tests.integration.api_events import FakeLambdaContext, rest_event

pytestmark = pytest.mark.integration


@pytest.fixture
def call(services: Services):  # type: ignore[no-untyped-def]
    app = create_lambda_app(services)

    def _call(method: str, url: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        response = app.resolve(rest_event(method, url, body, **kw), FakeLambdaContext())
        payload = response["body"]
        return response["statusCode"], (json.loads(payload) if payload else None)

    return _call


def test_memories_round_trip_through_the_lambda_app(call) -> None:  # type: ignore[no-untyped-def]
    status, created = call("POST", "/v1/users/u1/memories", {"content": "Has a dog named Max", "domain": "user"})
    assert status == 201 and created["type"] == "fact" and "tenant_id" not in created
    status, _ = call(
        "POST",
        "/v1/users/u1/memories",
        {
            "content": "We fixed the CORS issue: it was the proxy config",
            "domain": "relational",
            "type": "collaboration_outcome",
        },
    )
    assert status == 201

    status, recalled = call("GET", "/v1/users/u1/memories?query=dog%20Max&domain=user")
    assert status == 200 and recalled["total_stored"] == 2
    assert [m["id"] for m in recalled["memories"]] == [created["id"]]
    assert {"similarity", "score", "match_strength", "match_reasons"} <= recalled["memories"][0].keys()

    status, listed = call("GET", "/v1/users/u1/memories?domain=relational&limit=10")
    assert status == 200 and [m["type"] for m in listed["memories"]] == ["collaboration_outcome"]

    status, patched = call("PATCH", f"/v1/users/u1/memories/{created['id']}", {"importance": 0.9})
    assert status == 200 and patched["importance"] == 0.9
    assert call("GET", f"/v1/users/u1/memories/{created['id']}")[1]["importance"] == 0.9
    assert call("DELETE", f"/v1/users/u1/memories/{created['id']}")[0] == 204
    assert call("GET", f"/v1/users/u1/memories/{created['id']}")[0] == 404


def test_another_tenants_memory_is_a_404(call) -> None:  # type: ignore[no-untyped-def]
    _, created = call("POST", "/v1/users/u1/memories", {"content": "secret", "domain": "user"})
    for method, body in (("GET", None), ("PATCH", {"importance": 0.1}), ("DELETE", None)):
        status, payload = call(method, f"/v1/users/u1/memories/{created['id']}", body, tenant="tenant-b")
        assert status == 404, (method, payload)
    assert call("GET", "/v1/users/u1/memories?query=secret", tenant="tenant-b")[1]["memories"] == []


def test_a_request_without_an_authorized_tenant_is_a_401(call) -> None:  # type: ignore[no-untyped-def]
    status, payload = call("GET", "/v1/users/u1/memories", tenant=None)
    assert status == 401 and payload["error"] == "unauthorized"


def test_health_and_openapi_need_no_tenant(call) -> None:  # type: ignore[no-untyped-def]
    assert call("GET", "/v1/health", tenant=None) == (200, {"status": "ok", "version": "0.1.0"})
    status, spec = call("GET", "/v1/openapi.json", tenant=None)
    assert status == 200 and "/v1/users/{user_id}/memories" in spec["paths"]


@pytest.mark.parametrize(
    ("method", "url", "kwargs", "status", "code"),
    [
        ("POST", "/v1/users/u1/memories", {"raw_body": '{"content": "x",'}, 400, "malformed_json"),
        ("POST", "/v1/users/u1/memories", {"body": {"content": "x", "domain": "feelings"}}, 422, "validation_error"),
        (
            "POST",
            "/v1/users/u1/memories",
            {"body": {"content": "x", "domain": "user", "typo": 1}},
            422,
            "validation_error",
        ),
        (
            "POST",
            "/v1/users/u1/memories",
            {"body": {"content": "x", "domain": "user", "type": "mood"}},
            400,
            "invalid_input",
        ),
        ("POST", "/v1/users/u1/memories", {"body": {"content": "x" * 9000, "domain": "user"}}, 400, "invalid_input"),
        ("POST", "/v1/users/bad%23id/memories", {"body": {"content": "x", "domain": "user"}}, 400, "invalid_input"),
        ("GET", "/v1/users/u1/memories?limit=0", {}, 400, "invalid_input"),
        ("GET", "/v1/users/u1/memories?limit=many", {}, 422, "validation_error"),
        ("GET", "/v1/users/u1/memories?cursor=%%%", {}, 400, "invalid_input"),
        (
            "POST",
            "/v1/users/u1/interactions",
            {"body": {"messages": [{"role": "robot", "content": "x"}]}},
            422,
            "validation_error",
        ),
        ("POST", "/v1/users/u1/interactions", {"body": {"messages": []}}, 400, "invalid_input"),
        # An array where one object is expected is refused whole, never read as its first element
        (
            "POST",
            "/v1/users/u1/memories",
            {"body": [{"content": "a", "domain": "user"}, {"content": "b", "domain": "user"}]},
            400,
            "invalid_input",
        ),
        ("POST", "/v1/process", {"body": [{"user_id": "u1", "message": "hi"}]}, 400, "invalid_input"),
        ("GET", "/v1/nowhere", {}, 404, "route_not_found"),
    ],
)
def test_bad_requests_get_a_clear_4xx_and_write_nothing(  # type: ignore[no-untyped-def]
    call, method: str, url: str, kwargs: dict, status: int, code: str
) -> None:
    got_status, payload = call(method, url, **kwargs)
    assert (got_status, payload["error"]) == (status, code), payload
    assert payload["message"]
    assert call("GET", "/v1/users/u1/memories")[1]["total_stored"] == 0


def test_history_and_erasure(call) -> None:  # type: ignore[no-untyped-def]
    messages = [{"role": "user", "content": "I prefer morning meetings"}, {"role": "assistant", "content": "Noted"}]
    status, recorded = call("POST", "/v1/users/u1/interactions", {"messages": messages, "channel": "web"})
    assert status == 201 and len(recorded["memories"]) == 2
    status, history = call("GET", "/v1/users/u1/history?limit=5")
    assert status == 200 and history["interactions"][0]["id"] == recorded["interaction"]["id"]

    # The episodes, and what the ingestion pipeline extracted ("User prefers morning meetings")
    stored = len(recorded["memories"]) + len(recorded["pipeline"]["memories"])
    assert [m["content"] for m in recorded["pipeline"]["memories"]] == ["User prefers morning meetings"]

    status, erased = call("DELETE", "/v1/privacy/erase/u1")
    assert status == 200 and erased["counts"]["memories"] == stored and erased["counts"]["interactions"] == 1
    assert call("GET", "/v1/users/u1/history")[1]["interactions"] == []
    status, audit = call("GET", "/v1/audit")
    assert audit["events"][0]["id"] == erased["audit_event_id"]
    assert audit["events"][0]["actor"] == "key-of-tenant-a"
    assert call("GET", "/v1/audit", tenant="tenant-b")[1]["events"] == []


def test_a_batch_of_memories_stores_the_valid_ones_with_a_result_each(call) -> None:  # type: ignore[no-untyped-def]
    batch = {
        "memories": [
            {"content": "Has a dog named Max", "domain": "user"},
            {"content": "Likes jazz", "domain": "user", "type": "moods"},
            {"content": "Bullet points work better with this user", "domain": "relational"},
        ]
    }
    status, body = call("POST", "/v1/users/u1/memories/batch", batch)
    assert status == 201, body
    assert (body["created"], body["invalid"]) == (2, 1)
    assert [r["status"] for r in body["results"]] == ["created", "invalid", "created"]
    assert "moods" in body["results"][1]["message"]
    assert body["results"][0]["memory"]["content"] == "Has a dog named Max"
    listed = call("GET", "/v1/users/u1/memories")[1]
    assert listed["total_stored"] == 2
    assert {m["id"] for m in listed["memories"]} == {
        body["results"][0]["memory"]["id"],
        body["results"][2]["memory"]["id"],
    }


def test_a_batch_with_nothing_valid_or_too_many_stores_nothing(call) -> None:  # type: ignore[no-untyped-def]
    status, body = call("POST", "/v1/users/u1/memories/batch", {"memories": [{"content": " ", "domain": "user"}]})
    assert (status, body["error"]) == (400, "invalid_input") and body["details"][0]["status"] == "invalid"
    too_many = {"memories": [{"content": f"fact {i}", "domain": "user"} for i in range(101)]}
    status, body = call("POST", "/v1/users/u1/memories/batch", too_many)
    assert (status, body["error"]) == (422, "validation_error")
    assert call("GET", "/v1/users/u1/memories")[1]["total_stored"] == 0
