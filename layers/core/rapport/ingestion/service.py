"""Receiving signed requests: verify, deduplicate, map, publish. Nothing reaches the bus unverified."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from enum import StrEnum

from aws_lambda_powertools import Logger
from pydantic import BaseModel

from rapport.clock import Clock
from rapport.errors import InvalidInputError
from rapport.ingestion import signatures
from rapport.ingestion.events import SLACK_SOURCE, TENANT_ID_PATTERN, WEBHOOK_SOURCE, InteractionReceived
from rapport.ingestion.rate_limit import TenantRateLimit
from rapport.ingestion.slack import interaction_from_slack, parse_envelope
from rapport.ingestion.webhook import interaction_from_webhook
from rapport.ports.event_bus import EventBus
from rapport.ports.items import ItemScope
from rapport.ports.tenant_secrets import TenantSecrets
from rapport.services.idempotency import IdempotentRequests, KeyedRequest

logger = Logger(service="rapport-ingest", child=True)

RECEIVED_ROUTE = "ingest_received"

# The names under which a tenant's secrets are kept (`rapport ingest-secret set --source ...`).
SLACK_SECRET = "slack"  # noqa: S105 - the name of a secret, not its value
WEBHOOK_SECRET = "webhook"  # noqa: S105 - the name of a secret, not its value
SLACK_RETRY_HEADER = "x-slack-retry-num"
_TENANT = re.compile(TENANT_ID_PATTERN)


class Outcome(StrEnum):
    ACCEPTED = "accepted"  # verified and put on the bus
    DUPLICATE = "duplicate"  # verified, seen before: acknowledged, not ingested again
    IGNORED = "ignored"  # verified, but nothing to remember (a bot post, an edit, another event type)
    CHALLENGE = "challenge"  # Slack's url_verification handshake


class IngestResult(BaseModel):
    outcome: Outcome
    event_id: str | None = None
    challenge: str | None = None


class IngestionService:
    def __init__(
        self,
        *,
        secrets: TenantSecrets,
        once: IdempotentRequests,
        bus: EventBus,
        clock: Clock,
        replay_window: timedelta,
        remembered_for: timedelta,
        rate_limit: TenantRateLimit | None = None,
    ) -> None:
        self._rate_limit = rate_limit
        self._secrets = secrets
        self._once = once
        self._remembered_for = remembered_for
        self._bus = bus
        self._clock = clock
        self._window = replay_window

    def receive_slack(self, tenant_id: str | None, headers: Mapping[str, str], body: bytes) -> IngestResult:
        tenant = self._tenant(tenant_id)
        lowered = {k.lower(): v for k, v in headers.items()}
        self._verify(
            "v0",
            tenant,
            SLACK_SECRET,
            lowered,
            body,
            signatures.SLACK_TIMESTAMP_HEADER,
            signatures.SLACK_SIGNATURE_HEADER,
        )
        envelope = parse_envelope(body)
        if envelope.type == "url_verification":
            if not envelope.challenge:
                raise InvalidInputError("url_verification without a challenge")
            return IngestResult(outcome=Outcome.CHALLENGE, challenge=envelope.challenge)
        interaction = interaction_from_slack(tenant, envelope)
        if interaction is None:
            return IngestResult(outcome=Outcome.IGNORED, event_id=envelope.event_id)
        if SLACK_RETRY_HEADER in lowered:
            logger.info("Slack retry", retry_num=lowered[SLACK_RETRY_HEADER], event_id=interaction.event_id)
        return self._publish(interaction, SLACK_SOURCE)

    def receive_webhook(self, tenant_id: str | None, headers: Mapping[str, str], body: bytes) -> IngestResult:
        """Standard Webhooks when the request carries `webhook-signature`; otherwise the deprecated v1 scheme."""
        tenant = self._tenant(tenant_id)
        lowered = {k.lower(): v for k, v in headers.items()}
        if signatures.WEBHOOK_SIGNATURE_HEADER not in lowered or signatures.STANDARD_SIGNATURE_HEADER in lowered:
            secret = self._secret(tenant, WEBHOOK_SECRET)
            message_id = signatures.verify_standard_webhook(
                secret=secret, headers=lowered, body=body, now=self._clock.now(), window=self._window
            )
            self._admit(tenant)
            interaction = interaction_from_webhook(tenant, body, message_id=message_id)
            return self._publish(interaction, WEBHOOK_SOURCE)
        self._verify(
            "v1",
            tenant,
            WEBHOOK_SECRET,
            lowered,
            body,
            signatures.WEBHOOK_TIMESTAMP_HEADER,
            signatures.WEBHOOK_SIGNATURE_HEADER,
        )
        # Logged once verified (so strangers cannot fill the log), with a key to count on: the operator sees which
        # tenants still have v1 senders to move before the scheme is removed.
        logger.warning(
            "webhook signed with the deprecated X-Rapport-Signature (v1) scheme",
            tenant_id=tenant,
            deprecated_signature="x-rapport-signature",
            fix="sign with Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature): docs/deploy.md",
        )
        return self._publish(interaction_from_webhook(tenant, body), WEBHOOK_SOURCE)

    def _tenant(self, tenant_id: str | None) -> str:
        if not tenant_id or not _TENANT.fullmatch(tenant_id):
            raise InvalidInputError(
                "the 'tenant' query parameter is missing or malformed: the request URL must end in ?tenant=<tenant id>"
            )
        return tenant_id

    def _verify(
        self,
        version: str,
        tenant: str,
        secret_name: str,
        headers: Mapping[str, str],
        body: bytes,
        timestamp_header: str,
        signature_header: str,
    ) -> None:
        signatures.verify_signature(
            version=version,
            secret=self._secret(tenant, secret_name),
            timestamp=headers.get(timestamp_header),
            received=headers.get(signature_header),
            body=body,
            now=self._clock.now(),
            window=self._window,
            timestamp_header=timestamp_header,
            signature_header=signature_header,
        )
        self._admit(tenant)

    def _secret(self, tenant: str, secret_name: str) -> str | None:
        secret = self._secrets.get(tenant, secret_name)
        if secret is None:
            # Told to the operator, never to the caller: a different answer would tell a stranger which tenants exist.
            logger.warning(
                "signed request for a tenant without a secret",
                tenant_id=tenant,
                fix=f"rapport ingest-secret set --source {secret_name}",
            )
            return None
        return secret.get_secret_value()

    def _admit(self, tenant: str) -> None:
        if self._rate_limit is not None:
            self._rate_limit.admit(tenant)

    def _publish(self, interaction: InteractionReceived, source: str) -> IngestResult:
        """Put the event on the bus once per event id (services/idempotency.py, in the tenant's partition, held for
        `ingest_idempotency_hours`). A publish that fails leaves no record, so the sender's retry gets through
        rather than be called a duplicate; a retry while the first is still publishing is a 409 the sender retries."""

        def publish(_: str) -> dict[str, str]:
            self._bus.publish(interaction.to_bus_event(source))
            return {"event_id": interaction.event_id}

        keyed = KeyedRequest(
            route=RECEIVED_ROUTE, key=interaction.event_id, request=interaction.model_dump(mode="json")
        )
        once = self._once.run(
            ItemScope(tenant_id=interaction.tenant_id), keyed, publish, expires_after=self._remembered_for
        )
        outcome = Outcome.DUPLICATE if once.replayed else Outcome.ACCEPTED
        return IngestResult(outcome=outcome, event_id=interaction.event_id)
