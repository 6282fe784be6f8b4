"""API keys have a life: issued (with an expiry or not), listed without their secret, revoked, rotated with a grace,
and the seeded ones follow the settings. On both stores."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from rapport.clock import FixedClock
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
