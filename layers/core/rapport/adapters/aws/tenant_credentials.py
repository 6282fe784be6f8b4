"""STS credentials scoped to one tenant: the tenant access role assumed with the tenant's session tags, kept per
tenant until shortly before they expire.

The role's policies (infra/constructs/tenant_access.py) allow only items and index aliases named by the session's
tags, so a query that forgot its tenant filter, or was handed another tenant's id, is refused by AWS itself.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
from botocore.config import Config
from botocore.credentials import ReadOnlyCredentials
from botocore.exceptions import BotoCoreError, ClientError

from rapport.errors import StorageError, TenantFenceError
from rapport.tenancy import bound_tenant, session_tags, tenant_digest

# Role chaining (a Lambda role assuming another) caps a session at one hour; the default is that hour, so a warm
# function assumes once an hour per tenant it serves.
SESSION_SECONDS = 3600
# Renewed this long before expiry, so a request never signs with credentials that lapse while it runs.
RENEW_BEFORE = timedelta(minutes=5)
# A function serves many tenants; past this many, the least recently used tenant's session is dropped (and assumed
# again if it comes back).
MAX_TENANTS = 256
_STS_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3})


@dataclass(frozen=True)
class TenantSession:
    tenant_id: str
    access_key_id: str
    secret_access_key: str
    session_token: str
    expires_at: datetime

    def frozen(self) -> ReadOnlyCredentials:
        return ReadOnlyCredentials(self.access_key_id, self.secret_access_key, self.session_token)


class TenantCredentials:
    """`for_tenant(t)`: a session of the tenant access role tagged `tenant=t`, assumed on first use and again when it
    nears expiry. Thread-safe: the local server's workers may share one."""

    def __init__(
        self,
        role_arn: str,
        *,
        region_name: str | None = None,
        sts_client: Any = None,
        now: Callable[[], datetime] | None = None,
        session_seconds: int = SESSION_SECONDS,
        renew_before: timedelta = RENEW_BEFORE,
        max_tenants: int = MAX_TENANTS,
    ) -> None:
        if not role_arn:
            raise ValueError("the tenant access role needs its ARN (RAPPORT_TENANT_ACCESS_ROLE_ARN)")
        self._role_arn = role_arn
        self._region_name = region_name
        self._sts = sts_client
        self._now = now or (lambda: datetime.now(UTC))
        self._session_seconds = session_seconds
        self._renew_before = renew_before
        self._max_tenants = max_tenants
        self._sessions: OrderedDict[str, TenantSession] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def role_arn(self) -> str:
        return self._role_arn

    def for_tenant(self, tenant_id: str) -> TenantSession:
        with self._lock:
            session = self._sessions.get(tenant_id)
            if session is not None and session.expires_at - self._renew_before > self._now():
                self._sessions.move_to_end(tenant_id)
                return session
        # Assumed outside the lock: one slow STS call must not hold up other tenants' requests. Two threads of one
        # tenant may both assume; either session is valid, the later one is kept.
        session = self._assume(tenant_id)
        with self._lock:
            self._sessions[tenant_id] = session
            self._sessions.move_to_end(tenant_id)
            while len(self._sessions) > self._max_tenants:
                self._sessions.popitem(last=False)
        return session

    def for_bound_tenant(self) -> TenantSession:
        """The session of the tenant this unit of work acts for; refused outside any."""
        tenant_id = bound_tenant()
        if tenant_id is None:
            raise TenantFenceError("tenant-scoped credentials asked for outside any tenant's request")
        return self.for_tenant(tenant_id)

    def _client(self) -> Any:
        if self._sts is None:
            self._sts = boto3.client("sts", region_name=self._region_name, config=_STS_CONFIG)
        return self._sts

    def _assume(self, tenant_id: str) -> TenantSession:
        tags = [{"Key": key, "Value": value} for key, value in session_tags(tenant_id).items()]
        try:
            response = self._client().assume_role(
                RoleArn=self._role_arn,
                # CloudTrail shows the session name: the digest names the tenant without spelling its id.
                RoleSessionName=f"tenant-{tenant_digest(tenant_id)}",
                Tags=tags,
                DurationSeconds=self._session_seconds,
            )
        except (ClientError, BotoCoreError) as exc:
            code = exc.response.get("Error", {}).get("Code", "Unknown") if isinstance(exc, ClientError) else exc
            raise StorageError(f"could not assume the tenant access role ({code})") from exc
        credentials = response["Credentials"]
        expires_at = credentials["Expiration"]
        if expires_at.tzinfo is None:
            expires_at = expires_at.replace(tzinfo=UTC)
        return TenantSession(
            tenant_id=tenant_id,
            access_key_id=credentials["AccessKeyId"],
            secret_access_key=credentials["SecretAccessKey"],
            session_token=credentials["SessionToken"],
            expires_at=expires_at,
        )


class BoundTenantSigning:
    """Credentials for a SigV4 signer (opensearch-py's `RequestsAWSV4SignerAuth`) that sign every request as the
    session of the tenant being served, read when the request is signed."""

    def __init__(self, credentials: TenantCredentials) -> None:
        self._credentials = credentials

    def get_frozen_credentials(self) -> ReadOnlyCredentials:
        return self._credentials.for_bound_tenant().frozen()
