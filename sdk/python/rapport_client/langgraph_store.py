"""`RapportStore`: a LangGraph `BaseStore` whose items are an end user's Rapport memories, so a graph's long-term
memory is recalled by meaning, decays and is governed like every other memory of that person.

Namespaces are `("users", user_id, "user" | "relational")`: the end user and the memory domain. An item is one
memory; its key and value live in the memory's metadata (`metadata["langgraph"]`), its text (what recall embeds
and searches) in the memory's content. Memories Rapport made itself (from recorded conversations) appear as items
whose key is the memory's id."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from rapport_client.client import Rapport
from rapport_client.errors import InvalidRequest, NotFound
from rapport_client.models import Memory, RecallHit

ROOT = "users"
DOMAINS = ("user", "relational")
METADATA_KEY = "langgraph"
TEXT_FIELDS = ("content", "text", "memory")
# The memory type an item is stored as, per domain (the server's defaults); `memory_types=` chooses others.
ITEM_TYPES = {"user": "fact", "relational": "shared_context"}
MAX_RECALL = 100  # the server's largest page: the most one recall can answer
_MEMORY_ID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")  # a ULID, the form of a memory id


class RapportStore(BaseStore):
    """A LangGraph store over one `Rapport` client (its tenant: the API key's).

    - `put(("users", u, d), key, value)` stores a memory of domain `d` for end user `u`; again with the same key
      updates that memory (same id); `value=None` or `delete` deletes it.
    - `get` returns the item by key; `search(("users", u[, d]), query=...)` is Rapport's recall (best first,
      `score` its similarity), without a query the newest memories; `filter` is applied to the values.
    - `list_namespaces` needs a prefix naming the user (Rapport cannot list its end users).

    Rapport always indexes a memory's text: `index=False` still makes the item searchable, and `index=[fields]`
    chooses which fields form that text. The text is the value's `content` (or `text`, `memory`) string when it has
    one, else the value as JSON. TTLs are not supported (`supports_ttl = False`): Rapport's own decay and retention
    govern how long a memory lives. The async methods run the blocking client in a worker thread.

    Finding a key the store has not seen costs one pass over the user's memories of the items' type (`fact`,
    `shared_context`, or `memory_types=`); `sole_writer=True` says no other process writes these keys, so a key not
    found once is new and a put of it is one request."""

    supports_ttl = False

    def __init__(
        self,
        client: Rapport,
        *,
        memory_types: Mapping[str, str] | None = None,
        sole_writer: bool = False,
        page_size: int = 100,
        agent_id: str | None = None,
    ) -> None:
        self._client = client
        # The tenant's assistant whose relational items these are (None: the client's); user items are every one's.
        self._agent = agent_id
        self._types = {**ITEM_TYPES, **(memory_types or {})}
        self._sole_writer = sole_writer
        self._page_size = page_size
        # (user, domain, key) → memory id, so a get or put of a known key is one request, not a scan.
        self._ids: dict[tuple[str, str, str], str] = {}
        # The (user, domain) whose items were all seen: with a sole writer, a key missing there is new.
        self._scanned: set[tuple[str, str]] = set()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            user, domain = _place(op.namespace)
            found = self._find(user, domain, op.key)
            return _item(found) if found else None
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown store operation: {type(op).__name__}")

    # get / put / delete

    def _find(self, user: str, domain: str, key: str) -> Memory | None:
        known = self._ids.get((user, domain, key))
        if known is not None:
            memory = self._fetch(user, known)
            if memory is not None and memory.domain == domain and _key(memory) == key:
                return memory
            self._ids.pop((user, domain, key), None)
        if _MEMORY_ID.match(key):
            memory = self._fetch(user, key)
            if memory is not None and memory.domain == domain and _key(memory) == key:
                return memory
        if self._sole_writer and (user, domain) in self._scanned:
            return None
        # No lookup by metadata on the server: one pass over the memories of the type items are stored as (not the
        # conversation's episodes), remembering every key it sees so later calls go straight to their memory.
        listed = self._client.memories.list(
            user, domain=domain, type=self._types[domain], page_size=self._page_size, agent_id=self._agent
        )
        for memory in listed:
            self._ids[(user, domain, _key(memory))] = memory.id
            if _key(memory) == key:
                return memory
        self._scanned.add((user, domain))
        return None

    def _fetch(self, user: str, memory_id: str) -> Memory | None:
        try:
            return self._client.memories.get(user, memory_id, agent_id=self._agent)
        except (NotFound, InvalidRequest):
            return None

    def _put(self, op: PutOp) -> None:
        if op.ttl is not None:
            raise NotImplementedError("RapportStore does not support TTLs: Rapport's decay governs a memory's life")
        user, domain = _place(op.namespace)
        existing = self._find(user, domain, op.key)
        if op.value is None:
            if existing is not None:
                self._client.memories.delete(user, existing.id, agent_id=self._agent)
            self._ids.pop((user, domain, op.key), None)
            return
        content, metadata = _stored(op.key, op.value, op.index)
        if existing is not None:
            memory = self._client.memories.update(
                user, existing.id, content=content, metadata=metadata, agent_id=self._agent
            )
        else:
            memory = self._client.memories.add(
                user, content, domain=domain, type=self._types[domain], metadata=metadata, agent_id=self._agent
            )
        self._ids[(user, domain, op.key)] = memory.id

    # search

    def _search(self, op: SearchOp) -> list[SearchItem]:
        user, domain = _scope(op.namespace_prefix)
        if op.query:
            wanted = op.offset + op.limit
            # A filter drops hits after recall ranks them: ask for the most recall answers, so it has some to drop.
            asked = MAX_RECALL if op.filter else min(wanted, MAX_RECALL)
            hits = self._client.memories.search(
                user, op.query, limit=asked, domain=domain or "both", agent_id=self._agent
            ).memories
            matched: Iterator[SearchItem] = (_search_item(h) for h in hits if _matches(_value(h), op.filter))
        else:
            listed = self._client.memories.list(user, domain=domain, page_size=self._page_size, agent_id=self._agent)
            matched = (_search_item(m) for m in listed if _matches(_value(m), op.filter))
        return list(islice(matched, op.offset, op.offset + op.limit))

    # namespaces

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        user = _user_of(conditions)
        if user is None:
            raise NotImplementedError(
                "Rapport cannot list its end users: list the namespaces of one, with "
                "prefix=('users', user_id) (its domains that hold memories)"
            )
        held = [(ROOT, user, d) for d in DOMAINS if self._holds(user, d)]
        namespaces: list[tuple[str, ...]] = []
        for namespace in held:
            if all(_condition_holds(c, namespace) for c in conditions):
                cut = namespace[: op.max_depth] if op.max_depth is not None else namespace
                if cut not in namespaces:
                    namespaces.append(cut)
        return namespaces[op.offset : op.offset + op.limit]

    def _holds(self, user: str, domain: str) -> bool:
        listed = self._client.memories.list(user, domain=domain, page_size=1, agent_id=self._agent)
        return next(iter(listed), None) is not None


# Namespaces


def _place(namespace: tuple[str, ...]) -> tuple[str, str]:
    """The end user and domain of an item's namespace."""
    if len(namespace) != 3 or namespace[0] != ROOT or not namespace[1] or namespace[2] not in DOMAINS:
        raise InvalidNamespaceError(
            f"a Rapport namespace is ('users', user_id, 'user' | 'relational'), not {namespace!r}"
        )
    return namespace[1], namespace[2]


def _scope(prefix: tuple[str, ...]) -> tuple[str, str | None]:
    """The end user and (optional) domain a search prefix names; one user per search, as recall is per user."""
    if len(prefix) < 2 or prefix[0] != ROOT:
        raise NotImplementedError(
            f"Rapport searches one end user at a time: use the prefix ('users', user_id[, domain]), not {prefix!r}"
        )
    if len(prefix) == 2:
        return prefix[1], None
    return _place(prefix)


def _user_of(conditions: Sequence[MatchCondition]) -> str | None:
    for condition in conditions:
        path = condition.path
        if condition.match_type == "prefix" and len(path) >= 2 and path[0] == ROOT and path[1] != "*":
            return path[1]
    return None


def _condition_holds(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))


# Items ↔ memories


def _stored(key: str, value: Mapping[str, Any], index: Any) -> tuple[str, dict[str, Any]]:
    """The memory's content (what recall embeds) and metadata for an item's value."""
    data = dict(value)
    if isinstance(index, list) and index:
        text = " ".join(str(v) for v in (_at(data, path) for path in index) if v is not None)
        return text or json.dumps(data, ensure_ascii=False), {METADATA_KEY: {"key": key, "value": data}}
    field = next((f for f in TEXT_FIELDS if isinstance(data.get(f), str) and data[f].strip()), None)
    if field is None:
        return json.dumps(data, ensure_ascii=False, sort_keys=True), {METADATA_KEY: {"key": key, "value": data}}
    # The text is kept once, as the content; the rest of the value rides in the metadata (its size is bounded).
    rest = {k: v for k, v in data.items() if k != field}
    return data[field], {METADATA_KEY: {"key": key, "value": rest, "text_field": field}}


def _at(data: Mapping[str, Any], path: str) -> Any:
    current: Any = data
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
    return current


def _entry(memory: Memory) -> Mapping[str, Any] | None:
    entry = memory.metadata.get(METADATA_KEY)
    return entry if isinstance(entry, Mapping) and isinstance(entry.get("key"), str) else None


def _key(memory: Memory) -> str:
    entry = _entry(memory)
    return entry["key"] if entry is not None else memory.id


def _value(memory: Memory) -> dict[str, Any]:
    entry = _entry(memory)
    if entry is None:  # a memory Rapport made: its text and kind
        return {"content": memory.content, "type": memory.type}
    value = dict(entry.get("value") or {})
    field = entry.get("text_field")
    if isinstance(field, str):
        value[field] = memory.content
    return value


def _item(memory: Memory) -> Item:
    return Item(
        value=_value(memory),
        key=_key(memory),
        namespace=(ROOT, memory.user_id, memory.domain),
        created_at=memory.created_at,
        updated_at=memory.updated_at,
    )


def _search_item(memory: Memory) -> SearchItem:
    return SearchItem(
        namespace=(ROOT, memory.user_id, memory.domain),
        key=_key(memory),
        value=_value(memory),
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        score=memory.similarity if isinstance(memory, RecallHit) else None,
    )


# Filters: LangGraph's operators over the item's value


def _matches(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    if not conditions:
        return True
    for field, expected in conditions.items():
        actual = _at(value, field)
        if isinstance(expected, Mapping) and expected and all(str(k).startswith("$") for k in expected):
            if not all(_compare(actual, op, operand) for op, operand in expected.items()):
                return False
        elif actual != expected:
            return False
    return True


def _compare(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        try:
            if op == "$gt":
                return bool(actual > operand)
            if op == "$gte":
                return bool(actual >= operand)
            if op == "$lt":
                return bool(actual < operand)
            return bool(actual <= operand)
        except TypeError:  # a missing field or another type never matches an ordering
            return False
    raise ValueError(f"unsupported filter operator {op!r}: use $eq, $ne, $gt, $gte, $lt or $lte")
