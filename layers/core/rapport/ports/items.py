"""Port `ItemStore`: small typed items beside the memories (state, profile, people, edges, sessions, decisions…).

One generic mechanism instead of one adapter method per feature: a feature keeps its own pydantic model and a
repository that turns it into a `body`; the adapters only know kinds, keys, versions and expiry. In DynamoDB an item
lives in the end user's partition (`TENANT#{t}#USER#{u}`, sort key `{KIND}` or `{KIND}#{key}`), or in the tenant's
partition (`TENANT#{t}`) when it belongs to the tenant as a whole, so erasing an end user removes their items too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, field_validator

from rapport.domain.models import Page
from rapport.domain.scope import DEFAULT_AGENT, Scope

# Kinds the stores use for their own items; a feature cannot shadow them.
RESERVED_KINDS = frozenset({"MEM", "EMB", "INT", "USER", "APIKEY", "AUDIT", "TENANT"})
_KIND = re.compile(r"^[A-Z][A-Z0-9_]{0,31}$")


class ItemScope(BaseModel):
    """Whose item it is: one end user of a tenant, or (user_id None) the tenant itself."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    user_id: str | None = None

    @classmethod
    def of_user(cls, scope: Scope) -> ItemScope:
        """The end user's own items; a tenant's items are `ItemScope(tenant_id=…)`."""
        return cls(tenant_id=scope.tenant_id, user_id=scope.user_id)


class StoredItem(BaseModel):
    kind: str
    key: str
    body: dict[str, Any]
    version: int
    updated_at: datetime
    expires_at: datetime | None = None

    def is_live(self, now: datetime) -> bool:
        """Expiry in the table is lazy (DynamoDB TTL can lag by hours), so readers check it themselves."""
        return self.expires_at is None or self.expires_at > now


def check_kind(kind: str) -> str:
    if not _KIND.fullmatch(kind) or kind in RESERVED_KINDS:
        raise ValueError(f"item kind {kind!r} must be UPPER_SNAKE (1-32 chars) and not one of {sorted(RESERVED_KINDS)}")
    return kind


class ItemQuery(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: str
    key_prefix: str = ""
    limit: int = 100
    cursor: str | None = None
    descending: bool = False

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        return check_kind(value)


ItemRef = tuple[str, str]  # (kind, key): one item of a scope

# One assistant's part of a person's relationship (its state, reported events, sessions) sits in the person's
# partition beside what every assistant shares. The default assistant's items keep the kinds and keys they had before
# assistants had names (`STATE`, `STATE_EVENT#{id}`, `SESSION#{id}`), so items already stored read unchanged; a named
# assistant's take the kind `AGENT_{KIND}` and a key that starts with the assistant (`AGENT_STATE#coach`,
# `AGENT_STATE_EVENT#coach#{id}`): a listing of one assistant's items is one key prefix, and never meets another's.
AGENT_KIND_PREFIX = "AGENT_"
# The kinds the default assistant's relationship is kept under: what an erasure counts as its share.
DEFAULT_RELATIONSHIP_KINDS = frozenset({"STATE", "STATE_EVENT", "STATE_EVENT_KEY", "SESSION"})


def relationship_ref(kind: str, key: str, agent_id: str) -> ItemRef:
    """Where one assistant keeps its item `(kind, key)` of a person's relationship."""
    if agent_id == DEFAULT_AGENT:
        return (kind, key)
    return (f"{AGENT_KIND_PREFIX}{kind}", f"{agent_id}#{key}" if key else agent_id)


def relationship_query(kind: str, agent_id: str, **options: Any) -> ItemQuery:
    """One assistant's items of a kind (`relationship_ref`), listed with the options of `ItemQuery`."""
    if agent_id == DEFAULT_AGENT:
        return ItemQuery(kind=kind, **options)
    return ItemQuery(kind=f"{AGENT_KIND_PREFIX}{kind}", key_prefix=f"{agent_id}#", **options)


def relationship_of(kind: str, key: str) -> str | None:
    """The assistant whose relationship an item is part of, None for an item every assistant shares."""
    if kind.startswith(AGENT_KIND_PREFIX):
        return key.split("#", 1)[0]
    return DEFAULT_AGENT if kind in DEFAULT_RELATIONSHIP_KINDS else None


class ItemPut(BaseModel):
    """One item created or replaced whole, as `put_item` does, inside `write_items`."""

    model_config = ConfigDict(frozen=True)

    kind: str
    key: str
    body: dict[str, Any]
    expected_version: int | None = None
    expires_at: datetime | None = None

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        return check_kind(value)


class FieldChange(BaseModel):
    """Named fields of one item set and removed without reading it first (the item is created when missing): the
    body of such an item is its fields, each written on its own, so two writers of different fields never
    conflict and a writer needs no read. A kind is written either whole (`ItemPut`) or by field, never both."""

    model_config = ConfigDict(frozen=True)

    kind: str
    key: str
    set: dict[str, Any] = {}
    remove: frozenset[str] = frozenset()

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        return check_kind(value)


class ItemDelete(BaseModel):
    """One item removed inside `write_items`; with `expected_version`, only while it is still that version (a
    concurrent change makes the whole call a ConflictError)."""

    model_config = ConfigDict(frozen=True)

    kind: str
    key: str
    expected_version: int | None = None

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str) -> str:
        return check_kind(value)


ItemWrite = ItemPut | FieldChange | ItemDelete


def check_writes(writes: Sequence[ItemWrite]) -> None:
    """One write per item: a transaction may name an item once, and two writes of one item have no order."""
    seen: set[ItemRef] = set()
    for write in writes:
        ref = (write.kind, write.key)
        if ref in seen:
            raise ValueError(f"{write.kind} {write.key!r} is written twice in one write_items call")
        seen.add(ref)


class ItemStore(Protocol):
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
        """Create or replace. With `expected_version` (0 = must not exist yet) a concurrent change raises
        ConflictError instead of being overwritten; the stored version is always the previous one plus one."""

    def get_item(self, scope: ItemScope, kind: str, key: str) -> StoredItem | None: ...

    def get_items(self, scope: ItemScope, refs: Iterable[ItemRef]) -> dict[ItemRef, StoredItem]:
        """The items that exist among `refs`, read together (DynamoDB: BatchGetItem, 100 keys a request)."""

    def write_items(self, scope: ItemScope, writes: Sequence[ItemWrite], *, now: datetime) -> None:
        """Every write, all of them or none (DynamoDB: one TransactWriteItems per 100 items, one UpdateItem for a
        single write); an item appears at most once. A put whose `expected_version` no longer holds is ConflictError
        and nothing of that call is written."""

    def list_items(self, scope: ItemScope, query: ItemQuery) -> Page[StoredItem]:
        """Items of one kind whose key starts with the prefix, in key order (reversed when descending)."""

    def delete_item(self, scope: ItemScope, kind: str, key: str) -> bool:
        """True when something was deleted."""


_Form = TypeVar("_Form")


@runtime_checkable
class SharedItemForms(Protocol):
    """What an item store that keeps decoded rows in process may offer beside `get_items`: a read-only form of each
    item, made once from the item and handed to every reader until the item is written, where `get_items` gives each
    read its own copy of the body (recall reads the same adjacency items query after query, and only to score them)."""

    def get_item_forms(
        self, scope: ItemScope, refs: Iterable[ItemRef], form: Callable[[StoredItem], _Form]
    ) -> dict[ItemRef, _Form]:
        """`form(item)` for each item that exists among `refs`, as `get_items` reads them. `form` is a module-level
        pure function of the item (the store keeps what it made by function), and no caller changes what it
        returns: the same object goes to every reader until the item is written or the store's rows are dropped."""
