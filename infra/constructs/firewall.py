"""The API's web ACL: a rate limit per API key and a per-IP ceiling, and its request logs with the keys redacted."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_logs as logs
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

from infra.naming import stack_suffix

EVALUATION_WINDOW_SECONDS = 300
# The headers that carry an API key: never written to WAF's logs.
KEY_HEADERS = ("authorization", "x-api-key")
_NO_TRANSFORM = [wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="NONE")]
# AWS managed rule groups after the rate rules, in order of how cheaply they refuse: known-bad IPs, known-bad inputs
# (Log4j, exploit paths), then the common rule set. Its body rules only count: request bodies are end users' chat
# messages and imports, where code, markup and long texts are ordinary content, not attacks.
MANAGED_RULE_GROUPS = (
    "AWSManagedRulesAmazonIpReputationList",
    "AWSManagedRulesKnownBadInputsRuleSet",
    "AWSManagedRulesCommonRuleSet",
)
COMMON_RULES_COUNTED = (
    "SizeRestrictions_BODY",
    "CrossSiteScripting_BODY",
    "GenericLFI_BODY",
    "GenericRFI_BODY",
    "RestrictedExtensions_QUERYARGUMENTS",
)


def _visibility(name: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
    # Sampled requests keep every header of a request, bearer keys included, for anyone who may read the web ACL,
    # and the logging configuration's redaction does not apply to them: the redacted logs below replace them.
    return wafv2.CfnWebACL.VisibilityConfigProperty(
        cloud_watch_metrics_enabled=True, metric_name=name, sampled_requests_enabled=False
    )


def _managed_rule(name: str, priority: int) -> wafv2.CfnWebACL.RuleProperty:
    counted = COMMON_RULES_COUNTED if name == "AWSManagedRulesCommonRuleSet" else ()
    return wafv2.CfnWebACL.RuleProperty(
        name=name,
        priority=priority,
        override_action=wafv2.CfnWebACL.OverrideActionProperty(none={}),
        visibility_config=_visibility(name),
        statement=wafv2.CfnWebACL.StatementProperty(
            managed_rule_group_statement=wafv2.CfnWebACL.ManagedRuleGroupStatementProperty(
                vendor_name="AWS",
                name=name,
                rule_action_overrides=[
                    wafv2.CfnWebACL.RuleActionOverrideProperty(
                        name=rule, action_to_use=wafv2.CfnWebACL.RuleActionProperty(count={})
                    )
                    for rule in counted
                ]
                or None,
            )
        ),
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
    """Per-tenant throttling of the keyed routes, chosen over API Gateway usage plans: a plan needs an API Gateway key
    per tenant provisioned beside the Rapport key and returned by the authorizer, while a WAF rate rule keys on the
    header the tenant already sends. A request over its limit gets 403 from WAF before any Lambda runs.

    - `PerApiKey`: requests carrying the same `Authorization` header (one API key, so one tenant) per 5 minutes;
    - `PerIp`: any client IP, the ceiling for everything else (health probes, the signed ingest routes, noise).

    The signed ingest routes carry no key, and their `?tenant=` is only a claim until the signature is checked: a WAF
    rule counting it would let a stranger spend a tenant's budget and have its real events refused. Their
    per-tenant limit is counted by the webhooks function once a signature is verified (`rapport.ingestion.rate_limit`).

    Then the AWS managed rule groups (MANAGED_RULE_GROUPS), blocking what they match, body rules counted only.

    Every request WAF sees is logged to `aws-waf-logs-…` with the key headers redacted.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        stage: apigw.Stage,
        tenant_rate_limit: int,
        ip_rate_limit: int,
        log_removal_policy: cdk.RemovalPolicy = cdk.RemovalPolicy.DESTROY,
    ) -> None:
        super().__init__(scope, construct_id)
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
                _rate_rule("PerIp", 1, ip_rate_limit, None),
                *(_managed_rule(name, 2 + i) for i, name in enumerate(MANAGED_RULE_GROUPS)),
            ],
        )
        self.association = wafv2.CfnWebACLAssociation(
            self, "Association", resource_arn=stage.stage_arn, web_acl_arn=self.web_acl.attr_arn
        )
        # WAF writes only to a log group whose name starts with `aws-waf-logs-`; the stack id's suffix keeps a
        # retained group of a destroyed stack from blocking the next deploy.
        self.logs = logs.LogGroup(
            self,
            "Logs",
            log_group_name=f"aws-waf-logs-{cdk.Names.unique_id(self).lower()[:400]}-{stack_suffix(cdk.Stack.of(self))}",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=log_removal_policy,
        )
        self.logging = wafv2.CfnLoggingConfiguration(
            self,
            "Logging",
            resource_arn=self.web_acl.attr_arn,
            log_destination_configs=[self.logs.log_group_arn],
            redacted_fields=[
                wafv2.CfnLoggingConfiguration.FieldToMatchProperty(single_header={"Name": name}) for name in KEY_HEADERS
            ],
        )
        cdk.Tags.of(self.web_acl).add("rapport:concern", "edge")
