"""The API and ingest handlers in process (moto): each request assumes the tenant access role tagged with the tenant
the authorizer vouched for, keeps that session for the tenant's next requests, and assumes again near expiry."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import ModuleType
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rapport.adapters.dynamodb.store import create_table
from rapport.composition import adapters as composition_adapters
from rapport.settings import Settings
from rapport.tenancy import tenant_digest
from tests.infrastructure.test_handlers import TABLE_NAME, lambda_environment, load_handler
from tests.integration.api_events import FakeLambdaContext, rest_event

pytestmark = [pytest.mark.infrastructure, pytest.mark.filterwarnings("ignore:No application metrics to publish")]

ROLE_ARN = "arn:aws:iam::123456789012:role/rapport-tenant-access"
__all__ = ["lambda_environment"]  # the handlers' environment fixture, shared with test_handlers.py


@pytest.fixture
def assumed(lambda_environment: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """The tenant-scoped API function's environment, under moto; yields every AssumeRole request as sent."""
    monkeypatch.setenv("RAPPORT_TENANT_ACCESS_ROLE_ARN", ROLE_ARN)
    composition_adapters._tenant_credentials.cache_clear()
    calls: list[dict[str, Any]] = []
    with mock_aws():
        boto3.setup_default_session()
        assert boto3.DEFAULT_SESSION is not None
        boto3.DEFAULT_SESSION.events.register(
            "provide-client-params.sts.AssumeRole", lambda params, **_: calls.append(params)
        )
        create_table(boto3.resource("dynamodb", region_name="us-east-1"), TABLE_NAME)
        yield calls
    boto3.DEFAULT_SESSION = None
    composition_adapters._tenant_credentials.cache_clear()


@pytest.fixture
def api(assumed: list[dict[str, Any]]) -> ModuleType:
    return load_handler("api")


def tagged(call: dict[str, Any]) -> dict[str, str]:
    return {tag["Key"]: tag["Value"] for tag in call["Tags"]}


def test_the_api_assumes_the_role_tagged_with_the_authorized_tenant_and_keeps_it(
    api: ModuleType, assumed: list[dict[str, Any]]
) -> None:
    # Given a request the authorizer admitted for tenant-a
    created = api.handler(
        rest_event("POST", "/v1/users/u1/memories", {"content": "Has a dog named Max", "domain": "user"}),
        FakeLambdaContext(),
    )
    assert created["statusCode"] == 201, created["body"]
    # Then the function signed as a session of the tenant access role tagged tenant-a
    assert [call["RoleArn"] for call in assumed] == [ROLE_ARN]
    assert tagged(assumed[0]) == {"tenant": "tenant-a", "tenant_digest": tenant_digest("tenant-a")}
    # And tenant-a's next requests reuse it
    listed = api.handler(rest_event("GET", "/v1/users/u1/memories"), FakeLambdaContext())
    assert listed["statusCode"] == 200 and "Has a dog named Max" in listed["body"]
    assert len(assumed) == 1
    # While tenant-b's request gets a session of its own, and sees nothing of tenant-a's
    other = api.handler(rest_event("GET", "/v1/users/u1/memories", tenant="tenant-b"), FakeLambdaContext())
    assert other["statusCode"] == 200 and "Has a dog named Max" not in other["body"]
    assert [tagged(call)["tenant"] for call in assumed] == ["tenant-a", "tenant-b"]


def test_the_api_assumes_again_when_the_session_nears_expiry(
    api: ModuleType, assumed: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert api.handler(rest_event("GET", "/v1/users/u1/memories"), FakeLambdaContext())["statusCode"] == 200
    credentials = composition_adapters.tenant_credentials(Settings())
    assert credentials is not None
    session = credentials.for_tenant("tenant-a")
    # The next lookup happens a minute before the session ends (as in a function warm for an hour); moto dates the
    # new session from the real clock, so later lookups read the real clock again.
    moments = iter([session.expires_at - timedelta(minutes=1)])
    monkeypatch.setattr(credentials, "_now", lambda: next(moments, datetime.now(UTC)))
    assert api.handler(rest_event("GET", "/v1/users/u1/memories"), FakeLambdaContext())["statusCode"] == 200
    assert [tagged(call)["tenant"] for call in assumed] == ["tenant-a", "tenant-a"]


def test_a_public_route_acts_for_no_tenant(api: ModuleType, assumed: list[dict[str, Any]]) -> None:
    health = api.handler(rest_event("GET", "/v1/health", tenant=None), FakeLambdaContext())
    assert health["statusCode"] == 200
    assert assumed == []
