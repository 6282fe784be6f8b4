"""The audit trail: every write and privileged read recorded through the API (the Lambda function's app), queried by
end user and time, paged, over both stores, and holding no content, no raw user id and no key (a byte check)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from rapport.adapters.dynamodb.store import DynamoDbMemoryStore
from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.api.app import create_lambda_app
from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import AuditAction, AuditEvent
from rapport.domain.scope import Scope
from rapport.errors import StorageError
from rapport.ids import new_id
from rapport.ports.store import MemoryStore
from rapport.services.audit import AuditQuery
from rapport.settings import Settings
from tests.conftest import START
from tests.integration.api_events import FakeLambdaContext, rest_event
from tests.integration.conftest import TABLE_NAME

pytestmark = pytest.mark.integration

T = "tenant-a"
SECRET_WORDS = ("Marguerite", "glaucoma", "Rua das Flores")


@pytest.fixture(params=["sqlite", "dynamodb"])
def stack(request: pytest.FixtureRequest, settings: Settings, clock: FixedClock) -> Iterator[tuple[Services, Any]]:
    """The API's services over each store; the second item is what holds the audit items (the SQLite path, or the
    moto resource)."""
    embedder = HashingEmbedder(settings.hashing_dimensions)
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    store: MemoryStore
    if request.param == "dynamodb":
        resource = request.getfixturevalue("moto_dynamodb")
        store, holder = DynamoDbMemoryStore(TABLE_NAME, dynamodb_resource=resource), resource
    else:
        store, holder = SqliteMemoryStore(settings.sqlite_path), settings.sqlite_path
    yield build_services(settings, clock=clock, store=store, index=index, embedder=embedder), holder
    index.close()
    if isinstance(store, SqliteMemoryStore):
        store.close()


def _caller(services: Services):  # type: ignore[no-untyped-def]
    app = create_lambda_app(services)

    def call(method: str, url: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        response = app.resolve(rest_event(method, url, body, **kw), FakeLambdaContext())
        payload = response["body"]
        try:
            return response["statusCode"], json.loads(payload) if payload else None
        except ValueError:  # an export: JSON lines
            return response["statusCode"], payload

    return call


def test_writes_and_privileged_reads_are_queried_by_user_and_time(
    stack: tuple[Services, Any], clock: FixedClock
) -> None:
    services, _ = stack
    call = _caller(services)
    # Given writes about two end users an hour apart, a privileged read, and reads that are not audited
    status, made = call("POST", "/v1/users/ana/memories", {"content": "Has a dog named Max", "domain": "user"})
    assert status == 201
    clock.advance(timedelta(hours=1))
    call("PATCH", f"/v1/users/ana/memories/{made['id']}", {"importance": 0.8})
    call("POST", "/v1/users/ben/memories", {"content": "Plays chess", "domain": "user"})
    call("GET", "/v1/users/ana/memories")  # a read of memories: not audited
    call("GET", "/v1/users/ana/memories/missing")
    clock.advance(timedelta(hours=1))
    call("GET", "/v1/users/ana/export")  # privileged
    call("DELETE", "/v1/users/ana/memories/missing")  # a failed write is recorded with its status
    call("GET", "/v1/keys")  # privileged, about no end user

    # When the tenant reads its trail
    status, everything = call("GET", "/v1/audit?limit=100")
    assert status == 200
    ops = [(e["operation"], e["status"]) for e in everything["events"]]
    # Then every write and privileged read is there, newest first, with the status it answered (calls of one
    # instant in any order)
    assert sorted(ops) == sorted(
        [
            ("keys_list", 200),
            ("memories_delete", 404),
            ("users_export", 200),
            ("memories_update", 200),
            ("memories_add", 201),
            ("memories_add", 201),
        ]
    )
    assert [e["at"] for e in everything["events"]] == sorted((e["at"] for e in everything["events"]), reverse=True)
    assert ops[-1] == ("memories_add", 201)  # the first call, an hour before the others
    keys_event = next(e for e in everything["events"] if e["operation"] == "keys_list")
    assert keys_event["target_user_hash"] is None and keys_event["action"] == "privileged_read"
    assert keys_event["actor"] == f"key-of-{T}"

    # And one end user's events are found by their id (hashed as the trail names them)
    _, ana = call("GET", "/v1/audit?user_id=ana&limit=100")
    assert sorted(e["operation"] for e in ana["events"]) == [
        "memories_add",
        "memories_delete",
        "memories_update",
        "users_export",
    ]
    assert {e["target_user_hash"] for e in ana["events"]} == {Scope.of(T, "ana").user_hash}
    # bounded by time: since inclusive, until exclusive
    since = (START + timedelta(hours=1)).isoformat()
    until = (START + timedelta(hours=2)).isoformat()
    _, window = call("GET", f"/v1/audit?user_id=ana&since={_q(since)}&until={_q(until)}")
    assert [e["operation"] for e in window["events"]] == ["memories_update"]
    _, before = call("GET", f"/v1/audit?until={_q(since)}")
    assert [e["operation"] for e in before["events"]] == ["memories_add"]
    # another tenant sees none of it
    assert call("GET", "/v1/audit?user_id=ana", tenant="tenant-b")[1]["events"] == []


def _q(moment: str) -> str:
    return moment.replace("+", "%2B")


def test_an_erased_person_s_trail_is_still_found_by_their_id(stack: tuple[Services, Any]) -> None:
    services, _ = stack
    call = _caller(services)
    call("POST", "/v1/users/cleo/memories", {"content": "Allergic to peanuts", "domain": "user"})
    assert call("DELETE", "/v1/privacy/erase/cleo")[0] == 200
    _, trail = call("GET", "/v1/audit?user_id=cleo")
    assert [(e["action"], e["operation"]) for e in trail["events"]] == [("erase_user", None), ("write", "memories_add")]
    assert trail["events"][0]["counts"]["memories"] == 1


def test_pages_follow_the_cursor_within_the_filters(stack: tuple[Services, Any], clock: FixedClock) -> None:
    services, _ = stack
    for i in range(7):
        clock.advance(timedelta(minutes=1))
        user = "dan" if i % 2 == 0 else "eve"
        services.audit.record(
            T,
            actor="k",
            action=AuditAction.WRITE,
            operation=f"op{i}",
            user_hash=Scope.of(T, user).user_hash,
            status=200,
        )
    call = _caller(services)
    seen: list[str] = []
    cursor = ""
    for _ in range(10):
        _, page = call("GET", f"/v1/audit?user_id=dan&limit=2{cursor}")
        seen += [e["operation"] for e in page["events"]]
        assert len(page["events"]) <= 2
        if page["next_cursor"] is None:
            break
        cursor = f"&cursor={page['next_cursor']}"
    assert seen == ["op6", "op4", "op2", "op0"]


@pytest.mark.parametrize(
    ("query", "status", "says"),
    [
        ("since=2026-01-05T10:00:00Z&until=2026-01-05T09:00:00Z", 400, "since must be before until"),
        ("user_id=bad%20id", 400, "user_id"),
        ("limit=0", 400, "limit"),
        ("since=yesterday", 422, "since"),
        ("cursor=not-a-cursor", 400, "cursor"),
    ],
)
def test_a_bad_query_is_a_4xx_saying_what_to_fix(
    stack: tuple[Services, Any], query: str, status: int, says: str
) -> None:
    services, _ = stack
    services.audit.record(T, actor="k", action=AuditAction.WRITE, operation="op", user_hash=None, status=200)
    answered, body = _caller(services)("GET", f"/v1/audit?{query}")
    assert answered == status and says in body["message"], body


def _audit_bytes(holder: Any) -> bytes:
    """Every stored audit item, as bytes: the audit rows of the SQLite file, or the audit items of the table."""
    if isinstance(holder, Path):
        with sqlite3.connect(holder) as conn:
            rows = conn.execute("SELECT tenant_id, sort_key, body FROM audit_events").fetchall()
        assert rows
        return json.dumps(rows).encode()
    items = [item for item in holder.Table(TABLE_NAME).scan()["Items"] if str(item["pk"]).startswith("AUDIT#")]
    assert items
    return json.dumps(items, default=str).encode()


def test_audit_items_hold_no_content_no_user_id_and_no_key(stack: tuple[Services, Any]) -> None:
    services, holder = stack
    call = _caller(services)
    person = "marguerite.durand@example.com"
    call(
        "POST",
        f"/v1/users/{person}/interactions",
        {"messages": [{"role": "user", "content": "My aunt Marguerite has glaucoma and lives on Rua das Flores."}]},
    )
    call("POST", f"/v1/users/{person}/memories", {"content": "Aunt Marguerite: glaucoma", "domain": "user"})
    call("POST", "/v1/process", {"user_id": person, "message": "How is Marguerite's glaucoma on Rua das Flores?"})
    call("POST", "/v1/knowledge", {"nodes": [{"name": "Rua das Flores"}]})
    call("GET", f"/v1/users/{person}/export")
    raw = _audit_bytes(holder)
    assert len(services.audit.events(T, AuditQuery(limit=100)).items) >= 5
    for needle in (*SECRET_WORDS, person, "Bearer"):
        assert needle.encode() not in raw, needle
    assert Scope.of(T, person).user_hash.encode() in raw


def test_an_audit_store_failure_does_not_fail_the_answered_call(
    stack: tuple[Services, Any], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    services, _ = stack

    def broken(event: AuditEvent) -> None:
        raise StorageError("the table is throttling")

    monkeypatch.setattr(services.store, "put_audit_event", broken)
    status, made = _caller(services)("POST", "/v1/users/fay/memories", {"content": "Sings", "domain": "user"})
    assert status == 201 and made["content"] == "Sings"
    assert "audit event not stored" in caplog.text and "memories_add" in caplog.text
    assert "Sings" not in caplog.text


def test_events_without_an_operation_read_back_as_before(stack: tuple[Services, Any]) -> None:
    services, _ = stack
    legacy = AuditEvent(
        id=new_id(START),
        tenant_id=T,
        action=AuditAction.ERASE_USER,
        actor="api-key:default",
        target_user_hash=Scope.of(T, "gus").user_hash,
        at=START,
        counts={"memories": 2},
    )
    services.store.put_audit_event(legacy)
    (read,) = services.audit.events(T, AuditQuery(limit=5, user_id="gus")).items
    assert read.operation is None and read.status is None and read.counts == {"memories": 2}
