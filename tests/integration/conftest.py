"""Fixtures for the integration tier: the two store adapters over the real table schema (moto) and SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rapport.adapters.dynamodb.store import DynamoDbMemoryStore, create_table
from rapport.adapters.local.sqlite_store import SqliteMemoryStore

TABLE_NAME = "rapport-test"


@pytest.fixture
def moto_dynamodb() -> Iterator[Any]:
    """A moto DynamoDB resource with the table exactly as `create_table` (and the CDK stack) builds it."""
    with mock_aws():
        resource = boto3.resource("dynamodb", region_name="us-east-1")
        create_table(resource, TABLE_NAME)
        yield resource


@pytest.fixture(params=["dynamodb", "sqlite"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[DynamoDbMemoryStore | SqliteMemoryStore]:
    """Each store adapter in turn: a contract test using this runs against both."""
    if request.param == "dynamodb":
        yield DynamoDbMemoryStore(TABLE_NAME, dynamodb_resource=request.getfixturevalue("moto_dynamodb"))
        return
    store = SqliteMemoryStore(tmp_path / "contract.sqlite3")
    yield store
    store.close()
