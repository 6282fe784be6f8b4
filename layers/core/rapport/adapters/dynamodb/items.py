"""DynamoDB side of the `ItemStore` port: versioned items in the end user's (or tenant's) partition."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from rapport.adapters.dynamodb import keys as keys
from rapport.adapters.dynamodb.table import query_page, translated
from rapport.domain.models import Page
from rapport.errors import ConflictError
from rapport.ports.items import ItemQuery, ItemScope, StoredItem, check_kind

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table


def _partition(scope: ItemScope) -> str:
    if scope.user_id is None:
        return keys.tenant_partition(scope.tenant_id)
    return keys.user_partition(scope.tenant_id, scope.user_id)


def _sort_key(kind: str, key: str) -> str:
    """`STATE` for a singleton, `PERSON#sarah` or `EDGE#{src}#{TYPE}#{dst}` otherwise (docs/data-model.md)."""
    return check_kind(kind) if not key else f"{check_kind(kind)}#{key}"


def _item_from_record(record: dict[str, Any]) -> StoredItem:
    expires = record.get("expires_at")
    return StoredItem(
        kind=str(record["kind"]),
        key=str(record["item_key"]),
        body=json.loads(str(record["body"])),
        version=int(record["version"]),
        updated_at=keys.parse_time(str(record["updated_at"])),
        expires_at=datetime.fromtimestamp(int(expires), UTC) if expires is not None else None,
    )


class DynamoDbItems:
    """Mixed into the DynamoDB store: the same table, the same partitions, so erasing a user removes these too."""

    @property
    def _table(self) -> Table:
        raise NotImplementedError  # the store provides its lazily built table

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
        # One UpdateItem: the version increment and the optimistic check happen atomically on the server.
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
            ":body": json.dumps(body, separators=(",", ":")),
            ":kind": kind,
            ":key": key,
            ":now": keys.format_time(now),
            ":zero": 0,
            ":one": 1,
        }
        expression = "SET " + ", ".join(sets)
        if expires_at is not None:
            expression = expression.replace("SET ", "SET #expires = :expires, ", 1)
            values[":expires"] = int(expires_at.timestamp())
        else:
            expression += " REMOVE #expires"
        request: dict[str, Any] = {
            "Key": {keys.PARTITION_KEY: _partition(scope), keys.SORT_KEY: _sort_key(kind, key)},
            "UpdateExpression": expression,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
            "ReturnValues": "ALL_NEW",
        }
        if expected_version == 0:
            request["ConditionExpression"] = "attribute_not_exists(#version)"
        elif expected_version is not None:
            request["ConditionExpression"] = "#version = :expected"
            values[":expected"] = expected_version
        with translated(f"put {kind} item"):
            try:
                response = self._table.update_item(**request)
            except ClientError as exc:
                # A failed optimistic check is a conflict the caller retries, not a storage failure.
                if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                    message = f"{kind} {key!r} changed concurrently (expected version {expected_version})"
                    raise ConflictError(message) from exc
                raise
        return _item_from_record(response["Attributes"])

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
