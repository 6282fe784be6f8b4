"""Signed ingestion routes: Slack's Events API and the generic webhook. Authenticated by signature, not API key."""

from __future__ import annotations

import base64

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent

from rapport.ingestion.service import IngestionService, IngestResult, Outcome

SLACK_PATH = "/v1/ingest/slack"
WEBHOOK_PATH = "/v1/ingest/webhook"
INGEST_PATHS = frozenset({SLACK_PATH, WEBHOOK_PATH})


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

    @router.post(SLACK_PATH, tags=["ingest"], summary="Slack Events API (signed by the app's signing secret)")
    def slack():  # a Response: powertools cannot build a schema for its annotation
        event = router.current_event
        # Slack wants a 2xx within 3 s, retries otherwise; a duplicate or an ignored event is still a 200.
        return _respond(ingestion.receive_slack(tenant(), event.headers or {}, raw_body(event)), accepted_status=200)

    @router.post(WEBHOOK_PATH, tags=["ingest"], summary="Generic webhook (HMAC-SHA256, per-tenant secret)")
    def webhook():  # a Response: powertools cannot build a schema for its annotation
        event = router.current_event
        return _respond(ingestion.receive_webhook(tenant(), event.headers or {}, raw_body(event)), accepted_status=202)

    return router
