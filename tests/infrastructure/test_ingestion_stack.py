"""Ingestion, index sync, pipeline and schedules in the template: where events go, and where failures end up."""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_scheduler as scheduler
from aws_cdk.assertions import Template

from infra.constructs.schedules import ScheduledJob, Schedules
from tests.infrastructure.conftest import (
    actions_of,
    as_list,
    function_by_service,
    memory_table,
    only,
    policy_statements_of,
    resources,
)

pytestmark = pytest.mark.infrastructure


def rule_with_pattern(template: Template, detail_type: Any) -> dict[str, Any]:
    for rule in resources(template, "AWS::Events::Rule").values():
        if rule["Properties"].get("EventPattern", {}).get("detail-type") == detail_type:
            return dict(rule["Properties"])
    raise AssertionError(f"no rule for detail-type {detail_type}")


def invoke_failures_of(template: Template, function_id: str) -> Any:
    """Where an asynchronous invocation of the function goes once Lambda's retries are spent."""
    (config,) = [
        c["Properties"]
        for c in resources(template, "AWS::Lambda::EventInvokeConfig").values()
        if c["Properties"]["FunctionName"] == {"Ref": function_id}
    ]
    return config["DestinationConfig"]["OnFailure"]["Destination"]


def queue_id(template: Template, prefix: str) -> str:
    (found,) = [logical_id for logical_id in resources(template, "AWS::SQS::Queue") if logical_id.startswith(prefix)]
    return found


# --- the bus ---------------------------------------------------------------------------------------------------------


def test_interaction_events_go_to_the_consumer_and_what_it_cannot_take_to_the_dlq(template: Template) -> None:
    bus_id, _ = only(template, "AWS::Events::EventBus")
    dlq_id = queue_id(template, "IngestionDeadLetterQueue")
    consumer_id, _ = function_by_service(template, "rapport-ingest")
    rule = rule_with_pattern(template, ["Interaction Received"])
    assert rule["EventBusName"] == {"Ref": bus_id}
    assert rule["EventPattern"]["source"] == [{"prefix": "rapport.ingest"}]
    (target,) = rule["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [consumer_id, "Arn"]}
    # A delivery EventBridge cannot make is kept in the DLQ...
    assert target["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": [dlq_id, "Arn"]}}
    # ...and so is an event the consumer fails on (a malformed detail) after Lambda's own retries
    assert invoke_failures_of(template, consumer_id) == {"Fn::GetAtt": [dlq_id, "Arn"]}


def test_memories_stored_events_go_to_the_enrichment_function_and_failures_to_the_dlq(template: Template) -> None:
    bus_id, _ = only(template, "AWS::Events::EventBus")
    dlq_id = queue_id(template, "IngestionDeadLetterQueue")
    enricher_id, enricher = function_by_service(template, "rapport-enrichment")
    rule = rule_with_pattern(template, ["Memories Stored"])
    assert rule["EventBusName"] == {"Ref": bus_id} and rule["EventPattern"]["source"] == ["rapport.graph"]
    (target,) = rule["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [enricher_id, "Arn"]}
    assert target["DeadLetterConfig"] == {"Arn": {"Fn::GetAtt": [dlq_id, "Arn"]}}
    assert invoke_failures_of(template, enricher_id) == {"Fn::GetAtt": [dlq_id, "Arn"]}
    assert enricher["Properties"]["ReservedConcurrentExecutions"] > 0
    # Every writer of memories announces them rather than enriching inline, and may put events on the bus
    for service in ("rapport-api", "rapport-ingest", "rapport-jobs-worker", "rapport-pipeline-store"):
        _, writer = function_by_service(template, service)
        variables = writer["Properties"]["Environment"]["Variables"]
        assert variables["RAPPORT_GRAPH_ENRICHMENT"] == "event"
        assert variables["RAPPORT_EVENT_BUS_NAME"] == {"Ref": bus_id}
        assert "events:PutEvents" in actions_of(policy_statements_of(template, writer), "events:")


def test_an_event_of_an_unknown_detail_type_is_kept_not_dropped(template: Template) -> None:
    rule = rule_with_pattern(template, [{"anything-but": ["Interaction Received"]}])
    assert rule["EventPattern"]["source"] == [{"prefix": "rapport.ingest"}]
    (target,) = rule["Targets"]
    assert target["Arn"] == {"Fn::GetAtt": [queue_id(template, "IngestionDeadLetterQueue"), "Arn"]}


def test_the_ingestion_dlq_is_encrypted_with_a_key_eventbridge_may_use(template: Template) -> None:
    dlq = resources(template, "AWS::SQS::Queue")[queue_id(template, "IngestionDeadLetterQueue")]
    key_id = dlq["Properties"]["KmsMasterKeyId"]["Fn::GetAtt"][0]
    key_policy = json.dumps(resources(template, "AWS::KMS::Key")[key_id]["Properties"]["KeyPolicy"])
    assert "events.amazonaws.com" in key_policy
    assert dlq["Properties"]["MessageRetentionPeriod"] == 14 * 24 * 3600


def test_the_webhooks_function_publishes_to_the_bus_and_reads_only_ingest_secrets(template: Template) -> None:
    bus_id, _ = only(template, "AWS::Events::EventBus")
    _, webhooks = function_by_service(template, "rapport-webhooks")
    variables = webhooks["Properties"]["Environment"]["Variables"]
    assert variables["RAPPORT_EVENT_BUS_NAME"] == {"Ref": bus_id}
    assert variables["RAPPORT_INGEST_SECRET_BACKEND"] == "secretsmanager"
    statements = policy_statements_of(template, webhooks)
    (put,) = [s for s in statements if actions_of([s], "events:")]
    assert as_list(put["Action"]) == ["events:PutEvents"] and put["Resource"] == {"Fn::GetAtt": [bus_id, "Arn"]}
    (secrets,) = [s for s in statements if actions_of([s], "secretsmanager:")]
    assert as_list(secrets["Action"]) == ["secretsmanager:GetSecretValue"]
    assert f":secret:{variables['RAPPORT_INGEST_SECRET_PREFIX']}/*" in json.dumps(secrets["Resource"])


def test_runaway_functions_have_reserved_concurrency_unless_turned_off(template: Template, variant: Any) -> None:
    for service in ("rapport-ingest", "rapport-webhooks", "rapport-indexer"):
        assert function_by_service(template, service)[1]["Properties"]["ReservedConcurrentExecutions"] > 0
        assert "ReservedConcurrentExecutions" not in function_by_service(variant.template, service)[1]["Properties"]


# --- the pipeline ----------------------------------------------------------------------------------------------------


def test_the_pipeline_is_an_express_state_machine_started_by_recording(template: Template) -> None:
    machine_id, machine = only(template, "AWS::StepFunctions::StateMachine")
    assert machine["Properties"]["StateMachineType"] == "EXPRESS"
    definition = json.dumps(machine["Properties"]["DefinitionString"])
    for state in ("Record", "Extract", "Filter", "Store", "SendToDeadLetterQueue"):
        assert f'\\"{state}\\"' in definition, state
    assert '\\"Type\\":\\"Parallel\\"' in definition
    # The bus's consumer records the interaction; the table's stream starts the pipeline (the starter), not it
    _, consumer = function_by_service(template, "rapport-ingest")
    variables = consumer["Properties"]["Environment"]["Variables"]
    assert variables["RAPPORT_PIPELINE"] == "stream"
    assert not [s for s in policy_statements_of(template, consumer) if actions_of([s], "states:")]
    _, starter = function_by_service(template, "rapport-starter")
    starts = [s for s in policy_statements_of(template, starter) if actions_of([s], "states:")]
    assert [(as_list(s["Action"]), s["Resource"]) for s in starts] == [(["states:StartExecution"], {"Ref": machine_id})]


# --- the index sync --------------------------------------------------------------------------------------------------


def test_the_indexer_reads_memory_records_of_the_stream_with_partial_batch_failures(template: Template) -> None:
    table_id, _ = memory_table(template)
    indexer_id, _ = function_by_service(template, "rapport-indexer")
    # (the governance workers' SQS mapping is the other one: tests/infrastructure/test_governance_stack.py)
    [mapping] = [
        m
        for m in resources(template, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": indexer_id}
    ]
    properties = mapping["Properties"]
    assert properties["EventSourceArn"] == {"Fn::GetAtt": [table_id, "StreamArn"]}
    assert properties["FunctionName"] == {"Ref": indexer_id}
    assert properties["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert properties["BisectBatchOnFunctionError"] is True
    assert properties["DestinationConfig"]["OnFailure"]["Destination"] == {
        "Fn::GetAtt": [queue_id(template, "IndexSyncFailureQueue"), "Arn"]
    }
    (only_filter,) = properties["FilterCriteria"]["Filters"]
    assert json.loads(only_filter["Pattern"]) == {"dynamodb": {"Keys": {"sk": {"S": [{"prefix": "MEM#"}]}}}}


# --- schedules -------------------------------------------------------------------------------------------------------


def test_every_schedule_of_the_stack_is_in_the_group_with_retries_and_the_dlq(template: Template) -> None:
    # The stack composes Schedules with the jobs it has: the governance jobs (which ones, and what each runs:
    # tests/infrastructure/test_governance_stack.py)
    _, group = only(template, "AWS::Scheduler::ScheduleGroup")
    dlq_arn = {"Fn::GetAtt": [queue_id(template, "SchedulesDeadLetterQueue"), "Arn"]}
    schedules = resources(template, "AWS::Scheduler::Schedule")
    assert schedules
    for logical_id, schedule in schedules.items():
        properties = schedule["Properties"]
        assert properties["GroupName"] == group["Properties"]["Name"], logical_id
        assert properties["Target"]["DeadLetterConfig"] == {"Arn": dlq_arn}, logical_id
        assert properties["Target"]["RetryPolicy"]["MaximumRetryAttempts"] == 2, logical_id


def test_a_scheduled_job_invokes_its_function_in_the_group_with_retries_and_a_dlq() -> None:
    # Given the construct in a stack of its own, with one job (the stack passes the governance jobs the same way)
    stack = cdk.Stack(cdk.App(), "SchedulesOnly")
    function = lambda_.Function(
        stack,
        "Job",
        runtime=lambda_.Runtime.PYTHON_3_12,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context):\n    return event\n"),
    )
    schedules = Schedules(
        stack,
        "Schedules",
        jobs=[
            ScheduledJob(
                name="Nightly",
                function=function,
                schedule=scheduler.ScheduleExpression.cron(hour="3", minute="0"),
                description="a job",
                payload={"batch": 50},
            )
        ],
    )
    with pytest.raises(ValueError, match="already scheduled"):
        schedules.add_job(
            ScheduledJob("Nightly", function, scheduler.ScheduleExpression.rate(cdk.Duration.hours(1)), "again")
        )
    template = Template.from_stack(stack)
    # Then one schedule targets the function with the job's input, in the group, with a DLQ and bounded retries
    _, group = only(template, "AWS::Scheduler::ScheduleGroup")
    _, schedule = only(template, "AWS::Scheduler::Schedule")
    properties = schedule["Properties"]
    assert properties["ScheduleExpression"] == "cron(0 3 * * ? *)"
    assert properties["GroupName"] == group["Properties"]["Name"]
    target = properties["Target"]
    assert target["Arn"] == {"Fn::GetAtt": [stack.get_logical_id(function.node.default_child), "Arn"]}
    assert json.loads(target["Input"]) == {"job": "Nightly", "batch": 50}
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 2
    assert "DeadLetterConfig" in target
