"""Monitoring and the edge in the template: alarms for everything, the dashboard, the topic, the web ACL's rules."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Template

from tests.infrastructure.conftest import Synthesized, function_by_service, only, rapport_functions, resources

pytestmark = pytest.mark.infrastructure


def alarms_on(template: Template, metric_name: str) -> list[dict[str, Any]]:
    return [
        alarm["Properties"]
        for alarm in resources(template, "AWS::CloudWatch::Alarm").values()
        if alarm["Properties"].get("MetricName") == metric_name
    ]


def dimension_refs(alarm: dict[str, Any]) -> list[Any]:
    return [dimension["Value"] for dimension in alarm.get("Dimensions", [])]


def test_every_function_alarms_on_errors_and_throttles(template: Template) -> None:
    functions = rapport_functions(template)
    for metric in ("Errors", "Throttles"):
        watched = {json.dumps(ref) for alarm in alarms_on(template, metric) for ref in dimension_refs(alarm)}
        for logical_id in functions:
            assert json.dumps({"Ref": logical_id}) in watched, (metric, logical_id)


def test_every_queue_alarms_as_soon_as_a_message_waits(template: Template) -> None:
    depth_alarms = alarms_on(template, "ApproximateNumberOfMessagesVisible")
    watched = {json.dumps(ref) for alarm in depth_alarms for ref in dimension_refs(alarm)}
    # Every dead-letter queue, that is: a queue with a dead-letter queue of its own is a work queue, busy by design
    # (the governance jobs' per-user work).
    queues = {i: q for i, q in resources(template, "AWS::SQS::Queue").items() if "RedrivePolicy" not in q["Properties"]}
    assert len(queues) >= 5  # ingestion, index sync, schedules, pipeline, governance jobs
    for logical_id in queues:
        assert json.dumps({"Fn::GetAtt": [logical_id, "QueueName"]}) in watched, logical_id
    assert all(alarm["Threshold"] == 1 for alarm in depth_alarms)


def test_the_state_machine_api_table_and_domain_have_alarms(template: Template) -> None:
    machine_id, _ = only(template, "AWS::StepFunctions::StateMachine")
    failed = [a for a in alarms_on(template, "ExecutionsFailed") if {"Ref": machine_id} in dimension_refs(a)]
    assert failed and alarms_on(template, "ExecutionsTimedOut")
    assert alarms_on(template, "5XXError")
    assert alarms_on(template, "ClusterStatus.red") and alarms_on(template, "FreeStorageSpace")
    table_alarms = [
        a for a in resources(template, "AWS::CloudWatch::Alarm").values() if "Metrics" in a["Properties"]
    ]  # the table's throttles: a sum of read and write throttle events
    assert any("ReadThrottleEvents" in json.dumps(a) and "WriteThrottleEvents" in json.dumps(a) for a in table_alarms)


def test_every_alarm_notifies_the_encrypted_topic(template: Template) -> None:
    topic_id, topic = only(template, "AWS::SNS::Topic")
    assert "KmsMasterKeyId" in topic["Properties"]
    key_id = topic["Properties"]["KmsMasterKeyId"]["Fn::GetAtt"][0]
    assert "cloudwatch.amazonaws.com" in json.dumps(resources(template, "AWS::KMS::Key")[key_id])
    alarms = resources(template, "AWS::CloudWatch::Alarm")
    assert len(alarms) >= 20
    for logical_id, alarm in alarms.items():
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": topic_id}], logical_id
        assert alarm["Properties"]["TreatMissingData"] == "notBreaching", logical_id


def test_the_alarm_email_is_subscribed_when_given(template: Template, variant: Synthesized) -> None:
    assert resources(template, "AWS::SNS::Subscription") == {}
    _, subscription = only(variant.template, "AWS::SNS::Subscription")
    assert subscription["Properties"]["Protocol"] == "email"
    assert subscription["Properties"]["Endpoint"] == "ops@example.com"


def test_one_dashboard_shows_every_function(template: Template) -> None:
    _, dashboard = only(template, "AWS::CloudWatch::Dashboard")
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    for logical_id in rapport_functions(template):
        assert logical_id in body, logical_id


# --- the edge --------------------------------------------------------------------------------------------------------


def test_the_web_acl_rate_limits_per_api_key_and_per_ip_but_never_counts_unverified_ingest_tenants(
    template: Template,
) -> None:
    _, acl = only(template, "AWS::WAFv2::WebACL")
    assert acl["Properties"]["Scope"] == "REGIONAL"
    rules = {
        rule["Name"]: rule["Statement"]["RateBasedStatement"]
        for rule in acl["Properties"]["Rules"]
        if "RateBasedStatement" in rule["Statement"]
    }
    assert rules["PerApiKey"]["CustomKeys"] == [
        {"Header": {"Name": "authorization", "TextTransformations": [{"Priority": 0, "Type": "NONE"}]}}
    ]
    assert rules["PerApiKey"]["Limit"] == 3000
    assert rules["PerIp"]["AggregateKeyType"] == "IP" and rules["PerIp"]["Limit"] == 6000
    # `?tenant=` is a claim until the signature is checked: no rule may count it (a stranger would spend the budget)
    assert set(rules) == {"PerApiKey", "PerIp"}
    assert "QueryArgument" not in json.dumps(acl["Properties"]["Rules"])
    # The webhooks function counts each tenant's verified requests itself, with the same limit and window
    _, webhooks = function_by_service(template, "rapport-webhooks")
    variables = webhooks["Properties"]["Environment"]["Variables"]
    assert variables["RAPPORT_INGEST_RATE_LIMIT"] == "3000"
    assert variables["RAPPORT_INGEST_RATE_WINDOW_SECONDS"] == "300"


def test_the_web_acl_samples_no_requests_and_logs_them_with_the_keys_redacted(template: Template) -> None:
    _, acl = only(template, "AWS::WAFv2::WebACL")
    # Sampled requests would keep every header, bearer keys included, and no redaction applies to them
    visibility = [acl["Properties"]["VisibilityConfig"], *(r["VisibilityConfig"] for r in acl["Properties"]["Rules"])]
    assert all(config["SampledRequestsEnabled"] is False for config in visibility)
    acl_id, _ = only(template, "AWS::WAFv2::WebACL")
    _, logging = only(template, "AWS::WAFv2::LoggingConfiguration")
    assert logging["Properties"]["ResourceArn"] == {"Fn::GetAtt": [acl_id, "Arn"]}
    redacted = {field["SingleHeader"]["Name"] for field in logging["Properties"]["RedactedFields"]}
    assert redacted == {"authorization", "x-api-key"}
    (destination,) = logging["Properties"]["LogDestinationConfigs"]
    log_group_id = destination["Fn::GetAtt"][0]
    log_group = resources(template, "AWS::Logs::LogGroup")[log_group_id]
    # WAF's required prefix, then a suffix of the stack's id: a retained group never blocks the next deploy
    (prefix, suffix) = log_group["Properties"]["LogGroupName"]["Fn::Join"][1]
    assert prefix.startswith("aws-waf-logs-") and "AWS::StackId" in json.dumps(suffix)
    assert log_group["Properties"]["RetentionInDays"] == 30


def test_the_web_acl_runs_aws_managed_rules_after_the_rate_limits_counting_body_rules_only(
    template: Template,
) -> None:
    _, acl = only(template, "AWS::WAFv2::WebACL")
    managed = {
        rule["Name"]: rule for rule in acl["Properties"]["Rules"] if "ManagedRuleGroupStatement" in rule["Statement"]
    }
    assert set(managed) == {
        "AWSManagedRulesAmazonIpReputationList",
        "AWSManagedRulesKnownBadInputsRuleSet",
        "AWSManagedRulesCommonRuleSet",
    }
    rate_priorities = [r["Priority"] for r in acl["Properties"]["Rules"] if "RateBasedStatement" in r["Statement"]]
    assert min(rule["Priority"] for rule in managed.values()) > max(rate_priorities)
    for rule in managed.values():
        assert rule["OverrideAction"] == {"None": {}}  # the group's own actions apply: matches are blocked
        assert rule["Statement"]["ManagedRuleGroupStatement"]["VendorName"] == "AWS"
    # Chat messages and imports are bodies full of code, markup and long texts: those rules only count
    common = managed["AWSManagedRulesCommonRuleSet"]["Statement"]["ManagedRuleGroupStatement"]
    counted = {o["Name"] for o in common["RuleActionOverrides"] if o["ActionToUse"] == {"Count": {}}}
    assert {"SizeRestrictions_BODY", "CrossSiteScripting_BODY"} <= counted


def test_the_web_acl_guards_the_api_stage(template: Template) -> None:
    acl_id, _ = only(template, "AWS::WAFv2::WebACL")
    stage_id, _ = only(template, "AWS::ApiGateway::Stage")
    _, association = only(template, "AWS::WAFv2::WebACLAssociation")
    assert association["Properties"]["WebACLArn"] == {"Fn::GetAtt": [acl_id, "Arn"]}
    assert {"Ref": stage_id} in association["Properties"]["ResourceArn"]["Fn::Join"][1]


def test_a_dev_stack_can_leave_the_web_acl_out(variant: Synthesized) -> None:
    assert resources(variant.template, "AWS::WAFv2::WebACL") == {}
