"""Routes for erasure and the audit trail."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.contract import READ, WRITE, answers
from rapport.api.dependencies import CurrentCaller, TenantId, UserScope
from rapport.api.schemas import AuditEventOut, AuditPageOut, ErasedOut
from rapport.services.privacy import PrivacyService


def build_privacy_router(privacy: PrivacyService) -> Router:
    router = Router()

    @router.delete(
        "/v1/privacy/erase/<user_id>",
        tags=["privacy"],
        summary="Erase everything about an end user",
        description="Every item of that end user goes from the table and the index; the audit trail records who, "
        "when and how much (never content). Erasing a user with no data is not an error.",
        operation_id="users_erase",
        responses=answers({200: "What was erased, and the audit event"}, errors=WRITE),
    )
    def erase(user_id: str, scope: UserScope, caller: CurrentCaller) -> ErasedOut:
        counts, event = privacy.erase_user(scope, actor=caller.principal)
        return ErasedOut(status="erased", user_id=user_id, counts=counts.as_dict(), audit_event_id=event.id)

    @router.get(
        "/v1/audit",
        tags=["privacy"],
        summary="The tenant's audit trail, newest first",
        operation_id="audit_list",
        responses=answers({200: "A page of audit events"}, errors=READ),
    )
    def audit(
        tenant_id: TenantId, limit: Annotated[int, Query()] = 20, cursor: Annotated[str | None, Query()] = None
    ) -> AuditPageOut:
        page = privacy.audit_log(tenant_id, limit=limit, cursor=cursor)
        return AuditPageOut(events=[AuditEventOut.of(e) for e in page.items], next_cursor=page.next_cursor)

    return router
