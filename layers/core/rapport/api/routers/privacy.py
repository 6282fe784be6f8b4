"""Routes for erasure and the audit trail."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.dependencies import CurrentCaller, TenantId, UserScope
from rapport.api.schemas import AuditEventOut
from rapport.services.privacy import PrivacyService


def build_privacy_router(privacy: PrivacyService) -> Router:
    router = Router()

    @router.delete("/v1/privacy/erase/<user_id>", tags=["privacy"], summary="Erase everything about an end user")
    def erase(user_id: str, scope: UserScope, caller: CurrentCaller) -> dict:
        counts, event = privacy.erase_user(scope, actor=caller.principal)
        return {"status": "erased", "user_id": user_id, "counts": counts.as_dict(), "audit_event_id": event.id}

    @router.get("/v1/audit", tags=["privacy"], summary="The tenant's audit trail, newest first")
    def audit(
        tenant_id: TenantId, limit: Annotated[int, Query()] = 20, cursor: Annotated[str | None, Query()] = None
    ) -> dict:
        page = privacy.audit_log(tenant_id, limit=limit, cursor=cursor)
        return {
            "events": [AuditEventOut.of(e).model_dump(mode="json") for e in page.items],
            "next_cursor": page.next_cursor,
        }

    return router
