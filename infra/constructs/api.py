"""`RapportApi`: the REST API in front of the API function, guarded by the API-key Lambda authorizer."""

from __future__ import annotations

import json
from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from rapport.api.identity import AUTHORIZATION_HEADER

API_VERSION = "v1"
# Authenticated by the request's signature (Slack's signing secret, the tenant's webhook secret), not an API key.
INGEST_ROUTES = ("slack", "webhook")
AUTHORIZER_CACHE_TTL = cdk.Duration.minutes(5)
CORS_ALLOWED_HEADERS = [
    "Authorization",
    "Content-Type",
    "x-api-key",
    "Idempotency-Key",
    "X-Amz-Date",
    "X-Amz-Security-Token",
]


def _access_log_format() -> apigw.AccessLogFormat:
    """One JSON object per request: enough to trace a call across the authorizer, the function and X-Ray."""
    field = apigw.AccessLogField
    return apigw.AccessLogFormat.custom(
        json.dumps(
            {
                "requestId": field.context_request_id(),
                "extendedRequestId": field.context_extended_request_id(),
                "requestTime": field.context_request_time(),
                "ip": field.context_identity_source_ip(),
                "userAgent": field.context_identity_user_agent(),
                "httpMethod": field.context_http_method(),
                "resourcePath": field.context_resource_path(),
                "path": field.context_path(),
                "protocol": field.context_protocol(),
                "status": field.context_status(),
                "responseLength": field.context_response_length(),
                "responseLatency": field.context_response_latency(),
                "integrationLatency": field.context_integration_latency(),
                "integrationStatus": field.context_integration_status(),
                "errorMessage": field.context_error_message(),
                "authorizerStatus": field.context_authorizer_integration_status(),
                "authorizerLatency": field.context_authorizer_integration_latency(),
                "tenantId": field.context_authorizer("tenant_id"),
                "xrayTraceId": field.context_xray_trace_id(),
            }
        )
    )


class RapportApi(Construct):
    """REST API: `/v1/health` open, everything else under `/v1` behind the API-key authorizer."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        handler: lambda_.IFunction,
        authorizer_handler: lambda_.IFunction,
        throttle_rate_limit: float,
        throttle_burst_limit: int,
        cors_origins: Sequence[str],
        manage_cloudwatch_role: bool,
        log_removal_policy: cdk.RemovalPolicy,
        ingest_handler: lambda_.IFunction | None = None,
        firewall: bool = True,
    ) -> None:
        super().__init__(scope, construct_id)
        self.access_logs = logs.LogGroup(
            self, "AccessLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=log_removal_policy
        )
        # API Gateway requires every identity source of a caching REQUEST authorizer to be present, or answers 401
        # without calling it; listing x-api-key too would force clients to send both headers. So the cached identity
        # is the Authorization header, and it is the only header the function reads the key from.
        self.authorizer = apigw.RequestAuthorizer(
            self,
            "ApiKeyAuthorizer",
            handler=authorizer_handler,
            identity_sources=[apigw.IdentitySource.header(AUTHORIZATION_HEADER)],
            results_cache_ttl=AUTHORIZER_CACHE_TTL,
        )
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            description="Rapport: relational memory for AI assistants",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            # Access logging needs the account-wide API Gateway CloudWatch role; an account that already has one
            # (another stack set it) can turn this off with the context value apiGatewayCloudWatchRole=false.
            cloud_watch_role=manage_cloudwatch_role,
            cloud_watch_role_removal_policy=cdk.RemovalPolicy.RETAIN if manage_cloudwatch_role else None,
            deploy_options=apigw.StageOptions(
                tracing_enabled=True,
                access_log_destination=apigw.LogGroupLogDestination(self.access_logs),
                access_log_format=_access_log_format(),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,  # request bodies carry end users' messages: keep them out of logs
                metrics_enabled=True,
                throttling_rate_limit=throttle_rate_limit,
                throttling_burst_limit=throttle_burst_limit,
            ),
            # Secure by default: a method added later is behind the authorizer unless it opts out explicitly.
            default_method_options=apigw.MethodOptions(
                authorizer=self.authorizer, authorization_type=apigw.AuthorizationType.CUSTOM
            ),
            default_cors_preflight_options=(
                apigw.CorsOptions(allow_origins=list(cors_origins), allow_headers=CORS_ALLOWED_HEADERS)
                if cors_origins
                else None
            ),
        )
        integration = apigw.LambdaIntegration(handler, allow_test_invoke=False)
        self.v1 = self.rest_api.root.add_resource(API_VERSION)
        self.v1.add_proxy(default_integration=integration, any_method=True)
        self.health_method = self.v1.add_resource("health").add_method(
            "GET", integration, authorization_type=apigw.AuthorizationType.NONE
        )
        self.ingest_methods: list[apigw.Method] = []
        if ingest_handler is not None:
            self._add_ingest_routes(ingest_handler)
        self._acknowledge_findings(manage_cloudwatch_role=manage_cloudwatch_role, firewall=firewall)

    def _add_ingest_routes(self, handler: lambda_.IFunction) -> None:
        """`POST /v1/ingest/{slack,webhook}` to the webhooks function, with no authorizer: the function verifies the
        signature over the raw body and answers 401 itself. An explicit resource wins over `{proxy+}`."""
        integration = apigw.LambdaIntegration(handler, allow_test_invoke=False)
        ingest = self.v1.add_resource("ingest")
        for route in INGEST_ROUTES:
            method = ingest.add_resource(route).add_method(
                "POST", integration, authorization_type=apigw.AuthorizationType.NONE
            )
            reason = (
                f"POST /v1/ingest/{route} is called by a chat platform that cannot send an API key; the webhooks "
                "function verifies an HMAC-SHA256 signature with the tenant's secret and a 5-minute replay window."
            )
            cdk.Validations.of(method).acknowledge(
                cdk.Acknowledgment(id="AwsSolutions-APIG4", reason=reason),
                cdk.Acknowledgment(id="AwsSolutions-COG4", reason=reason),
            )
            self.ingest_methods.append(method)

    def _acknowledge_findings(self, *, manage_cloudwatch_role: bool, firewall: bool) -> None:
        cdk.Validations.of(self.health_method).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-APIG4",
                reason="GET /v1/health is a liveness probe for load balancers and uptime checks; it reads no data.",
            ),
            cdk.Acknowledgment(
                id="AwsSolutions-COG4",
                reason="GET /v1/health is a liveness probe for load balancers and uptime checks; it reads no data.",
            ),
        )
        api = cdk.Validations.of(self.rest_api)
        api.acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-COG4",
                reason=(
                    "Clients are tenants' servers holding API keys, not people signing in: a Lambda authorizer maps "
                    "each key to its tenant. Cognito user pools do not model that."
                ),
            ),
            cdk.Acknowledgment(
                id="AwsSolutions-APIG2",
                reason=(
                    "Requests are validated in the API function against pydantic models, which return a 4xx a person "
                    "can act on; API Gateway models would duplicate them for a {proxy+} resource."
                ),
            ),
        )
        if not firewall:
            cdk.Validations.of(self.rest_api.deployment_stage).acknowledge(
                cdk.Acknowledgment(
                    id="AwsSolutions-APIG3",
                    reason=(
                        "wafEnabled=false (a dev stack): no web ACL, so no per-tenant rate limits; every route but "
                        "health and the signed ingest routes needs an API key, and the stage still throttles."
                    ),
                )
            )
        if manage_cloudwatch_role:
            api.acknowledge(
                cdk.Acknowledgment(
                    id="AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]",
                    reason=(
                        "The account-wide API Gateway logging role: this AWS-managed policy is the documented one for "
                        "that purpose and is used by API Gateway only."
                    ),
                ),
            )
