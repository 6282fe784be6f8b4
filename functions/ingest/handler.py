"""Lambda entry point of the bus consumer: an `Interaction Received` event in, one recorded interaction out."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import envelopes, event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.adapters.aws.xray import lambda_tracer
from rapport.composition.functions import interaction_consumer
from rapport.ingestion.events import InteractionReceived
from rapport.tenancy import acting_for

SERVICE = "rapport-ingest"

logger = Logger(service=SERVICE)
tracer = lambda_tracer(SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
# A detail that does not validate raises here: the invocation fails, Lambda retries, then the on-failure
# destination (the ingestion DLQ) keeps the event. Nothing is dropped quietly.
@event_parser(model=InteractionReceived, envelope=envelopes.EventBridgeEnvelope)
def handler(event: InteractionReceived, context: LambdaContext) -> dict[str, Any]:
    logger.append_keys(tenant_id=event.tenant_id, event_id=event.event_id)
    # The function's remaining time bounds how long this attempt blocks its event id, should it die half way.
    # Acts for the event's tenant below the application: the store signs as that tenant's session.
    with acting_for(event.tenant_id):
        recorded = interaction_consumer().handle(event, deadline=context)
    if recorded is None:
        metrics.add_metric(name="DuplicateEvents", unit=MetricUnit.Count, value=1)
        return {"event_id": event.event_id, "outcome": "duplicate"}
    metrics.add_metric(name="InteractionsIngested", unit=MetricUnit.Count, value=1)
    return {"event_id": event.event_id, "outcome": "recorded", "interaction_id": recorded.interaction.id}
