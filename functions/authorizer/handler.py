"""Lambda REQUEST authorizer of the REST API: an API key in, an IAM policy carrying the key's tenant out."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.data_classes import event_source
from aws_lambda_powertools.utilities.data_classes.api_gateway_authorizer_event import (
    APIGatewayAuthorizerRequestEvent,
    APIGatewayAuthorizerResponse,
)
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.adapters.aws.xray import lambda_tracer
from rapport.api.identity import SCOPES_CONTEXT, bearer_key_from_headers
from rapport.composition.functions import authenticator
from rapport.domain.access import scopes_text
from rapport.services.auth import hash_key

SERVICE = "rapport-authorizer"
# API Gateway logs the principal and hands it to the API: a prefix of the key's hash names it without revealing it.
PRINCIPAL_HASH_CHARS = 12

logger = Logger(service=SERVICE)
tracer = lambda_tracer(SERVICE)
metrics = Metrics(namespace="Rapport", service=SERVICE)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
@event_source(data_class=APIGatewayAuthorizerRequestEvent)
def handler(event: APIGatewayAuthorizerRequestEvent, context: LambdaContext) -> dict[str, Any]:
    api_key = bearer_key_from_headers(event.get("headers") or {})
    record = authenticator().identify(api_key) if api_key else None
    if api_key is None or record is None:
        metrics.add_metric(name="ApiKeyRejected", unit=MetricUnit.Count, value=1)
        # This exact message is what makes API Gateway answer 401 rather than 500.
        raise Exception("Unauthorized")

    tenant_id = record.tenant_id
    principal_id = hash_key(api_key)[:PRINCIPAL_HASH_CHARS]
    logger.append_keys(tenant_id=tenant_id, principal_id=principal_id)
    arn = event.parsed_arn
    # API Gateway caches this result per key for every route, so it must allow the whole stage, not this method.
    policy = APIGatewayAuthorizerResponse(
        principal_id=principal_id,
        region=arn.region,
        aws_account_id=arn.aws_account_id,
        api_id=arn.api_id,
        stage=arn.stage,
        # The scopes ride in the cached result too: a key's change of scopes, like its revocation, shows within the TTL.
        context={"tenant_id": tenant_id, SCOPES_CONTEXT: scopes_text(record.scopes)},
        partition=arn.partition,
    )
    policy.allow_all_routes()
    return policy.asdict()
