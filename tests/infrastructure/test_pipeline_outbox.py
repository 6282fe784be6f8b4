"""A pipeline start that cannot be lost: the table's stream starts each recorded interaction's run; a start that
fails is parked in the dead-letter queue, and `rapport dlq replay` turns it into stored memories (moto)."""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from rapport.adapters.aws.step_functions import StepFunctionsPipeline
from rapport.cli import main
from rapport.composition.functions import pipeline_starter
from rapport.composition.services import services_from_environment
from rapport.domain.scope import Scope
from rapport.errors import UpstreamError
from rapport.services.interactions import NewInteraction
from tests.infrastructure.state_machine import PROJECT_ROOT
from tests.infrastructure.test_pipeline_state_machine import (  # noqa: F401 - the fixtures
    DEBUGGING,
    TENANT,
    USER,
    World,
    template,
    world,
)
from tests.integration.api_events import FakeLambdaContext

pytestmark = [pytest.mark.infrastructure, pytest.mark.filterwarnings("ignore:No application metrics to publish")]


def starter_handler() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "rapport_pipeline_starter_under_test", PROJECT_ROOT / "functions" / "pipeline_starter" / "handler.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stream_event(machine: World) -> dict[str, Any]:
    """What the table's stream hands the starter for its items, as Lambda delivers DynamoDB stream records."""
    records = [
        {
            "eventID": str(n),
            "eventName": "INSERT",
            "eventSource": "aws:dynamodb",
            "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-01-01T00:00:00.000",
            "dynamodb": {
                "Keys": {"pk": {"S": item["pk"]}, "sk": {"S": item["sk"]}},
                "SequenceNumber": str(100 + n),
                "StreamViewType": "NEW_AND_OLD_IMAGES",
            },
        }
        for n, item in enumerate(machine.items())
    ]
    return {"Records": records}


def peek(machine: World) -> list[dict[str, Any]]:
    response = machine.sqs.receive_message(QueueUrl=machine.queue_url, MaxNumberOfMessages=10, VisibilityTimeout=0)
    return [json.loads(m["Body"]) for m in response.get("Messages", [])]


@pytest.fixture
def outbox(world: World, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:  # noqa: F811 - the fixture
    # As the stack deploys it: the writers only record, the starter has the machine and its dead-letter queue
    monkeypatch.setenv("RAPPORT_PIPELINE", "stream")
    monkeypatch.setenv("RAPPORT_PIPELINE_DEAD_LETTER_QUEUE_URL", world.queue_url)
    services_from_environment.cache_clear()
    pipeline_starter.cache_clear()
    yield world
    pipeline_starter.cache_clear()


def wait_for_executions(machine: World) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        executions = machine.sfn.list_executions(stateMachineArn=machine.state_machine_arn)["executions"]
        if executions and all(e["status"] != "RUNNING" for e in executions):
            return list(executions)
        time.sleep(0.05)
    raise AssertionError("executions still running after 30 s")


def record(machine: World) -> str:
    recorded = services_from_environment().interactions.record(
        Scope(TENANT, USER), NewInteraction.model_validate(DEBUGGING)
    )
    # The writer answers at once: its write is the outbox
    assert recorded.pipeline is not None and recorded.pipeline.status == "started"
    assert recorded.pipeline.execution_id is None
    return recorded.interaction.id


def test_the_stream_starts_the_run_of_each_recorded_interaction(outbox: World) -> None:
    record(outbox)
    response = starter_handler().handler(stream_event(outbox), FakeLambdaContext())
    assert response == {"batchItemFailures": []}
    (execution,) = wait_for_executions(outbox)
    assert execution["status"] == "SUCCEEDED"
    assert any(item["type"] == "collaboration_outcome" for item in outbox.extracted())


def test_a_failed_start_is_parked_and_rapport_dlq_replay_stores_its_memories(
    outbox: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given StartExecution keeps failing (after the SDK's own retries) when the stream hands the interaction over
    interaction_id = record(outbox)
    start = StepFunctionsPipeline.start

    def refused(self: StepFunctionsPipeline, request: Any, *, wait: bool) -> Any:
        raise UpstreamError("could not start the ingestion pipeline: ThrottlingException")

    monkeypatch.setattr(StepFunctionsPipeline, "start", refused)
    response = starter_handler().handler(stream_event(outbox), FakeLambdaContext())
    # Then the record is not failed back to the stream (nothing to gain from retrying it there): it is parked,
    # in the one dead-letter format, and nothing ran
    assert response == {"batchItemFailures": []}
    (letter,) = peek(outbox)
    assert letter == {
        "request": {"tenant_id": TENANT, "user_id": USER, "interaction_id": interaction_id},
        "failure": {"Error": "UpstreamError", "Cause": "could not start the ingestion pipeline: ThrottlingException"},
        "execution_id": None,
    }
    assert outbox.extracted() == []

    # When Step Functions is back and an operator replays the queue
    monkeypatch.setattr(StepFunctionsPipeline, "start", start)
    capsys.readouterr()  # the starter's metrics line
    assert main(["dlq", "replay"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {"replayed": [interaction_id], "failed": {}}
    # Then the run went through: the memories are stored, and the letter is gone
    (execution,) = wait_for_executions(outbox)
    assert execution["status"] == "SUCCEEDED"
    assert any(item["type"] == "collaboration_outcome" for item in outbox.extracted())
    assert peek(outbox) == []
    # And replaying again is harmless: nothing is left to replay
    capsys.readouterr()  # the pipeline steps' metrics lines
    assert main(["dlq", "replay"]) == 0
    assert json.loads(capsys.readouterr().out) == {"replayed": [], "failed": {}}


def test_a_dead_letter_queue_that_refuses_the_letter_fails_the_record_back_to_the_stream(
    outbox: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    record(outbox)

    def refused(self: StepFunctionsPipeline, request: Any, *, wait: bool) -> Any:
        raise UpstreamError("could not start the ingestion pipeline: ServiceUnavailable")

    monkeypatch.setattr(StepFunctionsPipeline, "start", refused)
    outbox.sqs.delete_queue(QueueUrl=outbox.queue_url)
    event = stream_event(outbox)
    response = starter_handler().handler(event, FakeLambdaContext())
    # The interaction's record goes back to the stream, which delivers it again (then to its failure queue)
    interaction_records = [r for r in event["Records"] if r["dynamodb"]["Keys"]["sk"]["S"].startswith("INT#")]
    assert response["batchItemFailures"] == [
        {"itemIdentifier": r["dynamodb"]["SequenceNumber"]} for r in interaction_records
    ]
