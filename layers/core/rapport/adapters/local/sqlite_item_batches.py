"""The SQLite store's batched item reads and writes (`ItemStore.get_items`, `write_items`): one transaction each."""

from __future__ import annotations

import marshal
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, TypeVar

from rapport.adapters.local.decoded_rows import ABSENT, DecodedItem, DecodedRows
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
_Form = TypeVar("_Form")
_UNMADE = object()


def _stored(item: DecodedItem) -> StoredItem:
    """The item with its own copy of the body, loaded from the kept bytes."""
    return StoredItem.model_construct(
        kind=item.kind,
        key=item.key,
        body=marshal.loads(item.body),  # noqa: S302 - bytes this process made, never read from outside
        version=item.version,
        updated_at=item.updated_at,
        expires_at=item.expires_at,
    )


class SqliteItemBatches:
    """Mixed into `SqliteMemoryStore`, which provides the connection's transaction and the row conversion."""

    _lock: threading.RLock
    _decoded: DecodedRows

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _seen_elsewhere(self) -> None:
        raise NotImplementedError

    def _decoded_item(self, row: sqlite3.Row | tuple[Any, ...], owner: tuple[str, str]) -> DecodedItem:
        raise NotImplementedError

    @staticmethod
    def _scope_key(scope: ItemScope) -> tuple[str, str]:
        raise NotImplementedError

    def _item_text(self, owner: tuple[str, str], kind: str, key: str, body: dict[str, Any]) -> str:
        raise NotImplementedError  # the body as stored: sealed for an end user's item (`SealedRows`)

    def _item_fields(self, owner: tuple[str, str], kind: str, key: str, text: str) -> dict[str, Any]:
        raise NotImplementedError

    def get_items(self, scope: ItemScope, refs: Iterable[ItemRef]) -> dict[ItemRef, StoredItem]:
        """One query per kind (and per `_KEYS_PER_QUERY` keys), each a set of primary-key lookups, in one read
        transaction: recall reads all its candidates' edges this way, whatever their number. What was read before
        and not written since is not read again (`DecodedRows`), an item known to be absent included."""
        # Each read loads its own body: nothing a caller does to one reaches what is kept.
        return {ref: _stored(item) for ref, item in self._decoded_items(scope, refs).items()}

    def get_item_forms(
        self, scope: ItemScope, refs: Iterable[ItemRef], form: Callable[[StoredItem], _Form]
    ) -> dict[ItemRef, _Form]:
        """As `get_items`, each item as `form` makes it, made once per kept row (`SharedItemForms`): a recall's
        twenty candidates' adjacency items are a lookup each instead of a body loaded and read again."""
        found: dict[ItemRef, _Form] = {}
        for ref, item in self._decoded_items(scope, refs).items():
            made = item.forms.get(form, _UNMADE)
            if made is _UNMADE:
                # Made outside the lock: a write meanwhile drops this row, and the form with it, from what is kept.
                made = item.forms[form] = form(_stored(item))
            found[ref] = made
        return found

    def _decoded_items(self, scope: ItemScope, refs: Iterable[ItemRef]) -> dict[ItemRef, DecodedItem]:
        tenant_id, user_id = self._scope_key(scope)
        owner = (tenant_id, user_id)
        decoded: dict[ItemRef, DecodedItem] = {}
        keys_of: dict[str, list[str]] = {}
        wanted = list(dict.fromkeys(refs))
        for kind in {kind for kind, _ in wanted}:
            check_kind(kind)
        with self._lock:
            self._seen_elsewhere()
            kept = self._decoded.items
            found, missing = kept.get_many((tenant_id, user_id, kind, key) for kind, key in wanted)
            for (_, _, kind, key), item in found.items():
                if item is not ABSENT:
                    decoded[(kind, key)] = item
            for _, _, kind, key in missing:
                keys_of.setdefault(kind, []).append(key)
            if keys_of:
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
                                item = self._decoded_item(row, owner)
                                decoded[(item.kind, item.key)] = item
                            for key in chunk:
                                kept.put((tenant_id, user_id, kind, key), decoded.get((kind, key), ABSENT))
        return decoded

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
            self._decoded.items.drop(where)
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
