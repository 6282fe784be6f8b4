"""What the governance jobs write to DynamoDB (moto, every write measured in requests and write units): a day on
which no memory crosses a threshold writes nothing, a crossing writes the memory's small item once, and a month of
every job costs less than the write path of the interactions it governs (docs/governance.md)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from bench.cost_model import PRICE, governance_line, governance_markdown
from rapport.adapters.dynamodb import keys
from rapport.adapters.dynamodb.store import DynamoDbMemoryStore, create_table
from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, DomainFilter, MemoryStatus
from rapport.domain.scope import Scope
from rapport.evaluation.governance_writes import GovernanceWrites, measure_governance_writes, table_indexes
from rapport.evaluation.write_units import WriteMeter
from rapport.jobs.lease import LEASE_KIND
from rapport.jobs.report import JobName
from tests.integration.governance_support import T, U, governance_settings, put

pytestmark = pytest.mark.integration

TABLE = "rapport-governance-writes"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)
MEMORIES = 12
CROSSING_DAYS = math.log(1.0 / 0.3) / 0.1  # 12.04: a user memory at full strength falls below compression's 0.3


@pytest.fixture
def metered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Services, WriteMeter, FixedClock]]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        resource = boto3.resource("dynamodb", region_name="us-east-1")
        create_table(resource, TABLE)
        meter = WriteMeter(
            resource.meta.client,
            boto3.client("dynamodb", region_name="us-east-1"),
            TABLE,
            table_keys=(keys.PARTITION_KEY, keys.SORT_KEY),
            indexes=table_indexes(),
        )
        clock = FixedClock(T0)
        store = DynamoDbMemoryStore(TABLE, dynamodb_resource=resource)
        # 1,536 dimensions, as OpenAI's: the vector is 6 KB of a memory's 7
        services = build_services(
            governance_settings(tmp_path).model_copy(update={"hashing_dimensions": 1536}),
            clock=clock,
            store=store,
            index=EmbeddedVectorIndex(tmp_path / "vectors.sqlite3", 1536),
            embedder=HashingEmbedder(1536),
        )
        yield services, meter, clock


def memories(services: Services) -> list[Any]:
    return [put(services, f"fact number {n} about the user", at=T0) for n in range(MEMORIES)]


def test_a_day_without_a_threshold_crossing_writes_nothing_and_a_crossing_writes_once(
    metered: tuple[Services, WriteMeter, FixedClock],
) -> None:
    services, meter, clock = metered
    stored = memories(services)
    meter.tally.reset()

    # Daily runs up to the day before the crossing: every memory read, not one write (not even the lease)
    for day in range(1, math.floor(CROSSING_DAYS) + 1):
        clock.set(T0 + day * DAY)
        report = services.governance.run(JobName.DECAY, Scope(T, U), T0 + day * DAY)
        assert report.examined == MEMORIES and report.decayed == 0
    assert meter.tally.request_count == 0 and meter.tally.units == 0

    # The day of the crossing: each memory's own item once, by UpdateItem; its 6 KB vector is not rewritten
    crossing_day = T0 + math.ceil(CROSSING_DAYS) * DAY
    clock.set(crossing_day)
    assert services.governance.run(JobName.DECAY, Scope(T, U), crossing_day).decayed == MEMORIES
    assert meter.tally.requests["UpdateItem"] == MEMORIES + 1  # and the lease's (an item store write)
    assert "EMB" not in meter.tally.by_kind
    assert meter.tally.by_kind["MEM"] == MEMORIES  # one unit each: the memory item without its vector is under 1 KB
    # The lease (put and delete) is the run's only other write, and each GSI entry is one unit
    assert meter.tally.by_kind[LEASE_KIND] == 2
    assert meter.tally.index_units == 2 * MEMORIES

    # And never again while the memories fade on
    meter.tally.reset()
    for day in range(math.ceil(CROSSING_DAYS) + 1, 31):
        services.governance.run(JobName.DECAY, Scope(T, U), T0 + day * DAY)
    assert meter.tally.request_count == 0
    # while every reader still sees each strength decayed to its own now
    clock.set(T0 + 30 * DAY)
    assert services.memories.get(Scope(T, U), stored[0].id).strength == pytest.approx(math.exp(-3.0))


def test_a_change_of_status_writes_the_memory_item_not_its_vector(
    metered: tuple[Services, WriteMeter, FixedClock],
) -> None:
    services, meter, _ = metered
    by_id = {m.id: m for m in memories(services)}
    creation = meter.tally.by_kind["EMB"]
    assert creation == MEMORIES * 7  # a 1,536-dimension vector is 6 KB and a little: 7 units, once
    meter.tally.reset()

    listed = services.memories.list_memories(
        Scope(T, U), domain=DomainFilter.BOTH, memory_type=None, limit=1, cursor=None
    ).items[0]
    services.memories.set_status(listed, MemoryStatus.ARCHIVED, T0 + DAY)

    assert dict(meter.tally.requests) == {"UpdateItem": 1}
    assert dict(meter.tally.by_kind) == {"MEM": 1}
    kept = services.store.get_memory(Scope(T, U), listed.id)
    assert kept.status is MemoryStatus.ARCHIVED
    assert kept.embedding == pytest.approx(by_id[listed.id].embedding, rel=1e-6)


def test_a_month_of_governance_writes_less_than_the_interactions_it_governs(tmp_path: Path) -> None:
    measured = measure_governance_writes(tmp_path, interactions=4, days=14)

    jobs = measured.jobs_total
    assert measured.memories > measured.interactions  # episodes and extracted memories
    # decay writes each memory at most once in a fortnight (at its crossing), and never a vector
    assert measured.jobs["decay"].by_kind.get("MEM", 0) <= measured.memories
    assert "EMB" not in measured.jobs["decay"].by_kind and "EMB" not in measured.jobs["retention"].by_kind
    assert jobs.units < measured.write_path.units
    assert GovernanceWrites.from_dict(measured.as_dict()) == measured  # as the bench keeps it, in JSON
    # and the cost model prices the jobs' units per interaction, beside the write path's in its page
    line = governance_line(measured)
    assert line.interactions == pytest.approx(1e6 * jobs.units / measured.interactions * PRICE["ddb_write_unit"])
    assert "| **governance, all jobs** |" in governance_markdown(measured)


def test_the_meter_bills_by_the_item_and_its_indexes(metered: tuple[Services, WriteMeter, FixedClock]) -> None:
    services, meter, _ = metered
    put(services, "Has a dog named Max", at=T0, domain=Domain.RELATIONAL, memory_type="working_style")
    # one BatchWriteItem of the memory (1 unit) and its vector (7), and an entry in each memory index (1 + 1); the
    # registration of the user and its tenant are writes of their own
    assert meter.tally.requests["BatchWriteItem"] == 1
    assert (meter.tally.by_kind["MEM"], meter.tally.by_kind["EMB"]) == (1, 7)
    assert meter.tally.index_units == 2
