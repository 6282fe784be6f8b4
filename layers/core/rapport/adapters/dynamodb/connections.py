"""Which boto3 connection a DynamoDB call goes out on: the function's own, or (given tenant credentials) the session
of the tenant being served, one per tenant, rebuilt when its session is renewed. Every connection is fenced
(`fence.py`), so a key of another tenant is refused before it is sent, whichever credentials sign it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config

from rapport.adapters.dynamodb import fence, sealing

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import DynamoDBServiceResource, Table

    from rapport.adapters.aws.tenant_credentials import TenantCredentials, TenantSession
    from rapport.sealing import Keyring

CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5})
_MAX_TENANT_CONNECTIONS = 256


@dataclass
class _Connection:
    resource: DynamoDBServiceResource
    table: Table
    session: TenantSession | None = None
    client: Any = field(default=None)


class TableConnections:
    """Built lazily: constructing one (at cold start, in tests) touches no network."""

    def __init__(
        self,
        table_name: str,
        *,
        resource: DynamoDBServiceResource | None,
        region_name: str | None,
        tenant_credentials: TenantCredentials | None,
        keyring: Keyring | None = None,
    ) -> None:
        """`keyring`: every connection also seals end users' content on the way out and opens it on the way in
        (`sealing.py`)."""
        self._table_name = table_name
        self._keyring = keyring
        self._region_name = region_name
        self._credentials = tenant_credentials
        self._own: _Connection | None = None
        self._given = resource
        self._tenants: OrderedDict[str, _Connection] = OrderedDict()
        self._lock = threading.Lock()
        if resource is not None and hasattr(resource, "meta"):  # a test's stand-in may have no botocore client
            self._install(resource.meta.client)

    @property
    def tenant_scoped(self) -> bool:
        """True when every call signs as the tenant being served (and none may be made outside one)."""
        return self._credentials is not None

    def current(self) -> _Connection:
        if self._credentials is None:
            return self._own_connection()
        session = self._credentials.for_bound_tenant()  # TenantFenceError outside a tenant's work
        with self._lock:
            connection = self._tenants.get(session.tenant_id)
            if connection is None or connection.session is not session:
                resource = self._build_resource(session)
                connection = _Connection(resource, resource.Table(self._table_name), session)
                self._tenants[session.tenant_id] = connection
            self._tenants.move_to_end(session.tenant_id)
            while len(self._tenants) > _MAX_TENANT_CONNECTIONS:
                self._tenants.popitem(last=False)
            return connection

    def low_level_client(self) -> Any:
        """A plain client of the same region and credentials (Powertools Idempotency speaks the client API). Not the
        resource's own `meta.client`: that one converts Python values to DynamoDB's and back on every call."""
        connection = self.current()
        with self._lock:
            if connection.client is None:
                region = self._region_name or connection.resource.meta.client.meta.region_name
                session = connection.session
                connection.client = boto3.client(
                    "dynamodb",
                    region_name=region,
                    config=CLIENT_CONFIG,
                    aws_access_key_id=session.access_key_id if session else None,
                    aws_secret_access_key=session.secret_access_key if session else None,
                    aws_session_token=session.session_token if session else None,
                )
                self._install(connection.client)
            return connection.client

    def _own_connection(self) -> _Connection:
        with self._lock:
            if self._own is None:
                resource = self._given or self._build_resource(None)
                self._own = _Connection(resource, resource.Table(self._table_name))
            return self._own

    def _build_resource(self, session: TenantSession | None) -> DynamoDBServiceResource:
        # A tenant's connection talks to the region of the resource the store was given, if any (tests, tools).
        given = self._given
        given_region = given.meta.client.meta.region_name if given is not None and hasattr(given, "meta") else None
        region = self._region_name or given_region
        resource = boto3.resource(
            "dynamodb",
            region_name=region,
            config=CLIENT_CONFIG,
            aws_access_key_id=session.access_key_id if session else None,
            aws_secret_access_key=session.secret_access_key if session else None,
            aws_session_token=session.session_token if session else None,
        )
        self._install(resource.meta.client)
        return resource

    def _install(self, client: Any) -> None:
        fence.install(client)
        if self._keyring is not None:
            sealing.install(client, self._keyring)
