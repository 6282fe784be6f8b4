"""Signed ingestion routes: Slack's Events API and the generic webhook. Authenticated by signature, not API key."""

from __future__ import annotations

import base64

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent

from rapport.api.contract import PUBLIC, UPSTREAM, answers
from rapport.api.ingest_schemas import IngestAckOut, SlackChallengeOut
from rapport.ingestion.service import IngestionService, IngestResult, Outcome

SLACK_PATH = "/v1/ingest/slack"
WEBHOOK_PATH = "/v1/ingest/webhook"
INGEST_PATHS = frozenset({SLACK_PATH, WEBHOOK_PATH})
# The body is read raw (its signature is over the bytes), so validation answers no 422 here.
_SIGNED_ROUTE_ERRORS = (400, 401, 413, 429, 503, *UPSTREAM)
_TENANT_DESCRIPTION = "?tenant=<tenant id>: whose secret signs the request."


def raw_body(event: BaseProxyEvent) -> bytes:
    """The bytes the sender signed. API Gateway hands a text body over as received (UTF-8), a binary one base64'd;
    either way nothing here parses and re-serialises it before the signature is checked."""
    body = event.body or ""
    return base64.b64decode(body) if event.is_base64_encoded else body.encode("utf-8")


def _respond(result: IngestResult, *, accepted_status: int) -> Response:
    if result.outcome is Outcome.CHALLENGE:
        return Response(200, content_types.APPLICATION_JSON, {"challenge": result.challenge})
    status = accepted_status if result.outcome is Outcome.ACCEPTED else 200
    return Response(status, content_types.APPLICATION_JSON, {"ok": True, **result.model_dump(exclude_none=True)})


def build_ingest_router(ingestion: IngestionService) -> Router:
    router = Router()

    def tenant() -> str | None:
        return (router.current_event.query_string_parameters or {}).get("tenant")

    @router.post(
        SLACK_PATH,
        tags=["ingest"],
        summary="Slack Events API (signed by the app's signing secret)",
        description=f"Slack's own request, signed with `X-Slack-Signature`; {_TENANT_DESCRIPTION}",
        operation_id="ingest_slack",
        security=PUBLIC,
        responses=answers(
            {200: "Acknowledged (accepted, duplicate or ignored), or the url_verification challenge echoed"},
            errors=_SIGNED_ROUTE_ERRORS,
            model=IngestAckOut | SlackChallengeOut,
        ),
    )
    def slack():  # a Response whose body the contract's model describes
        event = router.current_event
        # Slack wants a 2xx within 3 s, retries otherwise; a duplicate or an ignored event is still a 200.
        return _respond(ingestion.receive_slack(tenant(), event.headers or {}, raw_body(event)), accepted_status=200)

    @router.post(
        WEBHOOK_PATH,
        tags=["ingest"],
        summary="Generic webhook (Standard Webhooks, per-tenant secret)",
        description="A conversation from any platform, signed the Standard Webhooks way: `webhook-id` (the event id "
        "that deduplicates it), `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "
        "{id}.{timestamp}.{body}>`. Deprecated: `X-Rapport-Signature` over `v1:<X-Rapport-Timestamp>:<body>`, "
        f"with the event id in the body's `idempotency_key`; {_TENANT_DESCRIPTION}",
        operation_id="ingest_webhook",
        security=PUBLIC,
        responses=answers(
            {202: "Accepted: put on the bus, ingested shortly", 200: "A duplicate, or nothing to remember"},
            errors=_SIGNED_ROUTE_ERRORS,
            model=IngestAckOut,
        ),
    )
    def webhook():  # a Response whose body the contract's model describes
        event = router.current_event
        return _respond(ingestion.receive_webhook(tenant(), event.headers or {}, raw_body(event)), accepted_status=202)

    return router
