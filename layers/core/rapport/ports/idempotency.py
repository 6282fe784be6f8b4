"""Port `IdempotencyRecords`: where Powertools Idempotency keeps the records of keyed requests, per partition.

One Powertools persistence layer per call: Powertools configures a layer with the call's key prefix (it sets
attributes on the instance), so a layer shared by two simultaneous calls would mix their keys. Records live in the
partition of the scope they belong to (an end user's, or a tenant's for the signed ingest routes), so erasing an end
user erases the records of their requests too.
"""

from __future__ import annotations

from typing import Protocol

from aws_lambda_powertools.utilities.idempotency import BasePersistenceLayer

from rapport.ports.items import ItemScope

# The sort-key prefix (DynamoDB) and item kind (the local stores) of idempotency records.
IDEMPOTENCY_KIND = "IDEMPOTENCY"


class IdempotencyRecords(Protocol):
    def persistence_for(self, scope: ItemScope) -> BasePersistenceLayer:
        """A fresh persistence layer for one keyed call whose records live in `scope`'s partition."""
