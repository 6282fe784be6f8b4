"""The governance jobs in the template: four schedules on the producer, a work queue with its dead-letter queue,
workers draining it with partial-batch failures and bounded concurrency, least privilege for each function."""

from __future__ import annotations

import json

import pytest
from aws_cdk.assertions import Template

from tests.infrastructure.conftest import (
    Synthesized,
    actions_of,
    function_by_service,
    policy_statements_of,
    queue,
    resources,
)

pytestmark = pytest.mark.infrastructure


def test_each_job_is_scheduled_on_the_producer_daily_weekly_or_nightly(template: Template) -> None:
    producer_id, _ = function_by_service(template, "rapport-jobs-producer")
    schedules = {
        json.loads(s["Properties"]["Target"]["Input"])["job"]: s["Properties"]
        for s in resources(template, "AWS::Scheduler::Schedule").values()
    }
    assert {name: s["ScheduleExpression"] for name, s in schedules.items()} == {
        "retention": "cron(0 1 * * ? *)",  # nightly
        "decay": "cron(0 2 * * ? *)",  # daily
        "compress": "cron(0 3 * * ? *)",  # daily, after decay
        "consolidate": "cron(0 4 ? * SUN *)",  # weekly
    }
    assert all(s["Target"]["Arn"] == {"Fn::GetAtt": [producer_id, "Arn"]} for s in schedules.values())


def test_per_user_work_goes_through_a_queue_with_a_dead_letter_queue_to_the_workers(template: Template) -> None:
    work_id, work = queue(template, "GovernanceWorkQueue")
    dead_id, _ = queue(template, "GovernanceDeadLetterQueue")
    worker_id, worker = function_by_service(template, "rapport-jobs-worker")
    redrive = work["Properties"]["RedrivePolicy"]
    assert redrive == {"deadLetterTargetArn": {"Fn::GetAtt": [dead_id, "Arn"]}, "maxReceiveCount": 3}
    # a message stays hidden longer than a worker can hold it
    assert work["Properties"]["VisibilityTimeout"] >= 6 * worker["Properties"]["Timeout"]
    [mapping] = [
        m["Properties"]
        for m in resources(template, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": worker_id}
    ]
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": [work_id, "Arn"]}
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BatchSize"] == 10 and mapping["ScalingConfig"] == {"MaximumConcurrency": 10}
    for service in ("rapport-jobs-producer", "rapport-jobs-worker"):
        variables = function_by_service(template, service)[1]["Properties"]["Environment"]["Variables"]
        assert variables["RAPPORT_GOVERNANCE_JOB_QUEUE_URL"] == {"Ref": work_id}


def test_the_producer_only_enqueues_and_the_worker_reads_and_writes_the_table(template: Template) -> None:
    _, producer = function_by_service(template, "rapport-jobs-producer")
    _, worker = function_by_service(template, "rapport-jobs-worker")
    producer_statements = policy_statements_of(template, producer)
    assert actions_of(producer_statements, "dynamodb:") == set()
    assert "sqs:SendMessage" in actions_of(producer_statements, "sqs:")
    assert not actions_of(producer_statements, "secretsmanager:")
    worker_statements = policy_statements_of(template, worker)
    assert {"dynamodb:PutItem", "dynamodb:Query", "dynamodb:DeleteItem"} <= actions_of(worker_statements, "dynamodb:")
    assert {"sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage"} <= actions_of(worker_statements, "sqs:")


def test_dead_letter_queues_alarm_on_depth_and_the_busy_work_queue_on_its_oldest_message(
    default: Synthesized,
) -> None:
    def alarmed(metric: str) -> dict[str, dict]:
        return {
            d["Value"]["Fn::GetAtt"][0]: alarm["Properties"]
            for alarm in resources(default.template, "AWS::CloudWatch::Alarm").values()
            for d in alarm["Properties"].get("Dimensions", [])
            if d["Name"] == "QueueName" and alarm["Properties"]["MetricName"] == metric
        }

    work_id, _ = queue(default.template, "GovernanceWorkQueue")
    dead_id, _ = queue(default.template, "GovernanceDeadLetterQueue")
    by_depth, by_age = alarmed("ApproximateNumberOfMessagesVisible"), alarmed("ApproximateAgeOfOldestMessage")
    assert dead_id in by_depth and work_id not in by_depth
    # every work queue (the webhook deliveries' too) alarms on age; a dead-letter queue does not
    assert work_id in by_age and dead_id not in by_age and by_age[work_id]["Threshold"] == 2 * 3600
