"""API keys: a key maps to one tenant and carries its scopes (what it may do); only its SHA-256 is ever stored. Keys
expire, are revoked and rotated; a revoked or expired key is refused everywhere the key is checked (the local gateway,
the AWS authorizer — whose cache can keep accepting it for up to its TTL, 5 minutes)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta

from rapport.clock import Clock, SystemClock
from rapport.domain.access import LEGACY_SCOPES, ApiScope
from rapport.domain.models import ApiKeyRecord
from rapport.errors import InvalidInputError, NotFoundError
from rapport.ports.store import MemoryStore

# How often a key in use records that it was used: once an hour is enough to find unused keys, and costs no write
# per request.
_LAST_USED_GRAIN = timedelta(hours=1)
SEEDED = "seeded"


def hash_key(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


class ApiKeyAuthenticator:
    def __init__(self, store: MemoryStore, clock: Clock | None = None, *, record_use: bool = False) -> None:
        """`record_use`: note when each key was last used (the local server). The AWS authorizer only reads the
        table, by design, so there a key's use shows in API Gateway's access logs (its principal is the key id)."""
        self._store = store
        self._clock = clock or SystemClock()
        self._record_use = record_use

    def tenant_for_key(self, raw_key: str) -> str | None:
        record = self.identify(raw_key)
        return record.tenant_id if record else None

    def identify(self, raw_key: str) -> ApiKeyRecord | None:
        """The usable key's record (its tenant and scopes), or None: unknown, revoked or expired."""
        if not raw_key:
            return None
        record = self._store.find_api_key(hash_key(raw_key))
        now = self._clock.now()
        if record is None or not record.usable(now):
            return None
        if self._record_use and (record.last_used_at is None or now - record.last_used_at >= _LAST_USED_GRAIN):
            record = record.model_copy(update={"last_used_at": now.replace(minute=0, second=0, microsecond=0)})
            self._store.put_api_key(record)
        return record

    def register_key(
        self,
        raw_key: str,
        tenant_id: str,
        name: str = "default",
        *,
        expires_at: datetime | None = None,
        scopes: Iterable[ApiScope] = LEGACY_SCOPES,
    ) -> ApiKeyRecord:
        """Store a key chosen elsewhere (seeded from settings, or issued below); registering it again revives it."""
        granted = frozenset(scopes)
        if not granted:
            raise InvalidInputError("a key needs at least one scope")
        now = self._clock.now()
        existing = self._store.find_api_key(hash_key(raw_key))
        record = ApiKeyRecord(
            tenant_id=tenant_id,
            key_hash=hash_key(raw_key),
            name=name,
            created_at=existing.created_at if existing and existing.tenant_id == tenant_id else now,
            expires_at=expires_at,
            last_used_at=existing.last_used_at if existing and existing.tenant_id == tenant_id else None,
            scopes=granted,
        )
        self._store.put_api_key(record)
        return record

    def issue_key(
        self,
        tenant_id: str,
        name: str = "default",
        *,
        expires_at: datetime | None = None,
        scopes: Iterable[ApiScope] = LEGACY_SCOPES,
    ) -> str:
        """A new random key for the tenant; the caller shows it once, it is never stored in clear."""
        if expires_at is not None and expires_at <= self._clock.now():
            raise InvalidInputError("the expiry must be in the future")
        raw_key = "rk_" + secrets.token_urlsafe(32)
        self.register_key(raw_key, tenant_id, name, expires_at=expires_at, scopes=scopes)
        return raw_key

    def list_keys(self, tenant_id: str) -> list[ApiKeyRecord]:
        return sorted(self._store.list_api_keys(tenant_id), key=lambda r: (r.created_at, r.key_hash))

    def revoke(self, tenant_id: str, key_id: str) -> ApiKeyRecord:
        record = self._find(tenant_id, key_id)
        if record.revoked_at is not None:
            return record
        revoked = record.model_copy(update={"revoked_at": self._clock.now()})
        self._store.put_api_key(revoked)
        return revoked

    def rotate(self, tenant_id: str, key_id: str, *, grace: timedelta) -> tuple[str, ApiKeyRecord]:
        """A new key with the old one's name and scopes; the old one keeps working for `grace` (0: stops now), so
        clients can move over without an outage."""
        old = self._find(tenant_id, key_id)
        if not old.usable(self._clock.now()):
            raise InvalidInputError(f"key {key_id} is revoked or expired: issue a new key instead")
        raw_key = self.issue_key(tenant_id, old.name, expires_at=old.expires_at, scopes=old.scopes)
        ends = self._clock.now() + grace
        if grace <= timedelta(0):
            self._store.put_api_key(old.model_copy(update={"revoked_at": self._clock.now()}))
        elif old.expires_at is None or old.expires_at > ends:
            self._store.put_api_key(old.model_copy(update={"expires_at": ends}))
        return raw_key, old

    def reconcile_seeded(self, pairs: list[tuple[str, str]]) -> list[ApiKeyRecord]:
        """The keys seeded from settings are exactly the configured ones: a key removed from the list stops working
        at the next start. Returns the keys revoked."""
        wanted = {hash_key(key) for key, _ in pairs}
        for key, tenant in pairs:
            self.register_key(key, tenant, name=SEEDED)
        revoked: list[ApiKeyRecord] = []
        tenants = {tenant for _, tenant in pairs} | set(self._tenants())
        for tenant in sorted(tenants):
            for record in self._store.list_api_keys(tenant):
                if record.name == SEEDED and record.key_hash not in wanted and record.revoked_at is None:
                    revoked.append(self.revoke(tenant, record.key_id))
        return revoked

    def _tenants(self) -> list[str]:
        tenants: list[str] = []
        cursor: str | None = None
        while True:
            page = self._store.list_tenants(limit=100, cursor=cursor)
            tenants += page.items
            cursor = page.next_cursor
            if cursor is None:
                return tenants

    def _find(self, tenant_id: str, key_id: str) -> ApiKeyRecord:
        if len(key_id) < 8:
            raise InvalidInputError("name the key by at least the first 8 characters of its key_id")
        matches = [r for r in self._store.list_api_keys(tenant_id) if r.key_hash.startswith(key_id)]
        if not matches:
            raise NotFoundError(f"no key {key_id} for this tenant")
        if len(matches) > 1:
            raise InvalidInputError(f"{key_id} names {len(matches)} keys: give more of the key_id")
        return matches[0]
