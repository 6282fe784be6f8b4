"""Low-level access to the DynamoDB table: its schema, error translation, paged queries, batched reads and writes."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.conditions import ConditionBase
from botocore.exceptions import BotoCoreError, ClientError

from rapport.adapters.dynamodb import keys as keys
from rapport.errors import ConflictError, InvalidInputError, StorageError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import DynamoDBServiceResource, Table
    from mypy_boto3_dynamodb.type_defs import ProjectionTypeDef

Item = dict[str, Any]

BATCH_GET_SIZE = 100  # DynamoDB's BatchGetItem maximum
BATCH_WRITE_SIZE = 25  # DynamoDB's BatchWriteItem maximum
TRANSACTION_SIZE = 100  # DynamoDB's TransactWriteItems maximum
MAX_BATCH_ATTEMPTS = 6
_BACKOFF_BASE_SECONDS = 0.05
_BACKOFF_CAP_SECONDS = 2.0
# A filtered query's Limit counts the items it reads, not the ones it returns; reading a handful at a time would cost
# a round trip per discarded item, so a filtered page reads at least this many.
FILTERED_READ_BATCH = 50


def _projection(index_name: str) -> ProjectionTypeDef:
    if index_name in keys.PROJECTED_INDEXES:
        return {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(keys.MEMORY_INDEX_ATTRIBUTES)}
    return {"ProjectionType": "ALL"}


def create_table(dynamodb_resource: DynamoDBServiceResource, table_name: str) -> Table:
    """Create the table exactly as the CDK stack declares it (tests under moto, local tooling) and wait for it."""
    key_names = [keys.PARTITION_KEY, keys.SORT_KEY, *(name for pair in keys.GSI_KEYS.values() for name in pair)]
    table = dynamodb_resource.create_table(
        TableName=table_name,
        KeySchema=[
            {"AttributeName": keys.PARTITION_KEY, "KeyType": "HASH"},
            {"AttributeName": keys.SORT_KEY, "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in key_names],
        GlobalSecondaryIndexes=[
            {
                "IndexName": index_name,
                "KeySchema": [
                    {"AttributeName": partition, "KeyType": "HASH"},
                    {"AttributeName": sort, "KeyType": "RANGE"},
                ],
                "Projection": _projection(index_name),
            }
            for index_name, (partition, sort) in keys.GSI_KEYS.items()
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    table.wait_until_exists()
    dynamodb_resource.meta.client.update_time_to_live(
        TableName=table_name,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": keys.TTL_ATTRIBUTE},
    )
    return table


@contextmanager
def translated(action: str, *, cursor_given: bool = False) -> Iterator[None]:
    """botocore failures as domain errors: callers see StorageError (or a bad cursor), never a ClientError."""
    try:
        yield
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "Unknown")
        if cursor_given and code == "ValidationException":
            # The cursor passed our own checks but DynamoDB still refused it as a start key.
            raise InvalidInputError(keys.BAD_CURSOR) from exc
        raise StorageError(f"DynamoDB {action} failed ({code})") from exc
    except BotoCoreError as exc:
        raise StorageError(f"DynamoDB {action} failed: {exc}") from exc


def query_page(
    table: Table,
    *,
    key_condition: ConditionBase,
    index_name: str | None,
    limit: int,
    cursor: str | None,
    pins: Mapping[str, str],
    prefixes: Mapping[str, str],
    newest_first: bool,
    filter_expression: ConditionBase | None = None,
) -> tuple[list[Item], str | None]:
    """At most `limit` items and a cursor that is None exactly when nothing follows.

    One item beyond the page is read: it proves a next page exists, so a client never follows a cursor to an empty
    page. The cursor is the key of the last item returned (what LastEvaluatedKey would be had the page ended there),
    so items read past it are read again by the next page rather than lost.
    """
    if limit < 1:
        raise InvalidInputError(f"limit must be at least 1 (got {limit})")
    attributes = keys.key_attributes(index_name)
    start_key: Mapping[str, Any] | None = (
        keys.decode_cursor(cursor, attributes, pins, prefixes) if cursor is not None else None
    )
    wanted = limit + 1
    found: list[Item] = []
    while len(found) < wanted:
        remaining = wanted - len(found)
        request: dict[str, Any] = {
            "KeyConditionExpression": key_condition,
            "ScanIndexForward": not newest_first,
            "Limit": max(remaining, FILTERED_READ_BATCH) if filter_expression is not None else remaining,
        }
        if index_name is not None:
            request["IndexName"] = index_name
        if filter_expression is not None:
            request["FilterExpression"] = filter_expression
        if start_key:
            request["ExclusiveStartKey"] = start_key
        with translated("query", cursor_given=cursor is not None):
            response = table.query(**request)
        found.extend(response.get("Items", []))
        start_key = response.get("LastEvaluatedKey")
        if not start_key:
            break
    if len(found) <= limit:
        return found, None
    page = found[:limit]
    return page, keys.encode_cursor({name: page[-1][name] for name in attributes})


def batch_get(resource: DynamoDBServiceResource, table_name: str, wanted: list[Item]) -> list[Item]:
    """The items that exist among the keys (consistent reads), retrying what DynamoDB leaves unprocessed."""
    found: list[Item] = []
    for start in range(0, len(wanted), BATCH_GET_SIZE):
        pending: Mapping[str, Any] = {
            table_name: {"Keys": wanted[start : start + BATCH_GET_SIZE], "ConsistentRead": True}
        }
        attempt = 0
        while pending:
            with translated("batch get"):
                response = resource.batch_get_item(RequestItems=pending)  # type: ignore[arg-type]
            found.extend(response.get("Responses", {}).get(table_name, []))
            left: Mapping[str, Any] = response.get("UnprocessedKeys") or {}
            # Only calls that read nothing count against the limit: a busy table that still makes progress is
            # waited for, one that makes none is given up on.
            progressed = _size(left, "Keys") < _size(pending, "Keys")
            pending = left
            attempt = 0 if progressed else attempt + 1
            if pending and attempt >= MAX_BATCH_ATTEMPTS:
                raise StorageError("DynamoDB kept throttling a batch read; retry later")
            if pending:
                _back_off(attempt)
    return found


def _size(request: Mapping[str, Any], field: str | None = None) -> int:
    """How many keys (`field="Keys"`) or write requests a batch request holds."""
    return sum(len(body[field] if field else body) for body in request.values())


def batch_delete(resource: DynamoDBServiceResource, table_name: str, doomed: list[Item]) -> None:
    """Delete the keys in batches of 25, retrying what DynamoDB leaves unprocessed."""
    batch_write(resource, table_name, deletes=doomed, what="batch delete")


def batch_write(
    resource: DynamoDBServiceResource,
    table_name: str,
    *,
    puts: Sequence[Item] = (),
    deletes: Sequence[Item] = (),
    what: str = "batch write",
) -> None:
    """Put the items and delete the keys (none named twice) in batches of 25, retrying what DynamoDB leaves
    unprocessed. Not atomic, and unconditional: for writes that are whole on their own, or repaired by a retry."""
    requests: list[Item] = [{"PutRequest": {"Item": item}} for item in puts]
    requests += [{"DeleteRequest": {"Key": key}} for key in deletes]
    for start in range(0, len(requests), BATCH_WRITE_SIZE):
        pending: Mapping[str, Any] = {table_name: requests[start : start + BATCH_WRITE_SIZE]}
        attempt = 0
        while pending:
            with translated(what):
                response = resource.batch_write_item(RequestItems=pending)  # type: ignore[arg-type]
            left: Mapping[str, Any] = response.get("UnprocessedItems") or {}
            attempt = 0 if _size(left) < _size(pending) else attempt + 1
            pending = left
            if pending and attempt >= MAX_BATCH_ATTEMPTS:
                raise StorageError(f"DynamoDB kept throttling a {what}; retry later (it is safe to repeat)")
            if pending:
                _back_off(attempt)


def transact_put(resource: DynamoDBServiceResource, table_name: str, items: list[Item]) -> None:
    """Put up to TRANSACTION_SIZE items all-or-nothing (TransactWriteItems). The resource's client serializes the
    items' Python values as the table's own calls do."""
    actions = [{"Put": {"TableName": table_name, "Item": item}} for item in items]
    with translated("transactional write"):
        resource.meta.client.transact_write_items(TransactItems=actions)  # type: ignore[arg-type]


def transact_write(
    resource: DynamoDBServiceResource, table_name: str, actions: Sequence[Mapping[str, Mapping[str, Any]]], what: str
) -> None:
    """Up to TRANSACTION_SIZE actions (`{"Put" | "Update" | "Delete": request}`, without the table name) all or
    nothing. A condition that no longer holds, or another transaction on one of the items, is ConflictError: nothing
    was written, and the caller reads again and retries."""
    named = [{verb: {**request, "TableName": table_name} for verb, request in action.items()} for action in actions]
    with translated(what):
        try:
            resource.meta.client.transact_write_items(TransactItems=named)  # type: ignore[arg-type]
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "TransactionCanceledException" and any(
                reason.get("Code") in ("ConditionalCheckFailed", "TransactionConflict")
                for reason in exc.response.get("CancellationReasons", [])
            ):
                raise ConflictError("an item changed concurrently; nothing of this write was stored") from exc
            raise


def _back_off(attempt: int) -> None:
    # Full jitter: unprocessed items mean throttling, and retries in lockstep would be throttled again.
    time.sleep(random.uniform(0, min(_BACKOFF_CAP_SECONDS, _BACKOFF_BASE_SECONDS * 2**attempt)))
