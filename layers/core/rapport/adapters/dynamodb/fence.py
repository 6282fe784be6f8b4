"""The tenant fence of the DynamoDB adapter: every request a client sends while a tenant is bound (`rapport.tenancy`)
is checked, key by key, before it leaves the process, and refused if any key lies outside that tenant's partitions.

Hooked into botocore (`before-parameter-build`, after boto3 has turned Python values and conditions into the wire
form), so it sees every call of the store, the item store, the batches and transactions, and Powertools'
idempotency layer alike: no call site can forget it. It mirrors the tenant access role's IAM policy, which refuses
the same requests in AWS; here they fail in tests and locally too, with a message that names the operation.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from rapport.adapters.dynamodb import keys
from rapport.errors import TenantFenceError
from rapport.tenancy import bound_tenant

_HOOK_ID = "rapport-tenant-fence"
_PARTITION_ATTRIBUTES = frozenset({keys.PARTITION_KEY, *(partition for partition, _ in keys.GSI_KEYS.values())})
# `name = :value` in a key condition; the partition key's is the one equality on a partition attribute.
_EQUALITY = re.compile(r"([#\w.]+)\s*=\s*(:\w+)")
# Calls that carry no key: nothing to fence.
_KEYLESS = frozenset({"DescribeTable", "DescribeTimeToLive", "DescribeContinuousBackups", "ListTables"})

READ, PUT, WRITE = "read", "put", "write"


def install(client: Any) -> None:
    """Fence this client (idempotent: one hook per client, whatever the number of stores sharing it)."""
    client.meta.events.register_last("before-parameter-build.dynamodb", _check_request, unique_id=_HOOK_ID)


def _check_request(params: Mapping[str, Any], model: Any, **_: Any) -> None:
    tenant_id = bound_tenant()
    if tenant_id is None:
        return  # not acting for a tenant: the function's own role decides what it may do
    check(model.name, params, tenant_id)


def check(operation: str, params: Mapping[str, Any], tenant_id: str) -> None:
    """Raise unless every key `operation` names lies in one of `tenant_id`'s partitions."""
    if operation in _KEYLESS:
        return
    named = list(_keys(operation, params))
    if not named:
        # Scan, PartiQL and anything unknown name no key to check, so they cannot be proven inside the tenant.
        raise TenantFenceError(f"DynamoDB {operation} is not allowed while acting for a tenant")
    for key, access in named:
        if not allowed(key, access, tenant_id):
            raise TenantFenceError(
                f"DynamoDB {operation} names a partition outside the tenant being served; nothing was sent"
            )


def allowed(key: Mapping[str, Any], access: str, tenant_id: str) -> bool:
    """The tenant's partitions (`TENANT#{t}`, `TENANT#{t}#…`, `AUDIT#{t}`, `AUDIT#{t}#…`), and in the registry of
    tenants only a put of the tenant's own entry: the registry is written, never read, on a tenant's behalf."""
    partition = _string(key.get(keys.PARTITION_KEY))
    if partition is None:
        partition = next((_string(key.get(name)) for name in _PARTITION_ATTRIBUTES if name in key), None)
    if partition is None:
        return False
    own, audit = keys.tenant_partition(tenant_id), keys.audit_partition(tenant_id)
    if partition in (own, audit) or partition.startswith((f"{own}#", f"{audit}#")):
        return True
    if partition == keys.TENANT_REGISTRY_PARTITION:
        return access == PUT and _string(key.get(keys.SORT_KEY)) == keys.tenant_registry_sort_key(tenant_id)
    return False


def _string(value: Any) -> str | None:
    if isinstance(value, Mapping):
        value = value.get("S")
    return value if isinstance(value, str) else None


def _keys(operation: str, params: Mapping[str, Any]) -> Iterator[tuple[Mapping[str, Any], str]]:
    """Every key (or item) the request names, with what it does to it."""
    if operation == "GetItem":
        yield params.get("Key", {}), READ
    elif operation == "PutItem":
        yield params.get("Item", {}), PUT
    elif operation in ("UpdateItem", "DeleteItem"):
        yield params.get("Key", {}), WRITE
    elif operation == "Query":
        yield from _query_keys(params)
    elif operation == "BatchGetItem":
        for request in params.get("RequestItems", {}).values():
            for key in request.get("Keys", []):
                yield key, READ
    elif operation == "BatchWriteItem":
        for requests in params.get("RequestItems", {}).values():
            for request in requests:
                if "PutRequest" in request:
                    yield request["PutRequest"].get("Item", {}), PUT
                if "DeleteRequest" in request:
                    yield request["DeleteRequest"].get("Key", {}), WRITE
    elif operation == "TransactWriteItems":
        for action in params.get("TransactItems", []):
            for verb, request in action.items():
                yield (request.get("Item", {}), PUT) if verb == "Put" else (request.get("Key", {}), WRITE)
    elif operation == "TransactGetItems":
        for action in params.get("TransactItems", []):
            yield action.get("Get", {}).get("Key", {}), READ


def _query_keys(params: Mapping[str, Any]) -> Iterator[tuple[Mapping[str, Any], str]]:
    names: Mapping[str, str] = params.get("ExpressionAttributeNames", {})
    values: Mapping[str, Any] = params.get("ExpressionAttributeValues", {})
    partition_value = None
    for name, placeholder in _EQUALITY.findall(str(params.get("KeyConditionExpression", ""))):
        attribute = names.get(name, name)
        if attribute in _PARTITION_ATTRIBUTES:
            partition_value = values.get(placeholder)
            partition_attribute = attribute
            break
    if partition_value is None:
        yield {}, READ  # no partition equality found: refused, as nothing proves where it reads
        return
    yield {partition_attribute: partition_value}, READ
    start = params.get("ExclusiveStartKey")
    if start:
        yield start, READ
