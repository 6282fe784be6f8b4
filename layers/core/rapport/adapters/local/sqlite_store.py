"""SQLite adapter of `MemoryStore`: the local server's source of truth, one file under the data directory."""

from __future__ import annotations

import base64
import json
import marshal
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from rapport.adapters.local.decoded_rows import DEFAULT_CAPACITY, DecodedItem, DecodedMemory, DecodedRows
from rapport.adapters.local.sealed_rows import SealedRows
from rapport.adapters.local.sqlite_item_batches import SqliteItemBatches
from rapport.domain.models import (
    ApiKeyRecord,
    AuditEvent,
    Domain,
    ErasureCounts,
    Interaction,
    Memory,
    Page,
    RelationshipCounts,
)
from rapport.domain.scope import DEFAULT_AGENT, Scope
from rapport.errors import ConflictError, InvalidInputError, NotFoundError, StorageError
from rapport.ports.items import ItemQuery, ItemScope, ItemWrite, StoredItem, check_kind, relationship_of
from rapport.sealing import Keyring

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    id TEXT NOT NULL,
    domain TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    embedding BLOB,
    PRIMARY KEY (tenant_id, user_id, id)
);
CREATE INDEX IF NOT EXISTS memories_by_domain ON memories (tenant_id, user_id, domain, id);
CREATE INDEX IF NOT EXISTS memories_by_type ON memories (tenant_id, user_id, type, id);
CREATE TABLE IF NOT EXISTS interactions (
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant_id, user_id, id)
);
CREATE TABLE IF NOT EXISTS users (
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);
CREATE TABLE IF NOT EXISTS api_keys (
    key_hash TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_events (
    tenant_id TEXT NOT NULL,
    sort_key TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant_id, sort_key)
);
-- One end user's audit events, newest first, without reading the tenant's others; an expression index, so a file
-- made before it needs no new column.
CREATE INDEX IF NOT EXISTS audit_events_by_user
    ON audit_events (tenant_id, json_extract(body, '$.target_user_hash'), sort_key);
CREATE TABLE IF NOT EXISTS user_items (
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,  -- '' for items of the tenant as a whole
    kind TEXT NOT NULL,
    item_key TEXT NOT NULL,
    body TEXT NOT NULL,
    version INTEGER NOT NULL,
    updated_at TEXT NOT NULL,
    expires_at TEXT,
    PRIMARY KEY (tenant_id, user_id, kind, item_key)
);
"""


_CURSOR_PREFIX = "after:"


def _encode_cursor(value: str) -> str:
    return base64.urlsafe_b64encode((_CURSOR_PREFIX + value).encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> str:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = base64.b64decode(padded.encode(), altchars=b"-_", validate=True).decode()
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInputError("cursor is not valid: pass the next_cursor of the previous page unchanged") from exc
    if not value.startswith(_CURSOR_PREFIX) or len(value) == len(_CURSOR_PREFIX):
        raise InvalidInputError("cursor is not valid: pass the next_cursor of the previous page unchanged")
    return value[len(_CURSOR_PREFIX) :]


def _audit_time(moment: datetime) -> str:
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="microseconds")


def _embedding_to_blob(embedding: list[float] | None) -> bytes | None:
    if embedding is None:
        return None
    return np.asarray(embedding, dtype=np.float32).tobytes()


def _blob_to_embedding(blob: bytes | None) -> list[float] | None:
    if blob is None:
        return None
    return np.frombuffer(blob, dtype=np.float32).tolist()  # float32.tolist() already gives Python floats


class SqliteMemoryStore(SqliteItemBatches):
    """One connection shared across threads behind a lock: the local server is one process with a thread pool."""

    def __init__(self, path: Path, *, keyring: Keyring | None = None, decoded_rows: int = DEFAULT_CAPACITY) -> None:
        """`keyring`: each end user's content is sealed with their data key (docs/security.md, "Per-person keys");
        without one, rows are written plain. `decoded_rows`: how many memories (and as many items) are kept opened
        and parsed for the next read (`DecodedRows`; 0 keeps none)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._rows = SealedRows(keyring)
        self._decoded = DecodedRows(decoded_rows)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        # Deleted rows are overwritten with zeros, not left in free pages: an erased person leaves no bytes behind.
        self._conn.execute("PRAGMA secure_delete=ON")
        self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _forget_written_history(self) -> None:
        """After an erasure. Secure delete zeroes a deleted row, but an index's interior page keeps a copy of a key as
        the divider between its children, deleted or not: the person's user id or a memory id can stay there.
        VACUUM rebuilds every tree from the rows left, so no copy survives; it costs a rewrite of the file, which an
        erasure (rare, and owed) can pay. Then the write-ahead log still holds every page written before, until a
        checkpoint copies it into the database and truncates it. A reader in another process (a job beside the
        server) can hold the log back; the next erasure's checkpoint then completes it."""
        with self._lock:
            self._conn.execute("VACUUM")
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                yield self._conn
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._conn.execute("ROLLBACK")
                raise StorageError(f"local store write failed: {exc}") from exc
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return list(self._conn.execute(sql, params).fetchall())
            except sqlite3.Error as exc:
                raise StorageError(f"local store read failed: {exc}") from exc

    def _seen_elsewhere(self) -> None:
        """Forget what was decoded when another connection (another process) has committed since: call with the
        lock held, before a read that uses `_decoded`."""
        self._decoded.seen(int(self._conn.execute("PRAGMA data_version").fetchone()[0]))

    # memories

    def _memory_from_row(self, body: str, blob: bytes | None) -> Memory:
        memory, plain_blob = self._rows.memory(body, blob)
        return memory if plain_blob is None else memory.model_copy(update={"embedding": _blob_to_embedding(plain_blob)})

    def _decoded_memory(self, body: str, blob: bytes | None) -> DecodedMemory:
        memory, plain_blob = self._rows.memory(body, blob)
        return DecodedMemory(memory, plain_blob)

    def _forget_memories(self, tenant_id: str, user_id: str, memory_ids: Iterable[str]) -> None:
        with self._lock:
            for memory_id in memory_ids:
                self._decoded.memories.drop((tenant_id, user_id, memory_id))

    def put_memory(self, memory: Memory, *, if_reinforced_at: datetime | None = None) -> None:
        with self._transaction() as conn:
            if if_reinforced_at is not None:
                row = conn.execute(
                    "SELECT body FROM memories WHERE tenant_id=? AND user_id=? AND id=?",
                    (memory.tenant_id, memory.user_id, memory.id),
                ).fetchone()
                if row is None:
                    raise NotFoundError(f"memory {memory.id} not found")
                if self._memory_from_row(row[0], None).last_reinforced_at != if_reinforced_at:
                    raise ConflictError(f"memory {memory.id} was reinforced concurrently")
            self._forget_memories(memory.tenant_id, memory.user_id, [memory.id])
            _insert_memory(conn, memory, self._rows)

    def update_memory(self, memory: Memory, *, if_reinforced_at: datetime | None = None) -> None:
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT body FROM memories WHERE tenant_id=? AND user_id=? AND id=?",
                (memory.tenant_id, memory.user_id, memory.id),
            ).fetchone()
            if row is None:
                raise NotFoundError(f"memory {memory.id} not found")
            if (
                if_reinforced_at is not None
                and self._memory_from_row(row[0], None).last_reinforced_at != if_reinforced_at
            ):
                raise ConflictError(f"memory {memory.id} was reinforced concurrently")
            self._forget_memories(memory.tenant_id, memory.user_id, [memory.id])
            conn.execute(
                "UPDATE memories SET domain=?, type=?, body=? WHERE tenant_id=? AND user_id=? AND id=?",
                (
                    memory.domain.value,
                    memory.type,
                    self._rows.memory_body(memory),
                    memory.tenant_id,
                    memory.user_id,
                    memory.id,
                ),
            )

    def get_memory(self, scope: Scope, memory_id: str) -> Memory:
        found = self.get_memories(scope, [memory_id])
        if not found:
            raise NotFoundError(f"memory {memory_id} not found")
        return found[0]

    def get_memories(
        self, scope: Scope, memory_ids: Iterable[str], *, vectors: Collection[str] | None = None
    ) -> list[Memory]:
        """In id order. What `_decoded` keeps, shared with every reader (a memory is immutable); the vector is kept
        as float32 bytes and becomes a list of floats, in a copy, only for the ids in `vectors` (every id when
        None)."""
        tenant_id, user_id = scope.tenant_id, scope.user_id
        rows: list[tuple[str, str, bytes | None]] = []
        with self._lock:
            try:
                self._seen_elsewhere()
                kept, missing_keys = self._decoded.memories.get_many(
                    (tenant_id, user_id, memory_id) for memory_id in dict.fromkeys(memory_ids)
                )
                found: dict[str, DecodedMemory] = {key[2]: decoded for key, decoded in kept.items()}
                missing = [key[2] for key in missing_keys]
                for start in range(0, len(missing), 500):
                    chunk = missing[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    rows += self._conn.execute(
                        f"SELECT id, body, embedding FROM memories WHERE tenant_id=? AND user_id=? AND id IN ({marks})",
                        (tenant_id, user_id, *chunk),
                    ).fetchall()
            except sqlite3.Error as exc:
                raise StorageError(f"local store read failed: {exc}") from exc
            generation = self._decoded.generation
        # Unsealed and parsed outside the lock, as other threads' reads and writes need not wait for it; kept only
        # when nothing was dropped meanwhile, since a write since the read may have changed these very rows.
        decoded_rows = {memory_id: self._decoded_memory(body, blob) for memory_id, body, blob in rows}
        found.update(decoded_rows)
        if decoded_rows:
            with self._lock:
                if self._decoded.generation == generation:
                    for memory_id, decoded in decoded_rows.items():
                        self._decoded.memories.put((tenant_id, user_id, memory_id), decoded)
        return [
            found[i].memory.model_copy(update={"embedding": _blob_to_embedding(found[i].embedding)})
            if (vectors is None or i in vectors) and found[i].embedding is not None
            else found[i].memory
            for i in sorted(found)
        ]

    def delete_memory(self, scope: Scope, memory_id: str) -> None:
        with self._transaction() as conn:
            self._forget_memories(scope.tenant_id, scope.user_id, [memory_id])
            cursor = conn.execute(
                "DELETE FROM memories WHERE tenant_id=? AND user_id=? AND id=?",
                (scope.tenant_id, scope.user_id, memory_id),
            )
            if cursor.rowcount == 0:
                raise NotFoundError(f"memory {memory_id} not found")

    def list_memories(
        self,
        scope: Scope,
        *,
        domains: tuple[Domain, ...],
        memory_type: str | None = None,
        limit: int,
        cursor: str | None = None,
        every_assistant: bool = False,
    ) -> Page[Memory]:
        clauses = ["tenant_id=?", "user_id=?"]
        params: list[Any] = [scope.tenant_id, scope.user_id]
        clauses.append(f"domain IN ({','.join('?' * len(domains))})")
        params.extend(d.value for d in domains)
        if not every_assistant:
            # The person's facts, and this assistant's relational memories only (a body stored before assistants
            # had names holds none: the default assistant's).
            clauses.append("(domain=? OR coalesce(json_extract(body, '$.agent_id'), ?)=?)")
            params.extend((Domain.USER.value, DEFAULT_AGENT, scope.agent_id))
        if memory_type is not None:
            clauses.append("type=?")
            params.append(memory_type)
        if cursor is not None:
            clauses.append("id<?")
            params.append(_decode_cursor(cursor))
        # Without the vectors, as the port says (and DynamoDB does): a listing shows no embedding.
        rows = self._query(
            f"SELECT id, body FROM memories WHERE {' AND '.join(clauses)} ORDER BY id DESC LIMIT ?",
            (*params, limit + 1),
        )
        items = [self._memory_from_row(body, None) for _, body in rows[:limit]]
        next_cursor = _encode_cursor(rows[limit - 1][0]) if len(rows) > limit else None
        return Page[Memory](items=items, next_cursor=next_cursor)

    def count_memories(self, scope: Scope) -> int:
        rows = self._query(
            "SELECT COUNT(*) FROM memories WHERE tenant_id=? AND user_id=?", (scope.tenant_id, scope.user_id)
        )
        return int(rows[0][0])

    def iter_all_memories(self, tenant_id: str | None = None) -> Iterable[Memory]:
        last: tuple[str, str, str] = ("", "", "")
        while True:
            sql = (
                "SELECT tenant_id, user_id, id, body, embedding FROM memories WHERE (tenant_id, user_id, id) > (?,?,?)"
            )
            params: tuple[Any, ...] = last
            if tenant_id is not None:
                sql += " AND tenant_id=?"
                params = (*last, tenant_id)
            rows = self._query(sql + " ORDER BY tenant_id, user_id, id LIMIT 500", params)
            if not rows:
                return
            for row in rows:
                yield self._memory_from_row(row[3], row[4])
            last = (rows[-1][0], rows[-1][1], rows[-1][2])

    # interactions

    def put_interaction(
        self,
        interaction: Interaction,
        episodes: Sequence[Memory] = (),
        *,
        with_items: Sequence[ItemWrite] = (),
        known_user: bool = False,
    ) -> None:
        # `known_user` saves DynamoDB a write; here the registration is one row either way.
        with self._transaction() as conn:
            self._forget_memories(interaction.tenant_id, interaction.user_id, (m.id for m in episodes))
            for memory in episodes:
                _insert_memory(conn, memory, self._rows)
            conn.execute(
                "INSERT OR REPLACE INTO interactions (tenant_id, user_id, id, body) VALUES (?, ?, ?, ?)",
                (interaction.tenant_id, interaction.user_id, interaction.id, self._rows.interaction_body(interaction)),
            )
            conn.execute(
                "INSERT OR IGNORE INTO users (tenant_id, user_id) VALUES (?, ?)",
                (interaction.tenant_id, interaction.user_id),
            )
            self._apply_item_writes(conn, ItemScope.of_user(interaction.scope), with_items, interaction.created_at)

    def remove_interaction(self, interaction: Interaction) -> None:
        scope = (interaction.tenant_id, interaction.user_id)
        with self._transaction() as conn:
            self._forget_memories(*scope, interaction.memory_ids)
            conn.executemany(
                "DELETE FROM memories WHERE tenant_id=? AND user_id=? AND id=?",
                [(*scope, memory_id) for memory_id in interaction.memory_ids],
            )
            conn.execute("DELETE FROM interactions WHERE tenant_id=? AND user_id=? AND id=?", (*scope, interaction.id))

    def get_interaction(self, scope: Scope, interaction_id: str) -> Interaction:
        rows = self._query(
            "SELECT body FROM interactions WHERE tenant_id=? AND user_id=? AND id=?",
            (scope.tenant_id, scope.user_id, interaction_id),
        )
        if not rows:
            raise NotFoundError(f"interaction {interaction_id} not found")
        return self._rows.interaction(rows[0][0])

    def list_interactions(
        self, scope: Scope, *, limit: int, cursor: str | None = None, oldest_first: bool = False
    ) -> Page[Interaction]:
        sql = "SELECT id, body FROM interactions WHERE tenant_id=? AND user_id=?"
        params: tuple[Any, ...] = (scope.tenant_id, scope.user_id)
        if cursor is not None:
            sql += " AND id>?" if oldest_first else " AND id<?"
            params = (*params, _decode_cursor(cursor))
        order = "ASC" if oldest_first else "DESC"
        rows = self._query(sql + f" ORDER BY id {order} LIMIT ?", (*params, limit + 1))
        items = [self._rows.interaction(body) for _, body in rows[:limit]]
        next_cursor = _encode_cursor(rows[limit - 1][0]) if len(rows) > limit else None
        return Page[Interaction](items=items, next_cursor=next_cursor)

    def delete_interaction(self, scope: Scope, interaction_id: str) -> None:
        with self._transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM interactions WHERE tenant_id=? AND user_id=? AND id=?",
                (scope.tenant_id, scope.user_id, interaction_id),
            )
            if cursor.rowcount == 0:
                raise NotFoundError(f"interaction {interaction_id} not found")

    # tenancy

    def put_api_key(self, record: ApiKeyRecord) -> None:
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO api_keys (key_hash, tenant_id, body) VALUES (?, ?, ?)",
                (record.key_hash, record.tenant_id, record.model_dump_json()),
            )

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        rows = self._query("SELECT body FROM api_keys WHERE key_hash=?", (key_hash,))
        return ApiKeyRecord.model_validate_json(rows[0][0]) if rows else None

    def list_api_keys(self, tenant_id: str) -> list[ApiKeyRecord]:
        rows = self._query("SELECT body FROM api_keys WHERE tenant_id=? ORDER BY key_hash", (tenant_id,))
        return [ApiKeyRecord.model_validate_json(body) for (body,) in rows]

    def register_user(self, scope: Scope) -> None:
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO users (tenant_id, user_id) VALUES (?, ?)", (scope.tenant_id, scope.user_id)
            )

    def list_users(self, tenant_id: str, *, limit: int, cursor: str | None = None) -> Page[str]:
        sql = "SELECT user_id FROM users WHERE tenant_id=?"
        params: tuple[Any, ...] = (tenant_id,)
        if cursor is not None:
            sql += " AND user_id>?"
            params = (*params, _decode_cursor(cursor))
        rows = self._query(sql + " ORDER BY user_id LIMIT ?", (*params, limit + 1))
        items = [row[0] for row in rows[:limit]]
        next_cursor = _encode_cursor(items[-1]) if len(rows) > limit else None
        return Page[str](items=items, next_cursor=next_cursor)

    def list_tenants(self, *, limit: int, cursor: str | None = None) -> Page[str]:
        # A tenant is known from its first key, as DynamoDB registers it then, not only from its first end user.
        sql = "SELECT tenant_id FROM (SELECT tenant_id FROM users UNION SELECT tenant_id FROM api_keys)"
        params: tuple[Any, ...] = ()
        if cursor is not None:
            sql += " WHERE tenant_id>?"
            params = (_decode_cursor(cursor),)
        rows = self._query(sql + " ORDER BY tenant_id LIMIT ?", (*params, limit + 1))
        items = [row[0] for row in rows[:limit]]
        next_cursor = _encode_cursor(items[-1]) if len(rows) > limit else None
        return Page[str](items=items, next_cursor=next_cursor)

    # privacy

    def erase_user(self, scope: Scope) -> ErasureCounts:
        key = (scope.tenant_id, scope.user_id)
        agents: dict[str, RelationshipCounts] = {}
        with self._transaction() as conn:
            self._decoded.drop_person(*key)
            relational = conn.execute(
                "SELECT coalesce(json_extract(body, '$.agent_id'), ?), count(*) FROM memories"
                " WHERE tenant_id=? AND user_id=? AND domain=? GROUP BY 1",
                (DEFAULT_AGENT, *key, Domain.RELATIONAL.value),
            ).fetchall()
            for agent, count in relational:
                agents.setdefault(str(agent), RelationshipCounts()).relational_memories += int(count)
            for kind, item_key in conn.execute(
                "SELECT kind, item_key FROM user_items WHERE tenant_id=? AND user_id=?", key
            ).fetchall():
                agent_of_item = relationship_of(str(kind), str(item_key))
                if agent_of_item is not None:
                    agents.setdefault(agent_of_item, RelationshipCounts()).items += 1
            memories = conn.execute("DELETE FROM memories WHERE tenant_id=? AND user_id=?", key).rowcount
            interactions = conn.execute("DELETE FROM interactions WHERE tenant_id=? AND user_id=?", key).rowcount
            others = conn.execute("DELETE FROM user_items WHERE tenant_id=? AND user_id=?", key).rowcount
            others += conn.execute("DELETE FROM users WHERE tenant_id=? AND user_id=?", key).rowcount
        if self._rows.keyring is not None:
            # After the rows: a failure above leaves the person readable for the retry to erase; from here on, any
            # copy of their rows (a backup of the file, a page a reader still holds) is sealed with a key that is gone.
            self._rows.keyring.destroy(scope.tenant_id, scope.user_id)
        self._forget_written_history()
        return ErasureCounts(memories=memories, interactions=interactions, other_items=others, agents=agents)

    def put_audit_event(self, event: AuditEvent) -> None:
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO audit_events (tenant_id, sort_key, body) VALUES (?, ?, ?)",
                (event.tenant_id, f"{_audit_time(event.at)}#{event.id}", event.model_dump_json()),
            )

    def list_audit_events(
        self,
        tenant_id: str,
        *,
        limit: int,
        cursor: str | None = None,
        user_hash: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Page[AuditEvent]:
        sql = "SELECT sort_key, body FROM audit_events WHERE tenant_id=?"
        params: tuple[Any, ...] = (tenant_id,)
        if user_hash is not None:
            sql += " AND json_extract(body, '$.target_user_hash')=?"
            params = (*params, user_hash)
        # The sort key starts with the time at a fixed width, so the bounds compare as the instants do.
        if since is not None:
            sql += " AND sort_key>=?"
            params = (*params, _audit_time(since))
        if until is not None:
            sql += " AND sort_key<?"
            params = (*params, _audit_time(until))
        if cursor is not None:
            sql += " AND sort_key<?"
            params = (*params, _decode_cursor(cursor))
        rows = self._query(sql + " ORDER BY sort_key DESC LIMIT ?", (*params, limit + 1))
        items = [AuditEvent.model_validate_json(body) for _, body in rows[:limit]]
        next_cursor = _encode_cursor(rows[limit - 1][0]) if len(rows) > limit else None
        return Page[AuditEvent](items=items, next_cursor=next_cursor)

    # generic items (ItemStore port)

    @staticmethod
    def _scope_key(scope: ItemScope) -> tuple[str, str]:
        return scope.tenant_id, scope.user_id or ""

    def put_item(
        self,
        scope: ItemScope,
        kind: str,
        key: str,
        body: dict[str, Any],
        *,
        now: datetime,
        expected_version: int | None = None,
        expires_at: datetime | None = None,
    ) -> StoredItem:
        check_kind(kind)
        tenant_id, user_id = self._scope_key(scope)
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT version FROM user_items WHERE tenant_id=? AND user_id=? AND kind=? AND item_key=?",
                (tenant_id, user_id, kind, key),
            ).fetchone()
            current = int(row[0]) if row else 0
            if expected_version is not None and current != expected_version:
                raise ConflictError(
                    f"{kind} {key!r} changed concurrently (version {current}, expected {expected_version})"
                )
            item = StoredItem(kind=kind, key=key, body=body, version=current + 1, updated_at=now, expires_at=expires_at)
            self._decoded.items.drop((tenant_id, user_id, kind, key))
            conn.execute(
                "INSERT OR REPLACE INTO user_items"
                " (tenant_id, user_id, kind, item_key, body, version, updated_at, expires_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    tenant_id,
                    user_id,
                    kind,
                    key,
                    self._item_text((tenant_id, user_id), kind, key, body),
                    item.version,
                    now.isoformat(),
                    expires_at.isoformat() if expires_at else None,
                ),
            )
        return item

    def _item_text(self, owner: tuple[str, str], kind: str, key: str, body: dict[str, Any]) -> str:
        return self._rows.item_body(*owner, kind, key, body)

    def _item_fields(self, owner: tuple[str, str], kind: str, key: str, text: str) -> dict[str, Any]:
        return self._rows.item(*owner, kind, key, text)

    def _decoded_item(self, row: sqlite3.Row | tuple[Any, ...], owner: tuple[str, str]) -> DecodedItem:
        kind, key, body, version, updated_at, expires_at = row
        return DecodedItem(
            kind=kind,
            key=key,
            body=marshal.dumps(json.loads(self._rows.item_text(*owner, kind, key, body))),
            version=version,
            updated_at=datetime.fromisoformat(updated_at),
            expires_at=datetime.fromisoformat(expires_at) if expires_at else None,
        )

    def _item_from_row(self, row: sqlite3.Row | tuple[Any, ...], owner: tuple[str, str]) -> StoredItem:
        kind, key, body, version, updated_at, expires_at = row
        return StoredItem(
            kind=kind,
            key=key,
            body=self._item_fields(owner, kind, key, body),
            version=version,
            updated_at=datetime.fromisoformat(updated_at),
            expires_at=datetime.fromisoformat(expires_at) if expires_at else None,
        )

    def get_item(self, scope: ItemScope, kind: str, key: str) -> StoredItem | None:
        tenant_id, user_id = self._scope_key(scope)
        rows = self._query(
            "SELECT kind, item_key, body, version, updated_at, expires_at FROM user_items"
            " WHERE tenant_id=? AND user_id=? AND kind=? AND item_key=?",
            (tenant_id, user_id, check_kind(kind), key),
        )
        return self._item_from_row(rows[0], (tenant_id, user_id)) if rows else None

    def list_items(self, scope: ItemScope, query: ItemQuery) -> Page[StoredItem]:
        tenant_id, user_id = self._scope_key(scope)
        # A key range, not a function of the key: the primary key's index serves it, so a read costs the rows it
        # returns, not a pass over every item of the person (tests/integration/test_sqlite_query_plans.py).
        sql = (
            "SELECT kind, item_key, body, version, updated_at, expires_at FROM user_items"
            " WHERE tenant_id=? AND user_id=? AND kind=? AND item_key>=?"
        )
        params: tuple[Any, ...] = (tenant_id, user_id, query.kind, query.key_prefix)
        upper = _past_prefix(query.key_prefix)
        if upper is not None:
            sql += " AND item_key<?"
            params = (*params, upper)
        if query.cursor is not None:
            sql += " AND item_key<?" if query.descending else " AND item_key>?"
            params = (*params, _decode_cursor(query.cursor))
        order = "DESC" if query.descending else "ASC"
        rows = self._query(f"{sql} ORDER BY item_key {order} LIMIT ?", (*params, query.limit + 1))
        items = [self._item_from_row(row, (tenant_id, user_id)) for row in rows[: query.limit]]
        next_cursor = _encode_cursor(items[-1].key) if len(rows) > query.limit else None
        return Page[StoredItem](items=items, next_cursor=next_cursor)

    def delete_item(self, scope: ItemScope, kind: str, key: str) -> bool:
        tenant_id, user_id = self._scope_key(scope)
        with self._transaction() as conn:
            self._decoded.items.drop((tenant_id, user_id, kind, key))
            cursor = conn.execute(
                "DELETE FROM user_items WHERE tenant_id=? AND user_id=? AND kind=? AND item_key=?",
                (tenant_id, user_id, check_kind(kind), key),
            )
        return cursor.rowcount > 0


def _past_prefix(prefix: str) -> str | None:
    """The least string greater than every string that starts with `prefix` (None: no bound, for an empty prefix or
    one of only the last code point). SQLite compares text as UTF-8 bytes, which orders as code points do."""
    chars = list(prefix)
    while chars:
        following = ord(chars.pop()) + 1
        if 0xD800 <= following <= 0xDFFF:
            following = 0xE000  # surrogates have no UTF-8 form; nothing stored sorts between them
        if following <= 0x10FFFF:
            return "".join(chars) + chr(following)
    return None


def _insert_memory(conn: sqlite3.Connection, memory: Memory, rows: SealedRows) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO memories (tenant_id, user_id, id, domain, type, body, embedding)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            memory.tenant_id,
            memory.user_id,
            memory.id,
            memory.domain.value,
            memory.type,
            rows.memory_body(memory),
            rows.embedding_blob(memory, _embedding_to_blob(memory.embedding)),
        ),
    )
