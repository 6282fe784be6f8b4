"""The DynamoDB store's tenant fence (moto): while acting for tenant A, a call naming tenant B's data is refused
before anything is sent, on every kind of request, whatever ids the application passes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rapport.adapters.dynamodb import fence, keys
from rapport.adapters.dynamodb.idempotency import DynamoDbIdempotencyRecords
from rapport.adapters.dynamodb.store import DynamoDbMemoryStore, create_table
from rapport.domain.models import (
    ApiKeyRecord,
    AuditAction,
    AuditEvent,
    Domain,
    Interaction,
    Memory,
    Message,
    MessageRole,
)
from rapport.domain.scope import Scope
from rapport.errors import TenantFenceError
from rapport.ids import new_id
from rapport.ports.items import ItemDelete, ItemPut, ItemQuery, ItemScope
from rapport.tenancy import acting_for

pytestmark = pytest.mark.integration

TABLE = "rapport-fence"
AT = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
A, B = Scope("tenant-a", "u1"), Scope("tenant-b", "u1")


@pytest.fixture
def store() -> Iterator[DynamoDbMemoryStore]:
    with mock_aws():
        resource = boto3.resource("dynamodb", region_name="us-east-1")
        create_table(resource, TABLE)
        yield DynamoDbMemoryStore(TABLE, dynamodb_resource=resource)


@pytest.fixture
def sent(store: DynamoDbMemoryStore) -> list[str]:
    """Every DynamoDB request that reached the (moto) wire, by operation."""
    calls: list[str] = []
    store._dynamodb.meta.client.meta.events.register(
        "before-send.dynamodb", lambda request, **_: calls.append(request.headers["X-Amz-Target"].decode())
    )
    return calls


def memory(scope: Scope, content: str = "Has a dog named Max") -> Memory:
    return Memory(
        id=new_id(AT),
        tenant_id=scope.tenant_id,
        user_id=scope.user_id,
        domain=Domain.USER,
        type="fact",
        content=content,
        created_at=AT,
        updated_at=AT,
        last_reinforced_at=AT,
        embedding=[0.1, 0.2, 0.3],
    )


def interaction(scope: Scope) -> Interaction:
    return Interaction(
        id=new_id(AT),
        tenant_id=scope.tenant_id,
        user_id=scope.user_id,
        messages=[Message(role=MessageRole.USER, content="hello")],
        occurred_at=AT,
        created_at=AT,
    )


def audit(tenant_id: str) -> AuditEvent:
    return AuditEvent(
        id=new_id(AT), tenant_id=tenant_id, action=next(iter(AuditAction)), actor="k", target_user_hash=None, at=AT
    )


def api_key(tenant_id: str) -> ApiKeyRecord:
    return ApiKeyRecord(tenant_id=tenant_id, key_hash="ab" * 32, name="k", created_at=AT)


# Each call names tenant B's data; the comment says which DynamoDB operation it would have sent.
CALLS_FOR_TENANT_B: dict[str, Callable[[DynamoDbMemoryStore], Any]] = {
    "GetItem": lambda s: s.get_interaction(B, new_id(AT)),
    "GetItem (item store)": lambda s: s.get_item(ItemScope.of_user(B), "STATE", ""),
    "Query": lambda s: s.list_memories(B, domains=(Domain.USER, Domain.RELATIONAL), limit=5),
    "Query (gsi1)": lambda s: s.list_memories(B, domains=(Domain.USER,), limit=5),
    "Query (audit)": lambda s: s.list_audit_events("tenant-b", limit=5),
    "Query (item store)": lambda s: s.list_items(ItemScope(tenant_id="tenant-b"), ItemQuery(kind="PERSON", limit=5)),
    "BatchGetItem": lambda s: s.get_memories(B, [new_id(AT)]),
    "BatchWriteItem": lambda s: s.put_memory(memory(B)),
    "TransactWriteItems": lambda s: s.put_interaction(interaction(B), [memory(B)]),
    "TransactWriteItems (items)": lambda s: s.write_items(
        ItemScope.of_user(B),
        [ItemPut(kind="STATE", key="", body={}), ItemDelete(kind="PROFILE", key="")],
        now=AT,
    ),
    "PutItem": lambda s: s.put_audit_event(audit("tenant-b")),
    "PutItem (registration)": lambda s: s.register_user(B),
    "PutItem (API key)": lambda s: s.put_api_key(api_key("tenant-b")),
    "UpdateItem": lambda s: s.update_memory(memory(B)),
    "UpdateItem (item store)": lambda s: s.put_item(ItemScope.of_user(B), "STATE", "", {"trust": 1}, now=AT),
    "DeleteItem": lambda s: s.delete_memory(B, new_id(AT)),
    "DeleteItem (item store)": lambda s: s.delete_item(ItemScope.of_user(B), "STATE", ""),
    "Query + BatchWriteItem (erasure)": lambda s: s.erase_user(B),
}


@pytest.mark.parametrize("operation", list(CALLS_FOR_TENANT_B))
def test_a_store_acting_for_a_refuses_b_s_keys_and_sends_nothing(
    store: DynamoDbMemoryStore, sent: list[str], operation: str
) -> None:
    # Given tenant B has data, and a unit of work acting for tenant A
    store.put_memory(memory(B))
    store.put_interaction(interaction(B))
    sent.clear()
    # When the application hands the store B's ids anyway, Then it is refused before any request is sent
    with acting_for("tenant-a"), pytest.raises(TenantFenceError):
        CALLS_FOR_TENANT_B[operation](store)
    assert sent == []


def test_the_same_calls_for_the_tenant_being_served_go_through(store: DynamoDbMemoryStore, sent: list[str]) -> None:
    # The fence admits every partition form of the tenant, its first user's entry in the registry included.
    with acting_for("tenant-a"):
        stored = memory(A)
        store.put_interaction(interaction(A), [stored])  # TENANT#a#USER#u1, TENANT#a / USER#u1, TENANTS / TENANT#a
        store.register_user(Scope("tenant-a", "u2"))
        store.put_memory(memory(A, "Likes tea"))
        assert store.get_memory(A, stored.id).content == stored.content
        assert store.list_memories(A, domains=(Domain.USER,), limit=5).items
        store.put_item(ItemScope.of_user(A), "STATE", "", {"trust": 1}, now=AT)
        store.put_audit_event(audit("tenant-a"))
        assert store.list_audit_events("tenant-a", limit=5).items
        store.put_api_key(api_key("tenant-a"))
        assert store.list_api_keys("tenant-a")
        assert store.erase_user(A).memories == 2
    assert sent  # real requests, not refusals


def test_reading_the_registry_of_tenants_or_scanning_is_refused_while_acting_for_a_tenant(
    store: DynamoDbMemoryStore, sent: list[str]
) -> None:
    with acting_for("tenant-a"):
        with pytest.raises(TenantFenceError):
            store.list_tenants(limit=10)
        with pytest.raises(TenantFenceError):
            list(store.iter_all_memories("tenant-a"))  # a Scan names no key: it cannot be shown to stay inside
        with pytest.raises(TenantFenceError):
            store.find_api_key("ab" * 32)  # gsi3 is partitioned by key hash, not by tenant
    assert sent == []


def test_outside_any_tenant_s_work_the_store_answers_as_before(store: DynamoDbMemoryStore) -> None:
    # Operators' tools, the jobs and the authorizer act for no tenant: their own role decides what they may do.
    store.put_api_key(api_key("tenant-b"))
    assert store.find_api_key("ab" * 32) is not None
    assert store.list_tenants(limit=10).items == ["tenant-b"]


def test_powertools_idempotency_records_are_fenced_too(store: DynamoDbMemoryStore, sent: list[str]) -> None:
    records = DynamoDbIdempotencyRecords(TABLE, connect=lambda: store.client)
    store.client.meta.events.register(
        "before-send.dynamodb", lambda request, **_: sent.append(request.headers["X-Amz-Target"].decode())
    )
    with acting_for("tenant-a"):
        layer = records.persistence_for(ItemScope.of_user(B))
        with pytest.raises(TenantFenceError):
            layer.client.get_item(TableName=TABLE, Key=layer._get_key("some-key"))
        own = records.persistence_for(ItemScope.of_user(A))
        own.client.get_item(TableName=TABLE, Key=own._get_key("some-key"))
    assert len(sent) == 1


def test_a_cursor_or_start_key_into_another_tenant_is_refused() -> None:
    # A query of A's partition whose start key points into B's: the wire form the store would send.
    params = {
        "TableName": TABLE,
        "KeyConditionExpression": "#n0 = :v0 AND begins_with(#n1, :v1)",
        "ExpressionAttributeNames": {"#n0": "pk", "#n1": "sk"},
        "ExpressionAttributeValues": {":v0": {"S": keys.user_partition("tenant-a", "u1")}, ":v1": {"S": "MEM#"}},
        "ExclusiveStartKey": {"pk": {"S": keys.user_partition("tenant-b", "u1")}, "sk": {"S": "MEM#1"}},
    }
    with pytest.raises(TenantFenceError):
        fence.check("Query", params, "tenant-a")
    params["ExclusiveStartKey"] = {"pk": {"S": keys.user_partition("tenant-a", "u1")}, "sk": {"S": "MEM#1"}}
    fence.check("Query", params, "tenant-a")


@pytest.mark.parametrize(
    "partition",
    [
        "TENANT#tenant-ab#USER#u1",  # a tenant whose id starts with A's
        "TENANT#tenant-",
        "AUDIT#tenant-ab",
        "APIKEY#abc",
        "TENANTS",  # a read of the registry
        "",
    ],
)
def test_prefix_sharers_and_foreign_partitions_are_outside(partition: str) -> None:
    key = {"pk": {"S": partition}, "sk": {"S": "TENANT#tenant-a"}}
    assert not fence.allowed(key, fence.READ, "tenant-a")


def test_only_a_put_of_the_tenant_s_own_registry_entry_is_inside() -> None:
    own = {"pk": {"S": "TENANTS"}, "sk": {"S": "TENANT#tenant-a"}}
    other = {"pk": {"S": "TENANTS"}, "sk": {"S": "TENANT#tenant-b"}}
    assert fence.allowed(own, fence.PUT, "tenant-a")
    assert not fence.allowed(own, fence.WRITE, "tenant-a")  # no update or delete of it
    assert not fence.allowed(other, fence.PUT, "tenant-a")


def test_acting_for_one_tenant_inside_another_s_work_is_refused() -> None:
    with acting_for("tenant-a"):
        with acting_for("tenant-a"):
            pass  # the same tenant again (a nested step) is fine
        with pytest.raises(TenantFenceError), acting_for("tenant-b"):
            pass
