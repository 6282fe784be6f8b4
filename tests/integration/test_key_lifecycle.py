"""API keys have a life: issued (with an expiry or not), listed without their secret, revoked, rotated with a grace,
and the seeded ones follow the settings. On both stores."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from rapport.adapters.dynamodb import records
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.clock import FixedClock
from rapport.domain.access import LEGACY_SCOPES, ApiScope
from rapport.domain.models import ApiKeyRecord
from rapport.errors import InvalidInputError, NotFoundError
from rapport.services.auth import ApiKeyAuthenticator, hash_key
from tests.conftest import START


@pytest.fixture
def auth(any_store: Any) -> ApiKeyAuthenticator:
    return ApiKeyAuthenticator(any_store, FixedClock(START), record_use=True)


def test_issue_list_revoke(auth: ApiKeyAuthenticator) -> None:
    key = auth.issue_key("tenant-a", "ci")
    other = auth.issue_key("tenant-b", "ci")
    assert auth.tenant_for_key(key) == "tenant-a"
    listed = auth.list_keys("tenant-a")
    assert [(r.key_id, r.name) for r in listed] == [(hash_key(key)[:12], "ci")]
    assert listed[0].last_used_at is not None  # the use was noted (to the hour)
    with pytest.raises(NotFoundError):
        auth.revoke("tenant-a", hash_key(other)[:12])  # another tenant's key is not found
    with pytest.raises(InvalidInputError):
        auth.revoke("tenant-a", "abc")  # too short to name a key
    auth.revoke("tenant-a", listed[0].key_id)
    assert auth.tenant_for_key(key) is None
    assert auth.tenant_for_key(other) == "tenant-b"
    assert auth.list_keys("tenant-a")[0].revoked_at is not None


def test_expiry_and_rotation_with_a_grace(auth: ApiKeyAuthenticator) -> None:
    clock: FixedClock = auth._clock  # type: ignore[assignment]
    with pytest.raises(InvalidInputError):
        auth.issue_key("tenant-a", expires_at=START - timedelta(seconds=1))
    short = auth.issue_key("tenant-a", "short", expires_at=START + timedelta(days=1))
    old = auth.issue_key("tenant-a", "app")
    new, _ = auth.rotate("tenant-a", hash_key(old)[:12], grace=timedelta(hours=2))
    assert auth.tenant_for_key(new) == auth.tenant_for_key(old) == "tenant-a"
    clock.advance(timedelta(hours=3))
    assert auth.tenant_for_key(old) is None and auth.tenant_for_key(new) == "tenant-a"
    assert auth.tenant_for_key(short) == "tenant-a"
    clock.advance(timedelta(days=1))
    assert auth.tenant_for_key(short) is None
    now_gone, _ = auth.rotate("tenant-a", hash_key(new)[:12], grace=timedelta(0))
    assert auth.tenant_for_key(new) is None and auth.tenant_for_key(now_gone) == "tenant-a"


def test_seeded_keys_follow_the_settings(auth: ApiKeyAuthenticator) -> None:
    auth.reconcile_seeded([("seed-one", "tenant-a"), ("seed-two", "tenant-b")])
    assert auth.tenant_for_key("seed-two") == "tenant-b"
    issued = auth.issue_key("tenant-b", "by-hand")
    revoked = auth.reconcile_seeded([("seed-one", "tenant-a")])
    assert [r.key_hash for r in revoked] == [hash_key("seed-two")]
    assert auth.tenant_for_key("seed-two") is None
    assert auth.tenant_for_key("seed-one") == "tenant-a" and auth.tenant_for_key(issued) == "tenant-b"
    auth.reconcile_seeded([("seed-two", "tenant-b")])  # listed again: it works again
    assert auth.tenant_for_key("seed-two") == "tenant-b" and auth.tenant_for_key("seed-one") is None


def test_scopes_are_stored_rotated_with_the_key_and_default_to_admin(auth: ApiKeyAuthenticator, any_store: Any) -> None:
    reader = auth.issue_key("tenant-a", "reader", scopes=[ApiScope.MEMORIES_READ, ApiScope.KNOWLEDGE_WRITE])
    record = auth.identify(reader)
    assert record is not None and record.scopes == {ApiScope.MEMORIES_READ, ApiScope.KNOWLEDGE_WRITE}
    # a key issued without scopes holds admin: every scope, as every key could before keys had scopes
    plain = auth.identify(auth.issue_key("tenant-a", "plain"))
    assert plain is not None and plain.scopes == LEGACY_SCOPES == {ApiScope.ADMIN}
    # the replacement of a rotated key may do what the old one could, no more
    replacement, _ = auth.rotate("tenant-a", record.key_id, grace=timedelta(0))
    rotated = auth.identify(replacement)
    assert rotated is not None and rotated.scopes == record.scopes
    with pytest.raises(InvalidInputError, match="at least one scope"):
        auth.issue_key("tenant-a", "none", scopes=[])


def test_a_key_stored_before_keys_had_scopes_reads_as_admin(any_store: Any) -> None:
    # Given a key record as the store held it before scopes (no scopes attribute at all)
    record = ApiKeyRecord(tenant_id="tenant-a", key_hash=hash_key("old-key"), created_at=START)
    if isinstance(any_store, SqliteMemoryStore):
        body = json.loads(record.model_dump_json())
        del body["scopes"]
        with any_store._transaction() as conn:
            conn.execute(
                "INSERT INTO api_keys (key_hash, tenant_id, body) VALUES (?, ?, ?)",
                (record.key_hash, record.tenant_id, json.dumps(body)),
            )
    else:
        item = records.api_key_to_item(record)
        del item["scopes"]
        any_store._table.put_item(Item=item)
    # Then it still works, with every scope
    found = ApiKeyAuthenticator(any_store, FixedClock(START)).identify("old-key")
    assert found is not None and found.scopes == {ApiScope.ADMIN}
