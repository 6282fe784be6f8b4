"""The DynamoDB write units a piece of work really costs, measured under moto: every write the store makes is seen
(botocore hooks, as `request_counts` counts requests), the items it touches are read before and after it, and the
units are DynamoDB's billing rules applied to those images, the global secondary indexes included.

moto reports no real consumed capacity, hence the images. The rules (DynamoDB developer guide, "capacity unit
consumption for write operations"): a write costs one unit per started KB of the larger of the item before and after
it (an UpdateItem of one attribute costs the whole item), a transactional write twice that; a GSI is written when an
attribute it holds changes, one unit per started KB of its entry, a delete and a put when its key changes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import Binary, TypeSerializer

_KB = 1024
_WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")
_SERIALIZER = TypeSerializer()

Image = Mapping[str, Any]  # an item in DynamoDB's wire format ({"S": ...}, {"N": ...}, ...)


@dataclass(frozen=True)
class IndexShape:
    """What one GSI holds of an item: its key attributes and the projected ones (None: ALL)."""

    partition: str
    sort: str
    projected: tuple[str, ...] | None


@dataclass
class WriteTally:
    """Writes by operation, the items they wrote, and the units billed to the table and to its indexes. `by_kind`
    splits the table's units by what was written (`MEM`, `EMB`, `GOVERNANCE_LEASE`, ...: the sort key's prefix)."""

    requests: Counter[str] = field(default_factory=Counter)
    items: int = 0
    table_units: int = 0
    index_units: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)

    @property
    def units(self) -> int:
        return self.table_units + self.index_units

    @property
    def request_count(self) -> int:
        return sum(self.requests.values())

    def reset(self) -> None:
        self.requests.clear()
        self.by_kind.clear()
        self.items = self.table_units = self.index_units = 0


def item_bytes(image: Image) -> int:
    """An item's size by DynamoDB's rules: attribute names plus values (strings in UTF-8, binaries raw, numbers
    about one byte per two significant digits plus one, lists and maps 3 bytes plus a byte per element)."""
    return sum(len(name.encode()) + _value_bytes(value) for name, value in image.items())


def _value_bytes(value: Mapping[str, Any]) -> int:
    (kind, inner), *_ = value.items()
    if kind == "S":
        return len(str(inner).encode())
    if kind == "N":
        digits = str(inner).lstrip("-").replace(".", "").lstrip("0").rstrip("0") or "0"
        return math.ceil(len(digits) / 2) + 1
    if kind == "B":
        return len(inner if isinstance(inner, bytes | bytearray) else bytes(inner))
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "L":
        return 3 + sum(1 + _value_bytes(v) for v in inner)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + _value_bytes(v) for k, v in inner.items())
    if kind in ("SS", "NS", "BS"):
        return sum(_value_bytes({kind[0]: v}) for v in inner)
    raise ValueError(f"unknown DynamoDB type {kind}")


def _units(size: int) -> int:
    return max(1, math.ceil(size / _KB))


def write_units(before: Image | None, after: Image | None, *, transactional: bool = False) -> int:
    """The table's units for one item written from `before` to `after` (None: absent)."""
    size = max(item_bytes(before) if before else 0, item_bytes(after) if after else 0)
    return _units(size) * (2 if transactional else 1)


def _entry(image: Image | None, index: IndexShape, table_keys: tuple[str, str]) -> dict[str, Any] | None:
    if not image or index.partition not in image or index.sort not in image:
        return None
    wanted = set(table_keys) | {index.partition, index.sort}
    return {
        name: value
        for name, value in image.items()
        if name in wanted or index.projected is None or name in index.projected
    }


def index_units(
    before: Image | None, after: Image | None, indexes: Sequence[IndexShape], table_keys: tuple[str, str]
) -> int:
    """The units the GSIs cost for one item written from `before` to `after`."""
    total = 0
    for index in indexes:
        old, new = _entry(before, index, table_keys), _entry(after, index, table_keys)
        if old == new:
            continue
        if old is None or new is None:
            total += _units(item_bytes(old or new or {}))
        elif (old[index.partition], old[index.sort]) == (new[index.partition], new[index.sort]):
            total += _units(max(item_bytes(old), item_bytes(new)))
        else:
            total += _units(item_bytes(old)) + _units(item_bytes(new))
    return total


class WriteMeter:
    """Watches one client's writes to one table and adds what each costs to `tally`. `reader` is a client of the
    same (moto) endpoint without the hooks, which reads the images; keys in the table's key attributes."""

    def __init__(
        self,
        client: Any,
        reader: Any,
        table_name: str,
        *,
        table_keys: tuple[str, str],
        indexes: Sequence[IndexShape],
        tally: WriteTally | None = None,
    ) -> None:
        self.tally = tally or WriteTally()
        self._reader = reader
        self._table = table_name
        self._keys = table_keys
        self._indexes = tuple(indexes)
        self._pending: list[tuple[dict[str, Any], Image | None, bool]] = []
        client.meta.events.register("provide-client-params.dynamodb", self._before)
        client.meta.events.register("after-call.dynamodb", self._after)

    def _before(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        if model.name not in _WRITES:
            return
        self.tally.requests[model.name] += 1
        transactional = model.name == "TransactWriteItems"
        self._pending = [(key, self._read(key), transactional) for key in self._written_keys(model.name, params)]

    def _after(self, model: Any, **_: Any) -> None:
        if model.name not in _WRITES:
            return
        for key, before, transactional in self._pending:
            after = self._read(key)
            units = write_units(before, after, transactional=transactional)
            self.tally.items += 1
            self.tally.table_units += units
            self.tally.by_kind[_kind(key, self._keys[1])] += units
            self.tally.index_units += index_units(before, after, self._indexes, self._keys)
        self._pending = []

    def _written_keys(self, operation: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        if operation == "PutItem":
            return [self._key_of(params["Item"])]
        if operation in ("UpdateItem", "DeleteItem"):
            return [self._key_of(params["Key"])]
        if operation == "BatchWriteItem":
            requests = params["RequestItems"].get(self._table, [])
            return [
                self._key_of(r["PutRequest"]["Item"] if "PutRequest" in r else r["DeleteRequest"]["Key"])
                for r in requests
            ]
        keys: list[dict[str, Any]] = []
        for action in params["TransactItems"]:
            (kind, body), *_ = action.items()
            if kind == "ConditionCheck":
                continue
            keys.append(self._key_of(body["Item"] if kind == "Put" else body["Key"]))
        return keys

    def _key_of(self, item: Mapping[str, Any]) -> dict[str, Any]:
        return {name: _wire(item[name]) for name in self._keys}

    def _read(self, key: Mapping[str, Any]) -> Image | None:
        found: Image | None = self._reader.get_item(TableName=self._table, Key=key, ConsistentRead=True).get("Item")
        return found


def _wire(value: Any) -> dict[str, Any]:
    """A key value in wire format, whether the caller passed a Python value (the resource) or a typed one."""
    if isinstance(value, Mapping) and len(value) == 1 and next(iter(value)) in ("S", "N", "B"):
        return dict(value)
    if isinstance(value, float):
        value = Decimal(repr(value))
    if isinstance(value, bytes):
        value = Binary(value)
    return dict(_SERIALIZER.serialize(value))


def _kind(key: Mapping[str, Any], sort_key: str) -> str:
    sort = str(next(iter(key[sort_key].values())))
    return sort.split("#", 1)[0] or sort
