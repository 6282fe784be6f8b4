"""Powertools Idempotency over the `ItemStore` port: the persistence layer of the local stores (SQLite), so the local
server runs the same Powertools code path as the Lambda functions do over DynamoDB."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.utilities.idempotency import BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import STATUS_CONSTANTS, DataRecord

from rapport.errors import ConflictError
from rapport.ports.idempotency import IDEMPOTENCY_KIND
from rapport.ports.items import ItemScope, ItemStore, StoredItem


def _record_of(item: StoredItem) -> DataRecord:
    body = item.body
    return DataRecord(
        idempotency_key=item.key,
        status=str(body["status"]),
        expiry_timestamp=int(body["expiry"]),
        in_progress_expiry_timestamp=body.get("in_progress_expiry"),
        response_data=body.get("data") or "",
        payload_hash=body.get("validation") or "",
    )


def _replaceable(record: DataRecord, now: datetime) -> bool:
    """The conditions DynamoDBPersistenceLayer puts on its conditional write: the record expired, or it is in
    progress and its in-progress expiry (the caller's deadline) passed, so a crashed call never blocks its key."""
    if record.expiry_timestamp is not None and record.expiry_timestamp < int(now.timestamp()):
        return True
    return (
        record.status == STATUS_CONSTANTS["INPROGRESS"]
        and record.in_progress_expiry_timestamp is not None
        and record.in_progress_expiry_timestamp < int(now.timestamp() * 1000)
    )


class ItemStorePersistenceLayer(BasePersistenceLayer):
    """Records as `IDEMPOTENCY` items of one partition, expiring with the record (the store's TTL)."""

    def __init__(self, items: ItemStore, scope: ItemScope) -> None:
        super().__init__()
        self._items = items
        self._scope = scope

    def _body(self, record: DataRecord) -> dict[str, Any]:
        return {
            "status": record.status,
            "expiry": record.expiry_timestamp,
            "in_progress_expiry": record.in_progress_expiry_timestamp,
            "data": record.response_data or None,
            "validation": record.payload_hash or None,
        }

    @staticmethod
    def _expires_at(record: DataRecord) -> datetime | None:
        return datetime.fromtimestamp(record.expiry_timestamp, UTC) if record.expiry_timestamp else None

    def _get_record(self, idempotency_key: str) -> DataRecord:
        item = self._items.get_item(self._scope, IDEMPOTENCY_KIND, idempotency_key)
        if item is None:
            raise IdempotencyItemNotFoundError
        return _record_of(item)

    def _put_record(self, data_record: DataRecord) -> None:
        # Powertools compares expiries with the wall clock, so this does too (not the service's injectable clock).
        now = datetime.now(UTC)
        key = data_record.idempotency_key
        existing = self._items.get_item(self._scope, IDEMPOTENCY_KIND, key)
        if existing is not None:
            old = _record_of(existing)
            if not _replaceable(old, now):
                # As the DynamoDB layer does with the item its failed condition returns: a reused key with another
                # body is told apart here, before the handler looks at the old record's status.
                self._validate_payload(data_payload=data_record, stored_data_record=old)
                raise IdempotencyItemAlreadyExistsError(old_data_record=old)
        try:
            self._items.put_item(
                self._scope,
                IDEMPOTENCY_KIND,
                key,
                self._body(data_record),
                now=now,
                expected_version=existing.version if existing is not None else 0,
                expires_at=self._expires_at(data_record),
            )
        except ConflictError as exc:
            # A simultaneous first call wrote it between the read and this write: the handler reads it back.
            raise IdempotencyItemAlreadyExistsError from exc

    def _update_record(self, data_record: DataRecord) -> None:
        self._items.put_item(
            self._scope,
            IDEMPOTENCY_KIND,
            data_record.idempotency_key,
            self._body(data_record),
            now=datetime.now(UTC),
            expires_at=self._expires_at(data_record),
        )

    def _delete_record(self, data_record: DataRecord) -> None:
        self._items.delete_item(self._scope, IDEMPOTENCY_KIND, data_record.idempotency_key)


class ItemStoreIdempotencyRecords:
    """`IdempotencyRecords` over an `ItemStore`: a layer per call is a small object, no client of its own."""

    def __init__(self, items: ItemStore) -> None:
        self._items = items

    def persistence_for(self, scope: ItemScope) -> BasePersistenceLayer:
        return ItemStorePersistenceLayer(self._items, scope)
