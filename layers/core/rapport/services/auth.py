"""API keys: a key maps to one tenant; only its SHA-256 is ever stored."""

from __future__ import annotations

import hashlib
import secrets

from rapport.clock import Clock, SystemClock
from rapport.domain.models import ApiKeyRecord
from rapport.ports.store import MemoryStore


def hash_key(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


class ApiKeyAuthenticator:
    def __init__(self, store: MemoryStore, clock: Clock | None = None) -> None:
        self._store = store
        self._clock = clock or SystemClock()

    def tenant_for_key(self, raw_key: str) -> str | None:
        if not raw_key:
            return None
        record = self._store.find_api_key(hash_key(raw_key))
        return record.tenant_id if record else None

    def register_key(self, raw_key: str, tenant_id: str, name: str = "default") -> None:
        """Store a key chosen elsewhere (seeded from settings, or issued below)."""
        self._store.put_api_key(
            ApiKeyRecord(tenant_id=tenant_id, key_hash=hash_key(raw_key), name=name, created_at=self._clock.now())
        )

    def issue_key(self, tenant_id: str, name: str = "default") -> str:
        """A new random key for the tenant; the caller shows it once, it is never stored in clear."""
        raw_key = "rk_" + secrets.token_urlsafe(32)
        self.register_key(raw_key, tenant_id, name)
        return raw_key
