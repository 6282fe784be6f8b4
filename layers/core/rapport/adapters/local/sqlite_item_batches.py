"""The SQLite store's batched item reads and writes (`ItemStore.get_items`, `write_items`): one transaction each."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from rapport.errors import ConflictError
from rapport.ports.items import (
    FieldChange,
    ItemDelete,
    ItemPut,
    ItemRef,
    ItemScope,
    ItemWrite,
    StoredItem,
    check_kind,
    check_writes,
)

_COLUMNS = "kind, item_key, body, version, updated_at, expires_at"
_KEYS_PER_QUERY = 500  # well under SQLite's bound on the variables of one statement


class SqliteItemBatches:
    """Mixed into `SqliteMemoryStore`, which provides the connection's transaction and the row conversion."""

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    @staticmethod
    def _scope_key(scope: ItemScope) -> tuple[str, str]:
        raise NotImplementedError

    def _item_from_row(self, row: sqlite3.Row | tuple[Any, ...], owner: tuple[str, str]) -> StoredItem:
        raise NotImplementedError

    def _item_text(self, owner: tuple[str, str], kind: str, key: str, body: dict[str, Any]) -> str:
        raise NotImplementedError  # the body as stored: sealed for an end user's item (`SealedRows`)

    def _item_fields(self, owner: tuple[str, str], kind: str, key: str, text: str) -> dict[str, Any]:
        raise NotImplementedError

    def get_items(self, scope: ItemScope, refs: Iterable[ItemRef]) -> dict[ItemRef, StoredItem]:
        """One query per kind (and per `_KEYS_PER_QUERY` keys), each a set of primary-key lookups, in one read
        transaction: recall reads all its candidates' edges this way, whatever their number."""
        tenant_id, user_id = self._scope_key(scope)
        keys_of: dict[str, list[str]] = {}
        for kind, key in dict.fromkeys(refs):
            keys_of.setdefault(check_kind(kind), []).append(key)
        found: dict[ItemRef, StoredItem] = {}
        with self._transaction() as conn:
            for kind, keys in keys_of.items():
                for start in range(0, len(keys), _KEYS_PER_QUERY):
                    chunk = keys[start : start + _KEYS_PER_QUERY]
                    rows = conn.execute(
                        f"SELECT {_COLUMNS} FROM user_items WHERE tenant_id=? AND user_id=? AND kind=?"
                        f" AND item_key IN ({','.join('?' * len(chunk))})",
                        (tenant_id, user_id, kind, *chunk),
                    ).fetchall()
                    for row in rows:
                        item = self._item_from_row(row, (tenant_id, user_id))
                        found[(item.kind, item.key)] = item
        return found

    def write_items(self, scope: ItemScope, writes: Sequence[ItemWrite], *, now: datetime) -> None:
        with self._transaction() as conn:
            self._apply_item_writes(conn, scope, writes, now)

    def _apply_item_writes(
        self, conn: sqlite3.Connection, scope: ItemScope, writes: Sequence[ItemWrite], now: datetime
    ) -> None:
        """The writes inside the caller's transaction; a ConflictError raised here rolls all of it back."""
        check_writes(writes)
        tenant_id, user_id = self._scope_key(scope)
        for write in writes:
            where = (tenant_id, user_id, write.kind, write.key)
            row = conn.execute(
                "SELECT body, version, expires_at FROM user_items"
                " WHERE tenant_id=? AND user_id=? AND kind=? AND item_key=?",
                where,
            ).fetchone()
            version = int(row[1]) if row else 0
            if isinstance(write, ItemPut | ItemDelete) and write.expected_version not in (None, version):
                raise ConflictError(f"{write.kind} {write.key!r} changed concurrently; nothing was written")
            if isinstance(write, ItemDelete):
                conn.execute("DELETE FROM user_items WHERE tenant_id=? AND user_id=? AND kind=? AND item_key=?", where)
                continue
            if isinstance(write, ItemPut):
                body, expires = write.body, write.expires_at.isoformat() if write.expires_at else None
            else:
                assert isinstance(write, FieldChange)
                fields = self._item_fields((tenant_id, user_id), write.kind, write.key, row[0]) if row else {}
                body = {k: v for k, v in fields.items() if k not in write.remove} | write.set
                expires = row[2] if row else None
            conn.execute(
                f"INSERT OR REPLACE INTO user_items (tenant_id, user_id, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    *where,
                    self._item_text((tenant_id, user_id), write.kind, write.key, body),
                    version + 1,
                    now.isoformat(),
                    expires,
                ),
            )
