"""Routes for a tenant's outbound webhook endpoints and their delivery log (docs/webhooks.md)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from rapport.api.contract import READ, WITH_BODY, WRITE, answers
from rapport.api.dependencies import TenantId
from rapport.api.webhook_schemas import (
    CreatedWebhookOut,
    CreateWebhookRequest,
    DeliveriesOut,
    DeliveryOut,
    WebhookOut,
    WebhooksOut,
)
from rapport.services.webhooks import WebhookEndpoints


def build_webhooks_router(endpoints: WebhookEndpoints) -> Router:
    router = Router()

    @router.post(
        "/v1/webhooks",
        tags=["webhooks"],
        summary="Register an endpoint for outbound events; its signing secret is answered once",
        description="Events (memory.stored, interaction.processed, user.erased) are POSTed to the URL signed the "
        "Standard Webhooks way with the endpoint's own `whsec_` secret, retried with exponential backoff. Payloads "
        "carry ids and counts, never a memory's text.",
        operation_id="webhooks_create",
        status_code=201,
        responses=answers({201: "The endpoint, with its secret (shown only now)"}, errors=WITH_BODY),
    )
    def create(tenant_id: TenantId, body: CreateWebhookRequest) -> CreatedWebhookOut:
        return CreatedWebhookOut.created(endpoints.register(tenant_id, body.url, body.event_types))

    @router.get(
        "/v1/webhooks",
        tags=["webhooks"],
        summary="The tenant's webhook endpoints (never their secrets)",
        operation_id="webhooks_list",
        responses=answers({200: "The endpoints, oldest first"}, errors=READ),
    )
    def list_webhooks(tenant_id: TenantId) -> WebhooksOut:
        return WebhooksOut(webhooks=[WebhookOut.of(e) for e in endpoints.list(tenant_id)])

    @router.get(
        "/v1/webhooks/<webhook_id>",
        tags=["webhooks"],
        summary="One webhook endpoint (never its secret)",
        operation_id="webhooks_get",
        responses=answers({200: "The endpoint"}, errors=READ),
    )
    def get_webhook(webhook_id: str, tenant_id: TenantId) -> WebhookOut:
        return WebhookOut.of(endpoints.get(tenant_id, webhook_id))

    @router.delete(
        "/v1/webhooks/<webhook_id>",
        tags=["webhooks"],
        summary="Delete an endpoint: nothing more is sent to it (its log expires unread)",
        operation_id="webhooks_delete",
        status_code=204,
        responses=answers({204: "Deleted"}, errors=WRITE),
    )
    def delete_webhook(webhook_id: str, tenant_id: TenantId):  # a 204: no body, so no model
        endpoints.delete(tenant_id, webhook_id)
        return Response(status_code=204, content_type=content_types.APPLICATION_JSON, body="")

    @router.get(
        "/v1/webhooks/<webhook_id>/deliveries",
        tags=["webhooks"],
        summary="The endpoint's delivery log, newest first: event id, type, attempt, status, error, when",
        operation_id="webhooks_deliveries",
        responses=answers({200: "A page of delivery attempts"}, errors=READ),
    )
    def deliveries(
        webhook_id: str,
        tenant_id: TenantId,
        limit: Annotated[int, Query()] = 20,
        cursor: Annotated[str | None, Query()] = None,
    ) -> DeliveriesOut:
        page = endpoints.deliveries(tenant_id, webhook_id, limit=limit, cursor=cursor)
        return DeliveriesOut(deliveries=[DeliveryOut.of(a) for a in page.items], next_cursor=page.next_cursor)

    return router
