"""DynamoDB adapter of `PersonKeys`: each person's data key, wrapped by KMS, in a table of its own that has no
point-in-time recovery, no backup plan and no stream, so deleting an item leaves no copy of the key anywhere."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from rapport.adapters.dynamodb import keys
from rapport.adapters.dynamodb.connections import TableConnections
from rapport.adapters.dynamodb.table import translated
from rapport.domain.scope import Scope

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import DynamoDBServiceResource

    from rapport.adapters.aws.kms_data_keys import KmsDataKeys
    from rapport.adapters.aws.tenant_credentials import TenantCredentials

# `TENANT#{t}#PERSON#{user hash}`: under the tenant's prefix, so the tenant access role's `dynamodb:LeadingKeys`
# fence admits it as it admits the tenant's items; the hash, never the id, so the table names nobody.
PERSON_PREFIX = "PERSON#"
WRAPPED_ATTRIBUTE = "wrapped"


def person_key_partition(tenant_id: str, user_hash: str) -> str:
    return f"{keys.tenant_partition(tenant_id)}#{PERSON_PREFIX}{user_hash}"


class DynamoDbPersonKeys:
    def __init__(
        self,
        table_name: str,
        data_keys: KmsDataKeys,
        *,
        dynamodb_resource: DynamoDBServiceResource | None = None,
        region_name: str | None = None,
        tenant_credentials: TenantCredentials | None = None,
    ) -> None:
        self._data_keys = data_keys
        self._connections = TableConnections(
            table_name, resource=dynamodb_resource, region_name=region_name, tenant_credentials=tenant_credentials
        )

    @staticmethod
    def _who(tenant_id: str, user_id: str) -> tuple[str, dict[str, str]]:
        user_hash = Scope(tenant_id, user_id).user_hash
        return person_key_partition(tenant_id, user_hash), {"tenant": tenant_id, "user_hash": user_hash}

    def load(self, tenant_id: str, user_id: str) -> bytes | None:
        partition, context = self._who(tenant_id, user_id)
        with translated("get person key"):
            item = (
                self._connections.current()
                .table.get_item(Key={keys.PARTITION_KEY: partition}, ConsistentRead=True)
                .get("Item")
            )
        if item is None:
            return None
        return self._data_keys.unwrap(bytes(item[WRAPPED_ATTRIBUTE]), context)  # type: ignore[arg-type]

    def create(self, tenant_id: str, user_id: str) -> bytes:
        partition, context = self._who(tenant_id, user_id)
        plaintext, wrapped = self._data_keys.generate(context)
        item = {
            keys.PARTITION_KEY: partition,
            WRAPPED_ATTRIBUTE: wrapped,
            "created_at": keys.format_time(datetime.now(UTC)),
        }
        with translated("put person key"):
            try:
                self._connections.current().table.put_item(
                    Item=item,
                    ConditionExpression="attribute_not_exists(#pk)",
                    ExpressionAttributeNames={"#pk": keys.PARTITION_KEY},
                )
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                    raise
                # Another writer of this person made theirs first: seal with that one.
                existing = self.load(tenant_id, user_id)
                if existing is None:
                    raise
                return existing
        return plaintext

    def destroy(self, tenant_id: str, user_id: str) -> bool:
        partition, _ = self._who(tenant_id, user_id)
        with translated("delete person key"):
            response = self._connections.current().table.delete_item(
                Key={keys.PARTITION_KEY: partition}, ReturnValues="ALL_OLD"
            )
        return "Attributes" in response


def create_person_keys_table(dynamodb_resource: DynamoDBServiceResource, table_name: str) -> None:
    """The table as the CDK stack declares it (tests under moto, local tooling): a partition key and nothing else."""
    table = dynamodb_resource.create_table(
        TableName=table_name,
        KeySchema=[{"AttributeName": keys.PARTITION_KEY, "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": keys.PARTITION_KEY, "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    table.wait_until_exists()
