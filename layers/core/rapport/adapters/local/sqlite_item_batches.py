"""The SQLite store's batched item reads and writes (`ItemStore.get_items`, `write_items`): one transaction each."""

from __future__ import annotations

import json
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


class SqliteItemBatches:
    """Mixed into `SqliteMemoryStore`, which provides the connection's transaction and the row conversion."""

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    @staticmethod
    def _scope_key(scope: ItemScope) -> tuple[str, str]:
        raise NotImplementedError

    @staticmethod
    def _item_from_row(row: sqlite3.Row | tuple[Any, ...]) -> StoredItem:
        raise NotImplementedError

    def get_items(self, scope: ItemScope, refs: Iterable[ItemRef]) -> dict[ItemRef, StoredItem]:
        tenant_id, user_id = self._scope_key(scope)
        found: dict[ItemRef, StoredItem] = {}
        with self._transaction() as conn:
            for kind, key in dict.fromkeys(refs):
                row = conn.execute(
                    f"SELECT {_COLUMNS} FROM user_items WHERE tenant_id=? AND user_id=? AND kind=? AND item_key=?",
                    (tenant_id, user_id, check_kind(kind), key),
                ).fetchone()
                if row is not None:
                    found[(kind, key)] = self._item_from_row(row)
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
                fields = json.loads(row[0]) if row else {}
                body = {k: v for k, v in fields.items() if k not in write.remove} | write.set
                expires = row[2] if row else None
            conn.execute(
                f"INSERT OR REPLACE INTO user_items (tenant_id, user_id, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*where, json.dumps(body), version + 1, now.isoformat(), expires),
            )
