"""Routes for a tenant's own API keys: what exists, never the secrets (issued by `rapport keys create`)."""

from __future__ import annotations

from datetime import datetime

from aws_lambda_powertools.event_handler.api_gateway import Router
from pydantic import BaseModel, Field

from rapport.api.contract import READ, answers
from rapport.api.dependencies import TenantId
from rapport.clock import Clock
from rapport.domain.models import ApiKeyRecord
from rapport.services.auth import ApiKeyAuthenticator


class ApiKeyOut(BaseModel):
    key_id: str = Field(description="The first 12 hex digits of the key's SHA-256: how a key is named, never the key.")
    name: str
    status: str = Field(description="active, expired or revoked.")
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None = Field(description="To the hour; tracked by the local server.")
    scopes: list[str] = Field(
        description="What the key may do: memories:read, memories:write, knowledge:write, privacy:erase, admin "
        "(every scope). A key issued without scopes holds admin."
    )

    @classmethod
    def of(cls, record: ApiKeyRecord, now: datetime) -> ApiKeyOut:
        status = "revoked" if record.revoked_at else "active" if record.usable(now) else "expired"
        return cls(
            key_id=record.key_id,
            name=record.name,
            status=status,
            created_at=record.created_at,
            expires_at=record.expires_at,
            revoked_at=record.revoked_at,
            last_used_at=record.last_used_at,
            scopes=sorted(scope.value for scope in record.scopes),
        )


class ApiKeysOut(BaseModel):
    keys: list[ApiKeyOut]


def build_keys_router(auth: ApiKeyAuthenticator, clock: Clock) -> Router:
    router = Router()

    @router.get(
        "/v1/keys",
        tags=["keys"],
        summary="The tenant's API keys: id, name, scopes, status, created, expiry, last used",
        operation_id="keys_list",
        responses=answers({200: "The tenant's keys, oldest first"}, errors=READ),
    )
    def list_keys(tenant_id: TenantId) -> ApiKeysOut:
        now = clock.now()
        return ApiKeysOut(keys=[ApiKeyOut.of(r, now) for r in auth.list_keys(tenant_id)])

    return router
