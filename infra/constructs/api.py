"""`RapportApi`: the REST API in front of the API function, guarded by the API-key Lambda authorizer."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_certificatemanager as acm
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_route53 as route53
from aws_cdk import aws_route53_targets as route53_targets
from constructs import Construct

from infra.nag import acknowledge_no_dead_letter_queue
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


@dataclass(frozen=True)
class CustomDomain:
    """The API under a name of the team's: a certificate ARN, or a hosted zone to validate one and alias the name."""

    domain_name: str
    certificate_arn: str = ""
    hosted_zone_id: str = ""
    hosted_zone_name: str = ""


class RapportApi(Construct):
    """REST API: `/v1/health` and the explorer's files open, everything else under `/v1` behind the API-key
    authorizer."""

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
        stage_name: str = "prod",
        custom_domain: CustomDomain | None = None,
        tracing: bool,
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
                stage_name=stage_name,
                tracing_enabled=tracing,
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
        self.explorer_methods = self._add_explorer_routes(integration)
        self.ingest_methods: list[apigw.Method] = []
        if ingest_handler is not None:
            self._add_ingest_routes(ingest_handler)
        self._cors_on_gateway_errors(cors_origins)
        self.domain_name = self._custom_domain(custom_domain) if custom_domain else None
        self._acknowledge_findings(manage_cloudwatch_role=manage_cloudwatch_role, firewall=firewall)
        self._acknowledge_synchronous_handlers(handler, authorizer_handler, ingest_handler, tracing=tracing)

    def _acknowledge_synchronous_handlers(
        self,
        handler: lambda_.IFunction,
        authorizer_handler: lambda_.IFunction,
        ingest_handler: lambda_.IFunction | None,
        *,
        tracing: bool,
    ) -> None:
        """API Gateway waits for each of its functions and answers the client with their errors."""
        for function in (handler, ingest_handler):
            if function is not None:
                acknowledge_no_dead_letter_queue(
                    function,
                    invoked_by="API Gateway invokes it synchronously (Lambda proxy integration) and answers the "
                    "client with its error, which the client may retry",
                )
        acknowledge_no_dead_letter_queue(
            authorizer_handler,
            invoked_by="API Gateway invokes it synchronously as the request authorizer and refuses the request "
            "(401, 403 or 500) when it fails",
        )
        if not tracing:
            cdk.Validations.of(self.rest_api.deployment_stage).acknowledge(
                cdk.Acknowledgment(
                    id="Serverless-APIGWXrayEnabled",
                    reason=(
                        "Tracing is off for this stack (the `tracing` context value, off by default in dev only); "
                        "the stage's JSON access log still records each request with its latency and status."
                    ),
                )
            )

    def _cors_on_gateway_errors(self, origins: Sequence[str]) -> None:
        """API Gateway's own answers (401 from the authorizer, 429 throttling, 5xx timeouts) never reach the function,
        which adds CORS to everything else. A gateway response has one fixed header value, so this covers one origin
        or `*`; with several, a browser sees those errors as CORS failures (docs/deploy.md#cors)."""
        if len(origins) != 1:
            return
        headers = {"Access-Control-Allow-Origin": f"'{origins[0]}'", "Vary": "'Origin'"}
        for response_type in (apigw.ResponseType.DEFAULT_4_XX, apigw.ResponseType.DEFAULT_5_XX):
            self.rest_api.add_gateway_response(
                f"Cors{response_type.response_type}", type=response_type, response_headers=headers
            )

    def _custom_domain(self, custom: CustomDomain) -> apigw.DomainName:
        """`https://<apiDomainName>/v1/...` on the stage: an ACM certificate given, or one the stack validates in a
        hosted zone it is told of (and an alias record there)."""
        zone = (
            route53.HostedZone.from_hosted_zone_attributes(
                self, "Zone", hosted_zone_id=custom.hosted_zone_id, zone_name=custom.hosted_zone_name
            )
            if custom.hosted_zone_id
            else None
        )
        if custom.certificate_arn:
            certificate: acm.ICertificate = acm.Certificate.from_certificate_arn(
                self, "Certificate", custom.certificate_arn
            )
        else:
            assert zone is not None
            certificate = acm.Certificate(
                self,
                "Certificate",
                domain_name=custom.domain_name,
                validation=acm.CertificateValidation.from_dns(zone),
            )
        domain = apigw.DomainName(
            self,
            "DomainName",
            domain_name=custom.domain_name,
            certificate=certificate,
            endpoint_type=apigw.EndpointType.REGIONAL,
            security_policy=apigw.SecurityPolicy.TLS_1_2,
        )
        domain.add_base_path_mapping(self.rest_api, stage=self.rest_api.deployment_stage)
        if zone is not None:
            route53.ARecord(
                self,
                "AliasRecord",
                zone=zone,
                record_name=custom.domain_name,
                target=route53.RecordTarget.from_alias(route53_targets.ApiGatewayDomain(domain)),
            )
        return domain

    def _add_explorer_routes(self, integration: apigw.LambdaIntegration) -> list[apigw.Method]:
        """`GET /explorer` and `GET /explorer/{file}`: the memory explorer's static files, from the API function, with
        no authorizer (a browser loading a page sends no key). The page then calls `/v1` on this origin with a key."""
        explorer = self.rest_api.root.add_resource("explorer")
        methods = [
            explorer.add_method("GET", integration, authorization_type=apigw.AuthorizationType.NONE),
            explorer.add_resource("{proxy+}").add_method(
                "GET", integration, authorization_type=apigw.AuthorizationType.NONE
            ),
        ]
        reason = (
            "GET /explorer/* answers the memory explorer's static files (HTML, CSS, JavaScript) by name and reads no "
            "data; every data route under /v1 stays behind the API-key authorizer the page's calls go through."
        )
        for method in methods:
            cdk.Validations.of(method).acknowledge(
                cdk.Acknowledgment(id="AwsSolutions-APIG4", reason=reason),
                cdk.Acknowledgment(id="AwsSolutions-COG4", reason=reason),
            )
        return methods

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
