"""Secrets Manager adapter of `TenantSecrets`: one secret per tenant and name, under a prefix the stack grants."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from pydantic import SecretStr

from rapport.errors import UpstreamError
from rapport.ports.tenant_secrets import check_secret_name_part

# A signing secret is read on every signed request; caching it for a few minutes keeps Secrets Manager off the hot
# path. The price: a rotated secret takes up to this long to be used (docs/deploy.md says so).
CACHE_SECONDS = 300.0
_CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 4})


def _error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


class SecretsManagerTenantSecrets:
    """`{prefix}/{tenant_id}/{name}`: the Lambda role may read `{prefix}/*` and nothing else in Secrets Manager."""

    def __init__(
        self,
        prefix: str,
        *,
        secrets_client: Any = None,
        region_name: str | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._prefix = prefix.strip("/")
        if not self._prefix:
            raise ValueError("a secret name prefix is required")
        self._client = secrets_client
        self._region_name = region_name
        self._monotonic = monotonic
        self._cache: dict[str, tuple[float, SecretStr]] = {}

    def secret_id(self, tenant_id: str, name: str) -> str:
        return f"{self._prefix}/{check_secret_name_part('tenant_id', tenant_id)}/{check_secret_name_part('name', name)}"

    def _secrets(self) -> Any:
        if self._client is None:
            self._client = boto3.client("secretsmanager", region_name=self._region_name, config=_CLIENT_CONFIG)
        return self._client

    def get(self, tenant_id: str, name: str) -> SecretStr | None:
        secret_id = self.secret_id(tenant_id, name)
        cached = self._cache.get(secret_id)
        if cached is not None and self._monotonic() - cached[0] < CACHE_SECONDS:
            return cached[1]
        try:
            response = self._secrets().get_secret_value(SecretId=secret_id)
        except ClientError as exc:
            # Not cached: a tenant who sets its secret a moment later must not wait out the cache.
            if _error_code(exc) == "ResourceNotFoundException":
                return None
            raise UpstreamError(f"Secrets Manager GetSecretValue failed: {_error_code(exc)}") from exc
        except BotoCoreError as exc:
            raise UpstreamError(f"Secrets Manager GetSecretValue failed: {type(exc).__name__}") from exc
        value = SecretStr(str(response["SecretString"]))
        self._cache[secret_id] = (self._monotonic(), value)
        return value

    def put(self, tenant_id: str, name: str, value: SecretStr) -> None:
        secret_id = self.secret_id(tenant_id, name)
        try:
            try:
                self._secrets().put_secret_value(SecretId=secret_id, SecretString=value.get_secret_value())
            except ClientError as exc:
                if _error_code(exc) != "ResourceNotFoundException":
                    raise
                self._secrets().create_secret(
                    Name=secret_id,
                    SecretString=value.get_secret_value(),
                    Description=f"Rapport ingestion secret {name!r} of tenant {tenant_id!r}",
                    Tags=[{"Key": "rapport:tenant", "Value": tenant_id}],
                )
        except (ClientError, BotoCoreError) as exc:
            code = _error_code(exc) if isinstance(exc, ClientError) else type(exc).__name__
            raise UpstreamError(f"Secrets Manager could not store {secret_id}: {code}") from exc
        self._cache.pop(secret_id, None)
