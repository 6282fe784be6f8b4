"""The jobs' fan-out under moto: the scheduled producer, SQS, and the worker handler, over fifty end users, with one
user that fails once (retried alone) and one that always fails (parked in the dead-letter queue)."""

from __future__ import annotations

import importlib.util
import json
import math
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rapport.adapters.aws.sqs import SqsWorkQueue
from rapport.adapters.dynamodb.store import DynamoDbMemoryStore, create_table
from rapport.composition.functions import jobs_fan_out, jobs_work_queue
from rapport.composition.services import services_from_environment
from rapport.domain.models import Domain, Memory
from rapport.domain.scope import Scope
from rapport.errors import StorageError
from rapport.ids import new_id
from rapport.jobs.fanout import WorkItem, WorkKind
from rapport.jobs.governance import GovernanceJobs
from tests.environment_services import forget_services
from tests.integration.api_events import FakeLambdaContext

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore:No application metrics to publish")]

FUNCTIONS_DIR = Path(__file__).resolve().parents[2] / "functions"
TABLE = "rapport-jobs"
T0 = datetime(2026, 1, 5, 0, 0, tzinfo=UTC)
USERS = [f"user-{n:02d}" for n in range(50)]
FLAKY, POISONED = "user-13", "user-27"


def load_handler(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"rapport_jobs_{name}_under_test", FUNCTIONS_DIR / "jobs" / name / "handler.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[dict[str, str]]:
    with mock_aws():
        sqs = boto3.client("sqs", region_name="us-east-1")
        dlq = sqs.create_queue(QueueName="jobs-dlq")["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        queue = sqs.create_queue(
            QueueName="jobs",
            Attributes={
                "VisibilityTimeout": "0",  # a failed message is visible again at once: the test need not wait
                "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "3"}),
            },
        )["QueueUrl"]
        create_table(boto3.resource("dynamodb", region_name="us-east-1"), TABLE)
        for name, value in {
            "RAPPORT_STORE": "dynamodb",
            "RAPPORT_TABLE_NAME": TABLE,
            "AWS_REGION": "us-east-1",
            "RAPPORT_VECTOR_BACKEND": "embedded",
            "RAPPORT_EMBEDDER": "hashing",
            "RAPPORT_PIPELINE": "off",
            "RAPPORT_DATA_DIR": str(tmp_path / "data"),
            "RAPPORT_GOVERNANCE_JOB_QUEUE_URL": queue,
            "RAPPORT_GOVERNANCE_FANOUT_PAGE_SIZE": "8",
            "POWERTOOLS_TRACE_DISABLED": "1",
        }.items():
            monkeypatch.setenv(name, value)
        services_from_environment.cache_clear()
        jobs_fan_out.cache_clear()
        jobs_work_queue.cache_clear()
        yield {"queue": queue, "dlq": dlq}
        forget_services()
        jobs_fan_out.cache_clear()
        jobs_work_queue.cache_clear()


def seed(users: list[str]) -> DynamoDbMemoryStore:
    store = DynamoDbMemoryStore(TABLE, dynamodb_resource=boto3.resource("dynamodb", region_name="us-east-1"))
    for tenant in ("tenant-a", "tenant-b"):
        for user in users:
            store.register_user(Scope(tenant, user))
            store.put_memory(
                Memory(
                    id=new_id(T0),
                    tenant_id=tenant,
                    user_id=user,
                    domain=Domain.USER,
                    type="fact",
                    content=f"{user} has a dog",
                    created_at=T0,
                    updated_at=T0,
                    last_reinforced_at=T0,
                )
            )
    return store


def sqs_event(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:jobs",
                "awsRegion": "us-east-1",
            }
            for m in messages
        ]
    }


def drain(worker: ModuleType, queue: str) -> list[int]:
    """What Lambda's SQS event source does: batches of up to ten, successes deleted, reported failures left to
    come back (and, past maxReceiveCount, go to the dead-letter queue). Returns the size of each enqueue."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    for _ in range(500):
        received = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
        if not received:
            return []
        response = worker.handler(sqs_event(received), FakeLambdaContext())
        failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
        for message in received:
            if message["MessageId"] not in failed:
                sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
    raise AssertionError("the queue never drained")


def test_fifty_users_fan_out_and_one_failing_user_is_retried_alone(
    aws: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = seed(USERS)
    runs: Counter[tuple[str, str]] = Counter()
    flaky_failures = {"left": 1}
    real_run = GovernanceJobs.run

    def counted_run(self: GovernanceJobs, job: Any, scope: Scope, as_of: datetime, **kw: Any) -> Any:
        runs[(scope.tenant_id, scope.user_id)] += 1
        if scope == Scope("tenant-a", POISONED):
            raise StorageError("this user's data cannot be read")
        if scope == Scope("tenant-a", FLAKY) and flaky_failures["left"]:
            flaky_failures["left"] -= 1
            raise StorageError("throttled, once")
        return real_run(self, job, scope, as_of, **kw)

    monkeypatch.setattr(GovernanceJobs, "run", counted_run)
    sent: list[int] = []
    real_send = SqsWorkQueue.send

    def counted_send(self: Any, bodies: list[str]) -> None:
        sent.append(len(bodies))
        real_send(self, bodies)

    monkeypatch.setattr(SqsWorkQueue, "send", counted_send)
    producer, worker = load_handler("producer"), load_handler("worker")
    as_of = T0 + timedelta(days=13)  # past ln(1 / 0.3) / 0.1 = 12.04 days: each user's memory crosses compression's 0.3

    # When the schedule fires the decay job
    started = producer.handler({"job": "decay", "now": as_of.isoformat()}, FakeLambdaContext())

    # Then the producer enqueued one message, whatever the number of users
    assert started["kind"] == WorkKind.TENANTS and sent == [1]
    drain(worker, aws["queue"])

    # every user of both tenants ran exactly once, but the flaky one (twice) and the poisoned one (until parked)
    expected = {(t, u): 1 for t in ("tenant-a", "tenant-b") for u in USERS}
    expected[("tenant-a", FLAKY)] = 2
    expected[("tenant-a", POISONED)] = 3
    assert dict(runs) == expected
    # no step of the walk enqueued more than a page of users (8) and its next page: work per invocation is bounded
    assert max(sent) <= 9
    sqs = boto3.client("sqs", region_name="us-east-1")
    [parked] = sqs.receive_message(QueueUrl=aws["dlq"], MaxNumberOfMessages=10)["Messages"]
    assert WorkItem.model_validate_json(parked["Body"]).user_id == POISONED
    # the job did its work for every other user, as of the run's time
    for tenant in ("tenant-a", "tenant-b"):
        for user in USERS:
            [memory] = store.list_memories(Scope(tenant, user), domains=(Domain.USER,), limit=5).items
            expected_strength = 1.0 if (tenant, user) == ("tenant-a", POISONED) else math.exp(-1.3)
            assert memory.strength == pytest.approx(expected_strength)
    # and reported it: metrics per job and a summary line
    output = capsys.readouterr().out
    emitted: Counter[str] = Counter()
    for line in output.splitlines():
        if line.startswith('{"_aws"'):
            record = json.loads(line)
            assert record["job"] == "decay"
            for name in ("UsersProcessed", "MemoriesDecayed"):
                emitted[name] += int(sum(record.get(name, [])))
    assert emitted == {"UsersProcessed": 99, "MemoriesDecayed": 99}  # 2 tenants x 50 users, less the poisoned one
    assert "governance batch finished" in output


def test_a_run_of_one_tenant_walks_only_its_users(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    seed(USERS[:3])
    ran: list[tuple[str, str]] = []
    real_run = GovernanceJobs.run

    def recorded_run(self: GovernanceJobs, job: Any, scope: Scope, *args: Any, **kw: Any) -> Any:
        ran.append((scope.tenant_id, scope.user_id))
        return real_run(self, job, scope, *args, **kw)

    monkeypatch.setattr(GovernanceJobs, "run", recorded_run)
    producer, worker = load_handler("producer"), load_handler("worker")

    started = producer.handler({"job": "retention", "tenant_id": "tenant-b"}, FakeLambdaContext())
    drain(worker, aws["queue"])

    assert started["kind"] == WorkKind.USERS and started["tenant_id"] == "tenant-b"
    assert sorted(ran) == [("tenant-b", user) for user in USERS[:3]]


def test_a_schedule_naming_an_unknown_job_is_refused() -> None:
    producer = load_handler("producer")
    with pytest.raises(Exception, match="job"):
        producer.handler({"job": "defragment"}, FakeLambdaContext())
