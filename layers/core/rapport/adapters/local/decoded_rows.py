"""The SQLite store's rows already opened and parsed, kept in process so a read that comes back costs a lookup.

Recall reads the same memories and adjacency items query after query, and each row costs its unsealing, a JSON
parse and a model validation. What is kept here is dropped by every write through the store (by key, or the whole
person for an erasure) and entirely when another connection has committed to the file (`PRAGMA data_version`), so a
read never returns what the file no longer holds.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from rapport.domain.models import Memory

MemoryKey = tuple[str, str, str]  # tenant, end user, memory id
ItemKey = tuple[str, str, str, str]  # tenant, end user ('' for the tenant's own), kind, item key

_K = TypeVar("_K", MemoryKey, ItemKey)
_V = TypeVar("_V")

# Each entry is a memory without its vector (a few kB) and the vector's float32 bytes; 4,096 of them is about the
# candidates of a hundred recalls, some 20 MB.
DEFAULT_CAPACITY = 4096


@dataclass(frozen=True)
class DecodedMemory:
    """A memory as read, its embedding left out, and the embedding's plain float32 bytes: a list of 384 Python floats
    is eight times the size, and a caller that does not need the vector does not pay for building it."""

    memory: Memory
    embedding: bytes | None


@dataclass(frozen=True)
class DecodedItem:
    """An item row with its body unsealed and parsed, kept serialised (`marshal`, which holds JSON's types and loads
    them three times faster than `json`): every read loads its own copy, so a caller may change the body it gets
    without changing what the next reader sees. The bytes never leave the process.

    `forms`: what `get_item_forms` made of this row, by the function that made it, shared by every reader since no
    caller changes a form. They go when the row goes (a write of the item, an erasure, another connection's commit),
    so a form is never older than the row it was made from."""

    kind: str
    key: str
    body: bytes
    version: int
    updated_at: datetime
    expires_at: datetime | None
    forms: dict[Callable[..., Any], Any] = field(default_factory=dict, compare=False, repr=False)


class _Bounded(Generic[_K, _V]):
    """Least recently used first out, past `capacity` entries."""

    def __init__(self, capacity: int, dropped: Callable[[], None]) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[_K, _V] = OrderedDict()
        self._dropped = dropped

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: _K) -> bool:
        return key in self._entries

    def get_many(self, keys: Iterable[_K]) -> tuple[dict[_K, _V], list[_K]]:
        """What is kept of the keys, by key, each now the most recently used, and the keys that are not, in order."""
        entries, recent = self._entries, self._entries.move_to_end
        found: dict[_K, _V] = {}
        missing: list[_K] = []
        for key in keys:
            value = entries.get(key)
            if value is None:
                missing.append(key)
            else:
                recent(key)
                found[key] = value
        return found, missing

    def put(self, key: _K, value: _V) -> None:
        if self._capacity <= 0:
            return
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self._capacity:
            self._entries.popitem(last=False)

    def drop(self, key: _K) -> None:
        self._dropped()
        self._entries.pop(key, None)

    def drop_person(self, tenant_id: str, user_id: str) -> None:
        self._dropped()
        for key in [k for k in self._entries if k[0] == tenant_id and k[1] == user_id]:
            del self._entries[key]

    def clear(self) -> None:
        self._dropped()
        self._entries.clear()


# What an item key maps to when the item is known not to exist: most candidates of a recall have no edges item
# until enrichment links them, and a lookup that finds nothing is as worth keeping as one that finds something.
ABSENT = DecodedItem(kind="", key="", body=b"", version=0, updated_at=datetime.min, expires_at=None)


class DecodedRows:
    """Not thread-safe by itself: the store calls it with its connection's lock held, and a read that decoded rows
    without it keeps them only when `generation` shows no drop since its query, so a read cannot put back a row that
    a write dropped while the read was under way."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.memories: _Bounded[MemoryKey, DecodedMemory] = _Bounded(capacity, self._dropped)
        self.items: _Bounded[ItemKey, DecodedItem] = _Bounded(capacity, self._dropped)
        self._data_version: int | None = None
        # Counts the drops: a read that decoded rows outside the lock keeps them only if none happened meanwhile.
        self.generation = 0

    def _dropped(self) -> None:
        self.generation += 1

    def seen(self, data_version: int) -> None:
        """Called before a read with the file's `PRAGMA data_version`: another connection committed since the last
        read when it changed, and nothing kept can be trusted then."""
        if data_version != self._data_version:
            self.clear()
            self._data_version = data_version

    def drop_person(self, tenant_id: str, user_id: str) -> None:
        self.memories.drop_person(tenant_id, user_id)
        self.items.drop_person(tenant_id, user_id)

    def clear(self) -> None:
        self.memories.clear()
        self.items.clear()
