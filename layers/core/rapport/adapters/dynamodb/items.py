"""DynamoDB side of the `ItemStore` port: versioned items in the end user's (or tenant's) partition."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from rapport.adapters.dynamodb import keys as keys
from rapport.adapters.dynamodb.table import TRANSACTION_SIZE, batch_get, query_page, transact_write, translated
from rapport.domain.models import Page
from rapport.errors import ConflictError
from rapport.ports.items import (
    FieldChange,
    ItemDelete,
    ItemPut,
    ItemQuery,
    ItemRef,
    ItemScope,
    ItemWrite,
    StoredItem,
    check_kind,
    check_writes,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import DynamoDBServiceResource, Table

# A field of a field-written item (`FieldChange`) is a top-level attribute of its own, so setting one is a blind
# update that never rewrites (or conflicts with) the others.
FIELD_PREFIX = "f:"


def _partition(scope: ItemScope) -> str:
    if scope.user_id is None:
        return keys.tenant_partition(scope.tenant_id)
    return keys.user_partition(scope.tenant_id, scope.user_id)


def _sort_key(kind: str, key: str) -> str:
    """`STATE` for a singleton, `PERSON#sarah` or `EDGE#{src}#{TYPE}#{dst}` otherwise (docs/data-model.md)."""
    return check_kind(kind) if not key else f"{check_kind(kind)}#{key}"


def _item_from_record(record: dict[str, Any]) -> StoredItem:
    expires = record.get("expires_at")
    body: dict[str, Any] = json.loads(str(record["body"])) if "body" in record else {}
    for name, value in record.items():
        if name.startswith(FIELD_PREFIX):
            body[name[len(FIELD_PREFIX) :]] = json.loads(str(value))
    return StoredItem(
        kind=str(record["kind"]),
        key=str(record["item_key"]),
        body=body,
        version=int(record["version"]),
        updated_at=keys.parse_time(str(record["updated_at"])),
        expires_at=datetime.fromtimestamp(int(expires), UTC) if expires is not None else None,
    )


class DynamoDbItems:
    """Mixed into the DynamoDB store: the same table, the same partitions, so erasing a user removes these too."""

    _table_name: str

    @property
    def _table(self) -> Table:
        raise NotImplementedError  # the store provides its lazily built table

    @property
    def _dynamodb(self) -> DynamoDBServiceResource:
        raise NotImplementedError  # the store provides its lazily built resource

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
        put = ItemPut(kind=kind, key=key, body=body, expected_version=expected_version, expires_at=expires_at)
        request = _put_request(scope, put, now)
        with translated(f"put {kind} item"):
            try:
                response = self._table.update_item(**request, ReturnValues="ALL_NEW")
            except ClientError as exc:
                # A failed optimistic check is a conflict the caller retries, not a storage failure.
                if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                    message = f"{kind} {key!r} changed concurrently (expected version {expected_version})"
                    raise ConflictError(message) from exc
                raise
        return _item_from_record(response["Attributes"])

    def get_items(self, scope: ItemScope, refs: Iterable[ItemRef]) -> dict[ItemRef, StoredItem]:
        pk = _partition(scope)
        wanted = [{keys.PARTITION_KEY: pk, keys.SORT_KEY: _sort_key(kind, key)} for kind, key in dict.fromkeys(refs)]
        found = [_item_from_record(dict(r)) for r in batch_get(self._dynamodb, self._table_name, wanted)]
        return {(item.kind, item.key): item for item in found}

    def write_items(self, scope: ItemScope, writes: Sequence[ItemWrite], *, now: datetime) -> None:
        check_writes(writes)
        actions = [_action(scope, write, now) for write in writes]
        if len(actions) == 1:
            # One item needs no transaction (which costs twice the write units).
            ((verb, request),) = actions[0].items()
            call = {"Update": self._table.update_item, "Delete": self._table.delete_item}[verb]
            with translated(f"write {writes[0].kind} item"):
                try:
                    call(**{k: v for k, v in request.items() if k != "TableName"})
                except ClientError as exc:
                    if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                        raise ConflictError(f"{writes[0].kind} {writes[0].key!r} changed concurrently") from exc
                    raise
            return
        for start in range(0, len(actions), TRANSACTION_SIZE):
            transact_write(self._dynamodb, self._table_name, actions[start : start + TRANSACTION_SIZE], "write items")

    def get_item(self, scope: ItemScope, kind: str, key: str) -> StoredItem | None:
        with translated(f"get {kind} item"):
            response = self._table.get_item(
                Key={keys.PARTITION_KEY: _partition(scope), keys.SORT_KEY: _sort_key(kind, key)}, ConsistentRead=True
            )
        record = response.get("Item")
        return _item_from_record(dict(record)) if record else None

    def list_items(self, scope: ItemScope, query: ItemQuery) -> Page[StoredItem]:
        pk = _partition(scope)
        prefix = f"{query.kind}#{query.key_prefix}"
        records, next_cursor = query_page(
            self._table,
            key_condition=Key(keys.PARTITION_KEY).eq(pk) & Key(keys.SORT_KEY).begins_with(prefix),
            index_name=None,
            limit=query.limit,
            cursor=query.cursor,
            pins={keys.PARTITION_KEY: pk},
            prefixes={keys.SORT_KEY: prefix},
            newest_first=query.descending,
        )
        return Page[StoredItem](items=[_item_from_record(dict(r)) for r in records], next_cursor=next_cursor)

    def delete_item(self, scope: ItemScope, kind: str, key: str) -> bool:
        with translated(f"delete {kind} item"):
            response = self._table.delete_item(
                Key={keys.PARTITION_KEY: _partition(scope), keys.SORT_KEY: _sort_key(kind, key)},
                ReturnValues="ALL_OLD",
            )
        return "Attributes" in response


def _key(scope: ItemScope, kind: str, key: str) -> dict[str, str]:
    return {keys.PARTITION_KEY: _partition(scope), keys.SORT_KEY: _sort_key(kind, key)}


def _put_request(scope: ItemScope, put: ItemPut, now: datetime) -> dict[str, Any]:
    """One UpdateItem: the version increment and the optimistic check happen atomically on the server."""
    sets = ["#body = :body", "#kind = :kind", "#item_key = :key", "#updated_at = :now"]
    sets.append("#version = if_not_exists(#version, :zero) + :one")
    names = {
        "#body": "body",
        "#kind": "kind",
        "#item_key": "item_key",
        "#updated_at": "updated_at",
        "#version": "version",
        "#expires": keys.TTL_ATTRIBUTE,
    }
    values: dict[str, Any] = {
        ":body": json.dumps(put.body, separators=(",", ":")),
        ":kind": put.kind,
        ":key": put.key,
        ":now": keys.format_time(now),
        ":zero": 0,
        ":one": 1,
    }
    expression = "SET " + ", ".join(sets)
    if put.expires_at is not None:
        expression = expression.replace("SET ", "SET #expires = :expires, ", 1)
        values[":expires"] = int(put.expires_at.timestamp())
    else:
        expression += " REMOVE #expires"
    request: dict[str, Any] = {
        "Key": _key(scope, put.kind, put.key),
        "UpdateExpression": expression,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }
    if put.expected_version == 0:
        request["ConditionExpression"] = "attribute_not_exists(#version)"
    elif put.expected_version is not None:
        request["ConditionExpression"] = "#version = :expected"
        values[":expected"] = put.expected_version
    return request


def _field_request(scope: ItemScope, change: FieldChange, now: datetime) -> dict[str, Any]:
    names = {"#kind": "kind", "#item_key": "item_key", "#updated_at": "updated_at", "#version": "version"}
    values: dict[str, Any] = {":kind": change.kind, ":key": change.key, ":now": keys.format_time(now), ":one": 1}
    sets = ["#kind = :kind", "#item_key = :key", "#updated_at = :now"]
    for n, (name, value) in enumerate(sorted(change.set.items())):
        names[f"#f{n}"] = FIELD_PREFIX + name
        values[f":f{n}"] = json.dumps(value, separators=(",", ":"))
        sets.append(f"#f{n} = :f{n}")
    removed = sorted(change.remove - change.set.keys())
    for n, name in enumerate(removed):
        names[f"#r{n}"] = FIELD_PREFIX + name
    expression = "SET " + ", ".join(sets) + " ADD #version :one"
    if removed:
        expression += " REMOVE " + ", ".join(f"#r{n}" for n in range(len(removed)))
    return {
        "Key": _key(scope, change.kind, change.key),
        "UpdateExpression": expression,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }


def _action(scope: ItemScope, write: ItemWrite, now: datetime) -> dict[str, dict[str, Any]]:
    """The write as one TransactWriteItems action (its verb and its request)."""
    if isinstance(write, ItemPut):
        return {"Update": _put_request(scope, write, now)}
    if isinstance(write, FieldChange):
        return {"Update": _field_request(scope, write, now)}
    assert isinstance(write, ItemDelete)
    delete: dict[str, Any] = {"Key": _key(scope, write.kind, write.key)}
    if write.expected_version is not None:
        delete["ConditionExpression"] = "#version = :expected"
        delete["ExpressionAttributeNames"] = {"#version": "version"}
        delete["ExpressionAttributeValues"] = {":expected": write.expected_version}
    return {"Delete": delete}


def item_actions(scope: ItemScope, writes: Sequence[ItemWrite], now: datetime) -> list[dict[str, dict[str, Any]]]:
    """The writes as TransactWriteItems actions (without the table name), for a store write that carries them."""
    check_writes(writes)
    return [_action(scope, write, now) for write in writes]
