"""Routes for erasure and the audit trail (what `api/access.py` records, and the erasures)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.contract import READ, WRITE, answers
from rapport.api.dependencies import CurrentCaller, TenantId, UserScope
from rapport.api.schemas import AuditEventOut, AuditPageOut, ErasedOut
from rapport.services.audit import AuditQuery, AuditTrail
from rapport.services.privacy import PrivacyService


def build_privacy_router(privacy: PrivacyService, trail: AuditTrail) -> Router:
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
        return ErasedOut(
            status="erased",
            user_id=user_id,
            counts=counts.as_dict(),
            agents=counts.by_agent(),
            audit_event_id=event.id,
        )

    @router.get(
        "/v1/audit",
        tags=["privacy"],
        summary="The tenant's audit trail, newest first: every write and privileged read, and every erasure",
        description="Who (the key's id), what (the operation), about whom (the end user's hash, never the id), when "
        "and the status answered; never content. `user_id` narrows to one end user (hashed as the trail names "
        "them, so an erased person's events are still found by their id); `since` (inclusive) and `until` "
        "(exclusive) bound the time, ISO 8601, UTC unless a zone is given.",
        operation_id="audit_list",
        responses=answers({200: "A page of audit events"}, errors=READ),
    )
    def audit(
        tenant_id: TenantId,
        limit: Annotated[int, Query()] = 20,
        cursor: Annotated[str | None, Query()] = None,
        user_id: Annotated[str | None, Query(description="Only this end user's events.")] = None,
        since: Annotated[datetime | None, Query(description="Events at or after this time.")] = None,
        until: Annotated[datetime | None, Query(description="Events before this time.")] = None,
    ) -> AuditPageOut:
        query = AuditQuery(limit=limit, cursor=cursor, user_id=user_id, since=since, until=until)
        page = trail.events(tenant_id, query)
        return AuditPageOut(events=[AuditEventOut.of(e) for e in page.items], next_cursor=page.next_cursor)

    return router
