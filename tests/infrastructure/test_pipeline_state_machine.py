"""The state machine the CDK app synthesizes, executed in moto with its Lambda tasks running the real handlers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
import pytest
from boto3.dynamodb.conditions import Key
from moto import mock_aws
from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
from pydantic import ValidationError

from rapport.adapters.dynamodb.store import create_table
from rapport.composition.services import Services, services_from_environment
from rapport.domain.models import Domain
from rapport.domain.scope import Scope
from rapport.errors import UpstreamError
from rapport.services.interactions import NewInteraction
from tests.environment_services import forget_services
from tests.infrastructure.conftest import Synthesized
from tests.infrastructure.state_machine import (
    REGION,
    LambdaRouter,
    StepFunction,
    function_arn,
    lambda_routed_to,
    load_handler,
    resolve,
    state_machine_of,
    step_functions,
)
from tests.integration.api_events import FakeLambdaContext

pytestmark = [pytest.mark.infrastructure, pytest.mark.filterwarnings("ignore:No application metrics to publish")]

TABLE = "rapport-pipeline-test"
TENANT, USER = "tenant-a", "dana"
DEBUGGING = {
    "messages": [
        {"role": "user", "content": "I'm getting a 500 on /users again. It's our main API at work."},
        {"role": "assistant", "content": "Let's add step-by-step logging around the request handlers."},
        {"role": "user", "content": "OK, the logs show the auth middleware throws before the handler runs."},
        {"role": "assistant", "content": "Then the auth layer is the root cause: check how the token is validated."},
        {"role": "user", "content": "It was the auth middleware, thanks — the step-by-step logging really helped"},
    ],
    "channel": "web",
}


@pytest.fixture(scope="module")
def template(default: Synthesized) -> dict[str, Any]:
    """The session's synthesized default stack (tests/infrastructure/conftest.py): one synth for every check."""
    return default.json


@dataclass
class World:
    sfn: Any
    sqs: Any
    table: Any
    state_machine_arn: str
    queue_url: str
    router: LambdaRouter
    retry_sleeps: list[float]

    @property
    def services(self) -> Services:
        # The same cached services the handlers use: one store, one index, as in one Lambda container.
        return services_from_environment()

    def record(self, conversation: dict[str, Any] = DEBUGGING) -> str:
        recorded = self.services.interactions.record(Scope(TENANT, USER), NewInteraction.model_validate(conversation))
        assert recorded.pipeline is not None and recorded.pipeline.status == "started"
        assert recorded.pipeline.execution_id is not None
        return self.finish(recorded.pipeline.execution_id)

    def start(self, payload: dict[str, Any]) -> str:
        arn = self.sfn.start_execution(stateMachineArn=self.state_machine_arn, input=json.dumps(payload))
        return self.finish(arn["executionArn"])

    def finish(self, execution_arn: str) -> str:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            status = self.sfn.describe_execution(executionArn=execution_arn)["status"]
            if status != "RUNNING":
                return str(status)
            time.sleep(0.02)
        raise AssertionError(f"execution {execution_arn} still running after 30 s")

    def items(self, prefix: str = "") -> list[dict[str, Any]]:
        condition = Key("pk").eq(f"TENANT#{TENANT}#USER#{USER}")
        if prefix:
            condition = condition & Key("sk").begins_with(prefix)
        response = self.table.query(KeyConditionExpression=condition)
        return list(response["Items"])

    def extracted(self) -> list[dict[str, Any]]:
        return [item for item in self.items("MEM#") if item["type"] != "episode"]

    def dead_letters(self) -> list[dict[str, Any]]:
        response = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=0)
        return [json.loads(message["Body"]) for message in response.get("Messages", [])]


@pytest.fixture
def world(template: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[World]:
    for name, value in {
        "RAPPORT_STORE": "dynamodb",
        "RAPPORT_TABLE_NAME": TABLE,
        "AWS_REGION": REGION,
        "RAPPORT_VECTOR_BACKEND": "embedded",
        "RAPPORT_EMBEDDER": "hashing",
        "RAPPORT_LLM": "rules",
        "RAPPORT_DATA_DIR": str(tmp_path / "data"),
        "POWERTOOLS_TRACE_DISABLED": "1",
    }.items():
        monkeypatch.setenv(name, value)
    # Step Functions waits between retries; the test records the waits instead of sleeping through them.
    retry_sleeps: list[float] = []
    monkeypatch.setattr(retrier_decl, "time", SimpleNamespace(sleep=retry_sleeps.append))
    services_from_environment.cache_clear()
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}):
        table = create_table(boto3.resource("dynamodb", region_name=REGION), TABLE)
        sqs = boto3.client("sqs", region_name=REGION)
        sfn = boto3.client("stepfunctions", region_name=REGION)
        state_machine_id, state_machine = state_machine_of(template)
        queue_id = next(
            logical_id
            for logical_id, resource in template["Resources"].items()
            if resource["Type"] == "AWS::SQS::Queue" and logical_id.startswith("PipelineDeadLetterQueue")
        )
        queue_url = sqs.create_queue(QueueName="rapport-pipeline-dead-letters")["QueueUrl"]
        functions = step_functions(template)
        definition = resolve(
            state_machine["Properties"]["DefinitionString"],
            refs={queue_id: queue_url},
            arns={logical_id: function_arn(logical_id) for logical_id in functions},
        )
        assert state_machine["Properties"]["StateMachineType"] == "EXPRESS"
        created = sfn.create_state_machine(
            name=state_machine_id,
            definition=definition,
            roleArn="arn:aws:iam::123456789012:role/rapport-pipeline",
            type="EXPRESS",
        )
        monkeypatch.setenv("RAPPORT_PIPELINE", "step_functions")
        monkeypatch.setenv("RAPPORT_PIPELINE_STATE_MACHINE_ARN", created["stateMachineArn"])
        with lambda_routed_to(LambdaRouter(functions), monkeypatch) as router:
            yield World(sfn, sqs, table, created["stateMachineArn"], queue_url, router, retry_sleeps)
        forget_services()


def test_a_conversation_runs_through_the_synthesized_state_machine_into_the_table(world: World) -> None:
    # Given the API records the debugging conversation, which starts an execution named after it
    status = world.record()

    # Then every step ran once, the extractions side by side, and the execution succeeded
    assert status == "SUCCEEDED"
    assert sorted(world.router.invocations) == sorted(
        ["record", "extract_user", "extract_relational", "filter", "store"]
    )
    (interaction,) = world.items("INT#")
    extracted = {item["content"]: item for item in world.extracted()}
    assert "User is debugging an API at work" in extracted
    outcome = next(c for c, item in extracted.items() if item["type"] == "collaboration_outcome")
    assert "500 on /users" in outcome and "auth" in outcome and "root cause" in outcome
    approach = next(c for c, item in extracted.items() if item["type"] == "approach_effectiveness")
    assert "logging worked well with this user" in approach.lower()
    # And each memory is linked to the interaction it came from, as a field of its adjacency item in the user's
    # partition
    adjacency = {item["sk"]: item for item in world.items("EDGES#")}
    for item in extracted.values():
        assert f"f:out|DERIVED_FROM|{interaction['id']}" in adjacency[f"EDGES#{item['id']}"]
        assert item["source"]["interaction_id"] == interaction["id"]
    # And the relational memories are associated with the user memory of the same conversation
    user_ids = {item["id"] for item in extracted.values() if item["domain"] == Domain.USER.value}
    for item in extracted.values():
        if item["domain"] == Domain.RELATIONAL.value:
            assert user_ids <= set(item["associations"])
    # And every filter decision is kept, and the run is marked complete
    assert len(world.items("FILTER#")) >= len(extracted)
    (run,) = world.items("PIPELINE#")
    assert json.loads(run["body"])["status"] == "completed"


def test_a_repeated_execution_stores_nothing_twice(world: World) -> None:
    # Given a conversation the pipeline has stored
    assert world.record() == "SUCCEEDED"
    before = sorted(item["sk"] for item in world.items())
    interaction_id = world.items("INT#")[0]["id"]
    # When Express's at-least-once delivery runs it again (or an operator redrives it)
    assert world.start({"tenant_id": TENANT, "user_id": USER, "interaction_id": interaction_id}) == "SUCCEEDED"
    # Then the table holds exactly the same items
    assert sorted(item["sk"] for item in world.items()) == before


def test_a_throttled_extraction_is_retried_with_jittered_backoff(world: World) -> None:
    # Given the relational extraction is throttled once (the model still answering 429 after the function's retries)
    throttled: list[str] = []

    def throttle_once(event: dict[str, Any]) -> None:
        if not throttled:
            throttled.append(event["interaction_id"])
            raise UpstreamError("OpenAI chat failed after 3 attempts: HTTP 429")

    world.router.faults["extract_relational"] = throttle_once
    # When the conversation runs
    status = world.record()
    # Then Step Functions retried that task alone, after a wait within its jittered interval, and succeeded
    assert status == "SUCCEEDED"
    assert world.router.count("extract_relational") == 2
    assert world.router.count("extract_user") == 1
    assert len(world.retry_sleeps) == 1 and 0 <= world.retry_sleeps[0] <= 2
    relational = [item["content"] for item in world.extracted() if item["domain"] == "relational"]
    assert relational and len(relational) == len(set(relational))


def test_a_permanent_failure_lands_in_the_dead_letter_queue_with_nothing_lost(world: World) -> None:
    # Given the embeddings the store step needs stay down
    def embeddings_down(event: dict[str, Any]) -> None:
        raise UpstreamError("OpenAI embeddings failed after 3 attempts: HTTP 503")

    world.router.faults["store"] = embeddings_down
    # When the conversation runs
    status = world.record()
    # Then the store step was retried once, the execution failed, and its input is parked in the dead-letter queue
    assert status == "FAILED"
    (parked,) = world.dead_letters()
    assert world.router.count("store") == 2, (world.router.invocations, parked["failure"])
    (interaction,) = world.items("INT#")
    assert parked["request"] == {"tenant_id": TENANT, "user_id": USER, "interaction_id": interaction["id"]}
    assert parked["failure"]["Error"] == "UpstreamError"
    assert "embeddings" in parked["failure"]["Cause"]
    # And nothing was half-written: the conversation is in the history, no extracted memory is stored yet
    assert world.extracted() == []
    assert json.loads(world.items("PIPELINE#")[0]["body"])["status"] == "running"

    # When the fault is fixed and the parked request redriven
    del world.router.faults["store"]
    assert world.start(parked["request"]) == "SUCCEEDED"
    # Then the memories are there, as if nothing had happened
    assert any(item["type"] == "collaboration_outcome" for item in world.extracted())


def test_an_error_that_cannot_clear_is_not_retried(world: World) -> None:
    # Given a request for an interaction that does not exist (a bad redrive, say)
    status = world.start({"tenant_id": TENANT, "user_id": USER, "interaction_id": "01J0000000000000000000NONE"})
    # Then the record step ran once (no retry can make it exist) and the request went to the dead-letter queue
    assert status == "FAILED"
    assert world.router.invocations == ["record"]
    (parked,) = world.dead_letters()
    assert parked["failure"]["Error"] == "NotFoundError"


def test_importing_the_handler_wires_nothing_and_a_malformed_state_is_refused_before_any_wiring() -> None:
    services_from_environment.cache_clear()
    handler = load_handler(StepFunction(step="record", service="rapport-pipeline-record", entry_point="record"))
    assert services_from_environment.cache_info().currsize == 0
    # A redrive that lost the interaction id fails at once (no retry can mend it), and builds no client
    with pytest.raises(ValidationError):
        handler.record({"tenant_id": TENANT, "user_id": USER}, FakeLambdaContext())
    assert services_from_environment.cache_info().currsize == 0


# --- the synthesized definition itself ------------------------------------------------------------------------------


def _definition_naming_functions(template: dict[str, Any]) -> dict[str, Any]:
    """The definition with each task's Resource replaced by its function's logical id."""
    _, machine = state_machine_of(template)
    ids = {logical_id: logical_id for logical_id in step_functions(template)}
    queues = {k: k for k, v in template["Resources"].items() if v["Type"] == "AWS::SQS::Queue"}
    return dict(json.loads(resolve(machine["Properties"]["DefinitionString"], refs=queues, arns=ids)))


def test_the_worst_case_run_fits_in_one_express_execution(template: dict[str, Any]) -> None:
    # An execution timeout cannot be caught, so it would skip the dead-letter queue: retries must fit in 5 minutes.
    definition = _definition_naming_functions(template)
    timeouts = {
        k: v["Properties"]["Timeout"] for k, v in template["Resources"].items() if k in step_functions(template)
    }

    def worst(state: dict[str, Any]) -> float:
        if state["Type"] == "Parallel":
            return max(sum(worst(s) for s in branch["States"].values()) for branch in state["Branches"])
        if state["Type"] != "Task" or state["Resource"] not in timeouts:
            return 0.0
        # Retries of errors raised after the function ran its course (Lambda's own errors fail fast).
        upstream = [r for r in state.get("Retry", []) if not all(e.startswith("Lambda.") for e in r["ErrorEquals"])]
        retries = sum(r["MaxAttempts"] for r in upstream)
        waits = sum(r["MaxAttempts"] * r.get("MaxDelaySeconds", 60) for r in upstream)
        return (1 + retries) * timeouts[state["Resource"]] + waits

    total = sum(worst(state) for state in definition["States"].values())
    assert 0 < total < 300
    assert definition.get("TimeoutSeconds") == 300


def test_the_five_steps_are_one_asset_with_five_entry_points_and_service_names(template: dict[str, Any]) -> None:
    functions = step_functions(template)
    codes = {
        json.dumps(template["Resources"][logical_id]["Properties"]["Code"], sort_keys=True) for logical_id in functions
    }
    assert len(codes) == 1
    assert sorted((f.step, f.entry_point) for f in functions.values()) == [
        ("extract_relational", "extract_relational"),
        ("extract_user", "extract_user"),
        ("filter", "constructive_filter"),
        ("record", "record"),
        ("store", "store"),
    ]
    assert len({f.service for f in functions.values()}) == 5


def test_the_state_machine_is_traced_and_logs_no_execution_data(template: dict[str, Any]) -> None:
    _, machine = state_machine_of(template)
    properties = machine["Properties"]
    assert properties["TracingConfiguration"] == {"Enabled": True}
    logging = properties["LoggingConfiguration"]
    assert logging["Level"] == "ALL" and logging["IncludeExecutionData"] is False


def test_the_writers_only_record_and_the_tables_stream_starts_the_pipeline(template: dict[str, Any]) -> None:
    machine_id, _ = state_machine_of(template)
    functions = {
        r["Properties"]["Environment"]["Variables"].get("POWERTOOLS_SERVICE_NAME"): (k, r)
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function"
    }

    def statements(function: dict[str, Any]) -> list[dict[str, Any]]:
        role = function["Properties"]["Role"]["Fn::GetAtt"][0]
        return [
            s
            for r in template["Resources"].values()
            if r["Type"] == "AWS::IAM::Policy" and {"Ref": role} in r["Properties"]["Roles"]
            for s in r["Properties"]["PolicyDocument"]["Statement"]
        ]

    start = {"Action": "states:StartExecution", "Effect": "Allow", "Resource": {"Ref": machine_id}}
    # The API and the ingest consumer write the interaction, which is the outbox; they start nothing themselves
    for writer in ("rapport-api", "rapport-ingest"):
        _, function = functions[writer]
        assert function["Properties"]["Environment"]["Variables"]["RAPPORT_PIPELINE"] == "stream"
        assert start not in statements(function)
    # The starter reads the table's stream (new history items only) and may start the machine and park a failure
    starter_id, starter = functions["rapport-starter"]
    variables = starter["Properties"]["Environment"]["Variables"]
    assert variables["RAPPORT_PIPELINE_STATE_MACHINE_ARN"] == {"Ref": machine_id}
    assert start in statements(starter)
    assert any(
        "sqs:SendMessage" in s["Action"] and "PipelineDeadLetterQueue" in json.dumps(s["Resource"])
        for s in statements(starter)
    )
    (mapping,) = [
        r["Properties"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping" and r["Properties"]["FunctionName"] == {"Ref": starter_id}
    ]
    (pattern,) = [json.loads(f["Pattern"]) for f in mapping["FilterCriteria"]["Filters"]]
    assert pattern == {"eventName": ["INSERT"], "dynamodb": {"Keys": {"sk": {"S": [{"prefix": "INT#"}]}}}}
    assert mapping["BisectBatchOnFunctionError"] is True
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert "OnFailure" in mapping["DestinationConfig"]


def test_every_openai_call_ends_before_its_function_does(template: dict[str, Any]) -> None:
    # A function that holds the OpenAI key gets its client's timeout, retries and longest wait from settings.py
    # (openai_budget_within); one call's worst case, throttling waits counted, must end before the function's timeout
    from rapport.settings import OPENAI_HEADROOM_SECONDS, OpenAiBudget

    checked = 0
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::Lambda::Function":
            continue
        variables = resource["Properties"]["Environment"]["Variables"]
        if "RAPPORT_OPENAI_API_KEY_SECRET_ARN" not in variables:
            continue
        budget = OpenAiBudget.of(variables)
        assert budget.worst_case_seconds() + OPENAI_HEADROOM_SECONDS <= resource["Properties"]["Timeout"], variables
        checked += 1
    assert checked >= 8  # the API, ingest, enrichment, the five steps (and any other caller)


def test_the_dead_letter_queue_keeps_failures_for_two_weeks_encrypted(template: dict[str, Any]) -> None:
    (queue,) = [
        v
        for k, v in template["Resources"].items()
        if v["Type"] == "AWS::SQS::Queue" and k.startswith("PipelineDeadLetter")
    ]
    assert queue["Properties"]["MessageRetentionPeriod"] == 14 * 24 * 3600
    assert queue["Properties"]["SqsManagedSseEnabled"] is True


def test_docs_show_the_state_machine_the_stack_synthesizes(template: dict[str, Any]) -> None:
    from infra.state_machine_diagram import definition_from_template, mermaid

    diagram = mermaid(definition_from_template(template))
    doc = (Path(__file__).resolve().parents[2] / "docs" / "pipeline.md").read_text()
    assert f"```mermaid\n{diagram}\n```" in doc, "regenerate it: python -m infra.state_machine_diagram"
