"""KMS side of the per-person keys: data keys generated and unwrapped under the stack's key, each bound to its
person by the encryption context `{tenant, user_hash}` (a wrapped key unwraps only with the context it was made
with, and the tenant access role may only name its own tenant in it)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from rapport.errors import StorageError

if TYPE_CHECKING:
    from rapport.adapters.aws.tenant_credentials import TenantCredentials, TenantSession

_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5})


class KmsDataKeys:
    """Clients are built on first use: constructing one (at cold start, in tests) touches no network. Given tenant
    credentials, every call signs as the session of the tenant being served, as the table's calls do."""

    def __init__(
        self,
        key_id: str,
        *,
        region_name: str | None = None,
        client: Any = None,
        tenant_credentials: TenantCredentials | None = None,
    ) -> None:
        self._key_id = key_id
        self._region_name = region_name
        self._own = client
        self._credentials = tenant_credentials
        self._tenants: dict[str, tuple[TenantSession, Any]] = {}
        self._lock = threading.Lock()

    def generate(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        """A new 256-bit data key: (plaintext, wrapped)."""
        try:
            response = self._client().generate_data_key(
                KeyId=self._key_id, KeySpec="AES_256", EncryptionContext=context
            )
        except (ClientError, BotoCoreError) as exc:
            raise StorageError(f"KMS GenerateDataKey failed ({_code(exc)})") from exc
        return bytes(response["Plaintext"]), bytes(response["CiphertextBlob"])

    def unwrap(self, wrapped: bytes, context: dict[str, str]) -> bytes:
        try:
            response = self._client().decrypt(CiphertextBlob=wrapped, KeyId=self._key_id, EncryptionContext=context)
        except (ClientError, BotoCoreError) as exc:
            raise StorageError(f"KMS Decrypt of a person's data key failed ({_code(exc)})") from exc
        return bytes(response["Plaintext"])

    def _client(self) -> Any:
        if self._credentials is None:
            with self._lock:
                if self._own is None:
                    self._own = boto3.client("kms", region_name=self._region_name, config=_CONFIG)
                return self._own
        session = self._credentials.for_bound_tenant()
        with self._lock:
            cached = self._tenants.get(session.tenant_id)
            if cached is None or cached[0] is not session:
                client = boto3.client(
                    "kms",
                    region_name=self._region_name,
                    config=_CONFIG,
                    aws_access_key_id=session.access_key_id,
                    aws_secret_access_key=session.secret_access_key,
                    aws_session_token=session.session_token,
                )
                cached = self._tenants[session.tenant_id] = (session, client)
            return cached[1]


def _code(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code", "Unknown"))
    return type(exc).__name__
