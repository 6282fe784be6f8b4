"""Powertools' DynamoDB persistence layer on the single table: idempotency records in the partition they belong to.

Powertools' own layer, conditional write and all; only the key is ours. With a sort key Powertools puts every
record under one static partition key, which would keep end users' request records outside their partition (an
erasure would miss them) and in one hot partition. So each call gets a copy of one configured layer whose partition
is the caller's: `TENANT#{t}#USER#{u}` (or `TENANT#{t}`), sort key `IDEMPOTENCY#{prefix}#{hash}`, expiry in the
table's TTL attribute. Each copy takes the store's client of the moment (the function's own, or the session of the
tenant being served); building a layer per call would register a user-agent hook on the client each time.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.utilities.idempotency import BasePersistenceLayer, DynamoDBPersistenceLayer

from rapport.adapters.dynamodb import keys
from rapport.ports.idempotency import IDEMPOTENCY_KIND
from rapport.ports.items import ItemScope


class _PartitionedLayer(DynamoDBPersistenceLayer):
    def _get_key(self, idempotency_key: str) -> dict:
        return {
            self.key_attr: {"S": self.static_pk_value},
            str(self.sort_key_attr): {"S": f"{IDEMPOTENCY_KIND}#{idempotency_key}"},
        }


def _partition(scope: ItemScope) -> str:
    if scope.user_id is None:
        return keys.tenant_partition(scope.tenant_id)
    return keys.user_partition(scope.tenant_id, scope.user_id)


class DynamoDbIdempotencyRecords:
    """`connect()` gives the boto3 DynamoDB client, called on first use (the store's own, so one connection)."""

    def __init__(self, table_name: str, *, connect: Callable[[], Any]) -> None:
        self._table_name = table_name
        self._connect = connect
        self._template: _PartitionedLayer | None = None
        self._lock = threading.Lock()

    def _configured(self) -> _PartitionedLayer:
        with self._lock:
            if self._template is None:
                self._template = _PartitionedLayer(
                    table_name=self._table_name,
                    key_attr=keys.PARTITION_KEY,
                    sort_key_attr=keys.SORT_KEY,
                    expiry_attr=keys.TTL_ATTRIBUTE,
                    boto3_client=self._connect(),
                )
            return self._template

    def persistence_for(self, scope: ItemScope) -> BasePersistenceLayer:
        layer = copy.copy(self._configured())
        layer.client = self._connect()
        layer.static_pk_value = _partition(scope)
        return layer
