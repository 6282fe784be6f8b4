"""Tenant-scoped STS sessions under moto (which runs AssumeRole but evaluates no condition): the tags each session
carries, the cache per tenant, renewal before expiry, and the store signing as the tenant being served."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rapport.adapters.aws.tenant_credentials import BoundTenantSigning, TenantCredentials
from rapport.adapters.dynamodb.store import DynamoDbMemoryStore, create_table
from rapport.domain.scope import Scope
from rapport.errors import TenantFenceError
from rapport.tenancy import acting_for, tenant_digest

pytestmark = pytest.mark.integration

ROLE_ARN = "arn:aws:iam::123456789012:role/rapport-tenant-access"
TABLE = "rapport-sessions"


class Clock:
    def __init__(self) -> None:
        self.moment = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.moment


@pytest.fixture
def aws() -> Iterator[tuple[list[dict[str, Any]], Any]]:
    """moto, and every AssumeRole request's parameters as sent."""
    with mock_aws():
        assumed: list[dict[str, Any]] = []
        sts = boto3.client("sts", region_name="us-east-1")
        sts.meta.events.register("provide-client-params.sts.AssumeRole", lambda params, **_: assumed.append(params))
        boto3.client("iam", region_name="us-east-1").create_role(
            RoleName="rapport-tenant-access", AssumeRolePolicyDocument="{}"
        )
        yield assumed, sts


def test_each_tenant_gets_a_session_tagged_with_it(aws: Any) -> None:
    assumed, sts = aws
    credentials = TenantCredentials(ROLE_ARN, sts_client=sts)
    a, b = credentials.for_tenant("tenant-a"), credentials.for_tenant("tenant-b")
    assert a.access_key_id != b.access_key_id
    assert [call["Tags"] for call in assumed] == [
        [{"Key": "tenant", "Value": "tenant-a"}, {"Key": "tenant_digest", "Value": tenant_digest("tenant-a")}],
        [{"Key": "tenant", "Value": "tenant-b"}, {"Key": "tenant_digest", "Value": tenant_digest("tenant-b")}],
    ]
    assert {call["RoleArn"] for call in assumed} == {ROLE_ARN}
    # The session name shows in CloudTrail: the digest, never the tenant's id.
    assert assumed[0]["RoleSessionName"] == f"tenant-{tenant_digest('tenant-a')}"
    assert all("tenant-a" not in call["RoleSessionName"] for call in assumed)


def test_a_session_is_reused_until_shortly_before_it_expires(aws: Any) -> None:
    assumed, sts = aws
    clock = Clock()
    credentials = TenantCredentials(ROLE_ARN, sts_client=sts, now=clock, renew_before=timedelta(minutes=5))
    first = credentials.for_tenant("tenant-a")
    assert credentials.for_tenant("tenant-a") is first and len(assumed) == 1
    # 54 minutes on (the session lasts an hour): still valid for more than five minutes, still reused
    clock.moment = first.expires_at - timedelta(minutes=6)
    assert credentials.for_tenant("tenant-a") is first and len(assumed) == 1
    # Within five minutes of expiry: assumed again
    clock.moment = first.expires_at - timedelta(minutes=4)
    renewed = credentials.for_tenant("tenant-a")
    assert renewed is not first and len(assumed) == 2
    assert renewed.expires_at > first.expires_at


def test_the_least_recently_served_tenant_is_dropped_past_the_bound(aws: Any) -> None:
    assumed, sts = aws
    credentials = TenantCredentials(ROLE_ARN, sts_client=sts, max_tenants=2)
    credentials.for_tenant("t1")
    credentials.for_tenant("t2")
    credentials.for_tenant("t1")  # t2 is now the least recent
    credentials.for_tenant("t3")
    credentials.for_tenant("t1")
    assert len(assumed) == 3
    credentials.for_tenant("t2")
    assert len(assumed) == 4


def test_a_signer_signs_as_the_bound_tenant_and_refuses_outside_any(aws: Any) -> None:
    _, sts = aws
    credentials = TenantCredentials(ROLE_ARN, sts_client=sts)
    signing = BoundTenantSigning(credentials)
    with pytest.raises(TenantFenceError):
        signing.get_frozen_credentials()
    with acting_for("tenant-a"):
        assert signing.get_frozen_credentials().access_key == credentials.for_tenant("tenant-a").access_key_id


def test_the_store_signs_each_request_as_the_tenant_being_served(aws: Any) -> None:
    assumed, sts = aws
    resource = boto3.resource("dynamodb", region_name="us-east-1")
    create_table(resource, TABLE)
    credentials = TenantCredentials(ROLE_ARN, sts_client=sts)
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=resource, tenant_credentials=credentials)
    signed: list[str] = []

    def note_key(request_signer: Any, **_: Any) -> None:
        signed.append(request_signer._credentials.access_key)

    with acting_for("tenant-a"):
        store.register_user(Scope("tenant-a", "u1"))
        store._dynamodb.meta.client.meta.events.register("before-sign.dynamodb", note_key)
        assert store.list_users("tenant-a", limit=5).items == ["u1"]
        store.register_user(Scope("tenant-a", "u2"))
    with acting_for("tenant-b"):
        store._dynamodb.meta.client.meta.events.register("before-sign.dynamodb", note_key)
        assert store.list_users("tenant-b", limit=5).items == []
    a, b = credentials.for_tenant("tenant-a"), credentials.for_tenant("tenant-b")
    assert signed[0] == a.access_key_id and signed[-1] == b.access_key_id
    assert set(signed) == {a.access_key_id, b.access_key_id}
    assert len(assumed) == 2  # once per tenant, however many requests


def test_a_tenant_scoped_store_makes_no_request_outside_a_tenant_s_work(aws: Any) -> None:
    _, sts = aws
    resource = boto3.resource("dynamodb", region_name="us-east-1")
    create_table(resource, TABLE)
    store = DynamoDbMemoryStore(
        TABLE, dynamodb_resource=resource, tenant_credentials=TenantCredentials(ROLE_ARN, sts_client=sts)
    )
    # A request path that forgot to say whom it acts for fails loudly here, where in AWS the function's own role
    # (which holds no item access) would be refused by DynamoDB.
    with pytest.raises(TenantFenceError):
        store.list_users("tenant-a", limit=5)
