"""Local adapter of `PersonKeys`: each person's data key wrapped (AES-256-GCM) under a master key file, in a SQLite
file of its own beside the store, so a copy of the store's file never carries the keys that open it."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from rapport.domain.scope import Scope
from rapport.errors import StorageError
from rapport.sealing import DATA_KEY_BYTES

MASTER_KEY_FILE = "master.key"
KEYS_FILE = "person_keys.sqlite3"
_NONCE_BYTES = 12

_SCHEMA = """
CREATE TABLE IF NOT EXISTS person_keys (
    tenant_id TEXT NOT NULL,
    user_hash TEXT NOT NULL,  -- never the user id: the file names nobody
    wrapped BLOB NOT NULL,
    PRIMARY KEY (tenant_id, user_hash)
);
"""


def _master_key(directory: Path) -> bytes:
    """The master key, made on first use (32 random bytes, readable by the owner only). Losing it loses every
    person's content; whoever can read it and a copy of the files reads everyone's."""
    path = directory / MASTER_KEY_FILE
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        key = path.read_bytes()
        if len(key) != DATA_KEY_BYTES:
            raise StorageError(f"{path} holds {len(key)} bytes, not a {DATA_KEY_BYTES}-byte key") from None
        return key
    key = os.urandom(DATA_KEY_BYTES)
    with os.fdopen(descriptor, "wb") as file:
        file.write(key)
    return key


class LocalPersonKeys:
    """One connection behind a lock, as the store's; processes beside the server (jobs) share the file through
    SQLite's own locking."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._wrapping = AESGCM(_master_key(directory))
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(directory / KEYS_FILE), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        # A destroyed key is overwritten with zeros, not left in a free page for a copy of the file to keep.
        self._conn.execute("PRAGMA secure_delete=ON")
        self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @staticmethod
    def _who(tenant_id: str, user_id: str) -> tuple[str, str]:
        return tenant_id, Scope(tenant_id, user_id).user_hash

    def load(self, tenant_id: str, user_id: str) -> bytes | None:
        who = self._who(tenant_id, user_id)
        with self._lock:
            row = self._conn.execute(
                "SELECT wrapped FROM person_keys WHERE tenant_id=? AND user_hash=?", who
            ).fetchone()
        return self._unwrap(bytes(row[0]), who) if row else None

    def create(self, tenant_id: str, user_id: str) -> bytes:
        who = self._who(tenant_id, user_id)
        key = os.urandom(DATA_KEY_BYTES)
        nonce = os.urandom(_NONCE_BYTES)
        wrapped = nonce + self._wrapping.encrypt(nonce, key, _associated(who))
        with self._lock:
            # The first writer's key wins; a second one reads it back, so one person never has two.
            self._conn.execute(
                "INSERT OR IGNORE INTO person_keys (tenant_id, user_hash, wrapped) VALUES (?, ?, ?)", (*who, wrapped)
            )
            row = self._conn.execute(
                "SELECT wrapped FROM person_keys WHERE tenant_id=? AND user_hash=?", who
            ).fetchone()
        return self._unwrap(bytes(row[0]), who)

    def destroy(self, tenant_id: str, user_id: str) -> bool:
        with self._lock:
            removed = self._conn.execute(
                "DELETE FROM person_keys WHERE tenant_id=? AND user_hash=?", self._who(tenant_id, user_id)
            ).rowcount
            # The write-ahead log still holds the page with the key until a checkpoint copies the zeroed page back.
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return removed > 0

    def _unwrap(self, wrapped: bytes, who: tuple[str, str]) -> bytes:
        try:
            return self._wrapping.decrypt(wrapped[:_NONCE_BYTES], wrapped[_NONCE_BYTES:], _associated(who))
        except InvalidTag as exc:
            raise StorageError(
                "a person's wrapped key does not open with this master key (another data dir's?)"
            ) from exc


def _associated(who: tuple[str, str]) -> bytes:
    return "rapport/person-key/v1\x1f{}\x1f{}".format(*who).encode()
