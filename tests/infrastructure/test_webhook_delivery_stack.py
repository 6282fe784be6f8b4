"""Outbound webhooks in the template: a queue with its dead-letter queue drained by the delivery function, alarms on
both, and the functions whose writes announce events allowed to send to that queue and told its URL."""

from __future__ import annotations

import pytest
from aws_cdk.assertions import Template

from tests.infrastructure.conftest import (
    Synthesized,
    actions_of,
    as_list,
    function_by_service,
    policy_statements_of,
    queue,
    resources,
)

pytestmark = pytest.mark.infrastructure


def test_deliveries_go_through_a_queue_with_a_dead_letter_queue_to_the_delivery_function(template: Template) -> None:
    queue_id, work = queue(template, "WebhookDeliveryQueue")
    dead_id, _ = queue(template, "WebhookDeliveryDeadLetterQueue")
    function_id, function = function_by_service(template, "rapport-webhook-delivery")
    assert work["Properties"]["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dead_id, "Arn"]},
        "maxReceiveCount": 3,
    }
    assert work["Properties"]["VisibilityTimeout"] >= 6 * function["Properties"]["Timeout"]
    assert work["Properties"]["SqsManagedSseEnabled"] is True
    [mapping] = [
        m["Properties"]
        for m in resources(template, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": function_id}
    ]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["ScalingConfig"] == {"MaximumConcurrency": 5}
    variables = function["Properties"]["Environment"]["Variables"]
    assert variables["RAPPORT_WEBHOOK_QUEUE_URL"] == {"Ref": queue_id}
    # It reads endpoints and writes the log, and sends its own retries back; it holds no secret or model access
    statements = policy_statements_of(template, function)
    assert {"dynamodb:Query", "dynamodb:GetItem", "dynamodb:PutItem"} <= actions_of(statements, "dynamodb:")
    assert {"sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage"} <= actions_of(statements, "sqs:")
    assert not actions_of(statements, "secretsmanager:") and not actions_of(statements, "es:")
    assert "RAPPORT_OPENAI_API_KEY_SECRET_ARN" not in variables


@pytest.mark.parametrize(
    "service", ["rapport-api", "rapport-ingest", "rapport-enrichment", "rapport-jobs-worker", "rapport-pipeline-store"]
)
def test_each_writer_that_announces_events_may_send_to_the_queue(template: Template, service: str) -> None:
    queue_id, _ = queue(template, "WebhookDeliveryQueue")
    _, function = function_by_service(template, service)
    assert function["Properties"]["Environment"]["Variables"]["RAPPORT_WEBHOOK_QUEUE_URL"] == {"Ref": queue_id}
    sends = [s for s in policy_statements_of(template, function) if "sqs:SendMessage" in as_list(s["Action"])]
    assert any({"Fn::GetAtt": [queue_id, "Arn"]} in as_list(s["Resource"]) for s in sends)


def test_the_dead_letter_queue_alarms_on_depth_and_the_queue_on_its_oldest_message(default: Synthesized) -> None:
    def alarmed(metric: str) -> set[str]:
        return {
            d["Value"]["Fn::GetAtt"][0]
            for alarm in resources(default.template, "AWS::CloudWatch::Alarm").values()
            for d in alarm["Properties"].get("Dimensions", [])
            if d["Name"] == "QueueName" and alarm["Properties"]["MetricName"] == metric
        }

    queue_id, _ = queue(default.template, "WebhookDeliveryQueue")
    dead_id, _ = queue(default.template, "WebhookDeliveryDeadLetterQueue")
    assert dead_id in alarmed("ApproximateNumberOfMessagesVisible")
    assert queue_id in alarmed("ApproximateAgeOfOldestMessage")


def test_the_stack_is_cdk_nag_clean_with_the_delivery_construct(default: Synthesized, variant: Synthesized) -> None:
    for synthesized in (default, variant):
        webhook_findings = [f for f in synthesized.nag_findings if "WebhookDelivery" in f]
        assert webhook_findings == []


def test_the_layer_carries_the_standard_webhooks_library() -> None:
    from infra.constructs.core_layer import locked_pins

    assert "standardwebhooks" in {pin.name for pin in locked_pins()}
