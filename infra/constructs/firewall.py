"""The API's web ACL: per-tenant rate limits (by API key, by ingest tenant) and a per-IP ceiling."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

EVALUATION_WINDOW_SECONDS = 300
_NO_TRANSFORM = [wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="NONE")]


def _visibility(name: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
    return wafv2.CfnWebACL.VisibilityConfigProperty(
        cloud_watch_metrics_enabled=True, metric_name=name, sampled_requests_enabled=True
    )


def _rate_rule(
    name: str,
    priority: int,
    limit: int,
    custom_keys: list[wafv2.CfnWebACL.RateBasedStatementCustomKeyProperty] | None,
    scope_down: wafv2.CfnWebACL.StatementProperty | None = None,
) -> wafv2.CfnWebACL.RuleProperty:
    return wafv2.CfnWebACL.RuleProperty(
        name=name,
        priority=priority,
        action=wafv2.CfnWebACL.RuleActionProperty(block={}),
        visibility_config=_visibility(name),
        statement=wafv2.CfnWebACL.StatementProperty(
            rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                limit=limit,
                evaluation_window_sec=EVALUATION_WINDOW_SECONDS,
                aggregate_key_type="CUSTOM_KEYS" if custom_keys else "IP",
                custom_keys=custom_keys,
                scope_down_statement=scope_down,
            )
        ),
    )


class ApiFirewall(Construct):
    """Per-tenant throttling, chosen over API Gateway usage plans: a plan needs an API Gateway key per tenant
    provisioned beside the Rapport key and returned by the authorizer, while a WAF rate rule keys on the header
    the tenant already sends. A request over its limit gets 403 from WAF before any Lambda runs.

    - `PerApiKey`: requests carrying the same `Authorization` header (one API key, so one tenant) per 5 minutes;
    - `PerIngestTenant`: requests to `/v1/ingest/*` per `?tenant=` (those carry no API key);
    - `PerIp`: any client IP, the ceiling for everything else (health probes, unauthenticated noise).
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, stage: apigw.Stage, tenant_rate_limit: int, ip_rate_limit: int
    ) -> None:
        super().__init__(scope, construct_id)
        ingest_paths = wafv2.CfnWebACL.StatementProperty(
            byte_match_statement=wafv2.CfnWebACL.ByteMatchStatementProperty(
                field_to_match=wafv2.CfnWebACL.FieldToMatchProperty(uri_path={}),
                positional_constraint="CONTAINS",
                search_string="/v1/ingest/",
                text_transformations=[wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="LOWERCASE")],
            )
        )
        self.web_acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=_visibility("RapportApi"),
            rules=[
                _rate_rule(
                    "PerApiKey",
                    0,
                    tenant_rate_limit,
                    [
                        wafv2.CfnWebACL.RateBasedStatementCustomKeyProperty(
                            header=wafv2.CfnWebACL.RateLimitHeaderProperty(
                                name="authorization", text_transformations=_NO_TRANSFORM
                            )
                        )
                    ],
                ),
                _rate_rule(
                    "PerIngestTenant",
                    1,
                    tenant_rate_limit,
                    [
                        wafv2.CfnWebACL.RateBasedStatementCustomKeyProperty(
                            query_argument=wafv2.CfnWebACL.RateLimitQueryArgumentProperty(
                                name="tenant", text_transformations=_NO_TRANSFORM
                            )
                        )
                    ],
                    scope_down=ingest_paths,
                ),
                _rate_rule("PerIp", 2, ip_rate_limit, None),
            ],
        )
        self.association = wafv2.CfnWebACLAssociation(
            self, "Association", resource_arn=stage.stage_arn, web_acl_arn=self.web_acl.attr_arn
        )
        cdk.Tags.of(self.web_acl).add("rapport:concern", "edge")
