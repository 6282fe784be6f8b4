"""What the governance jobs write to DynamoDB in a month, beside what the write path writes, per interaction.

A synthetic end user records `interactions` conversations on day 0 (the local pipeline extracts their memories,
1,536-dimension vectors as OpenAI's), then the four scheduled jobs run for `days` days on their schedule (retention
01:00, decay 02:00, compress 03:00, consolidate Sundays 04:00) with a fixed clock. Every DynamoDB write is measured
by `write_units.WriteMeter` under moto; nothing leaves the process. Used by `make bench` (bench/cost_model.py) and
held by tests/integration/test_governance_write_counts.py.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rapport.evaluation.write_units import IndexShape, WriteMeter, WriteTally

DIMENSIONS = 1536  # OpenAI text-embedding-3-small: the vector is 6 KB of every memory's 7
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday: the weekly consolidation runs on days 6, 13, 20, 27
_SCHEDULE = (("retention", 1), ("decay", 2), ("compress", 3))  # job, hour (UTC); docs/governance.md
_CONSOLIDATE_HOUR = 4
_SUNDAY = 6

_FACTS = (
    "I moved to Lisbon last month and I love the tram number {n}.",
    "My sister Ana is getting married in June, I am the best man at wedding {n}.",
    "I prefer short answers with bullet points, thanks for attempt {n}.",
    "I work as a nurse at the city hospital on night shift {n}.",
    "My goal is to run a half marathon this autumn, race {n}.",
    "I have a dog named Max who loves the beach walk {n}.",
)
_REPLY = "That sounds lovely! Tell me more about it."


@dataclass(frozen=True)
class Writes:
    """Writes (requests, items) and write units (table, indexes), with the table's units by item kind."""

    requests: int
    items: int
    table_units: int
    index_units: int
    by_kind: dict[str, int]

    @property
    def units(self) -> int:
        return self.table_units + self.index_units

    @classmethod
    def of(cls, tally: WriteTally) -> Writes:
        return cls(tally.request_count, tally.items, tally.table_units, tally.index_units, dict(tally.by_kind))

    def per(self, n: int) -> dict[str, float]:
        return {"requests": self.requests / n, "items": self.items / n, "units": self.units / n}


@dataclass(frozen=True)
class GovernanceWrites:
    interactions: int
    memories: int  # what those interactions stored: episodes and extracted memories
    days: int
    write_path: Writes  # recording the interactions (pipeline and enrichment included)
    jobs: dict[str, Writes]  # each job over the whole period

    @property
    def jobs_total(self) -> Writes:
        parts = list(self.jobs.values())
        kinds: dict[str, int] = {}
        for part in parts:
            for kind, units in part.by_kind.items():
                kinds[kind] = kinds.get(kind, 0) + units
        return Writes(
            sum(p.requests for p in parts),
            sum(p.items for p in parts),
            sum(p.table_units for p in parts),
            sum(p.index_units for p in parts),
            kinds,
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GovernanceWrites:
        """Back from `as_dict` (the bench keeps its measurements as JSON)."""
        return cls(
            interactions=data["interactions"],
            memories=data["memories"],
            days=data["days"],
            write_path=Writes(**data["write_path"]),
            jobs={job: Writes(**writes) for job, writes in data["jobs"].items()},
        )


def table_indexes() -> tuple[IndexShape, ...]:
    """The table's GSIs as the store declares them (the CDK table imports the same names)."""
    from rapport.adapters.dynamodb import keys

    return tuple(
        IndexShape(partition, sort, keys.MEMORY_INDEX_ATTRIBUTES if name in keys.PROJECTED_INDEXES else None)
        for name, (partition, sort) in keys.GSI_KEYS.items()
    )


def measure_governance_writes(data_dir: Path, *, interactions: int = 30, days: int = 30) -> GovernanceWrites:
    """Runs the simulation described above; needs moto (a dev dependency)."""
    import boto3
    from moto import mock_aws

    from rapport.adapters.dynamodb import keys
    from rapport.adapters.dynamodb.store import DynamoDbMemoryStore, create_table
    from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
    from rapport.adapters.local.hashing_embedder import HashingEmbedder
    from rapport.clock import FixedClock
    from rapport.composition.services import build_services
    from rapport.domain.models import Message, MessageRole
    from rapport.domain.scope import Scope
    from rapport.jobs.report import JobName
    from rapport.services.interactions import NewInteraction
    from rapport.settings import (
        EmbedderKind,
        EnrichmentMode,
        GraphSettings,
        LlmKind,
        PipelineMode,
        Settings,
        StoreBackend,
    )

    data_dir.mkdir(parents=True, exist_ok=True)
    scope = Scope("tenant-governance", "user-governance")
    clock = FixedClock(START)
    with mock_aws():
        resource = boto3.resource("dynamodb", region_name="us-east-1")
        create_table(resource, "rapport-governance")
        meter = WriteMeter(
            resource.meta.client,
            boto3.client("dynamodb", region_name="us-east-1"),
            "rapport-governance",
            table_keys=(keys.PARTITION_KEY, keys.SORT_KEY),
            indexes=table_indexes(),
        )
        settings = Settings(
            data_dir=data_dir,
            store=StoreBackend.DYNAMODB,
            table_name="rapport-governance",
            embedder=EmbedderKind.HASHING,
            hashing_dimensions=DIMENSIONS,
            llm=LlmKind.RULES,
            pipeline=PipelineMode.LOCAL,
            # Inline, so the write path's count holds enrichment's writes and none lands in a job's window
            graph=GraphSettings(enrichment=EnrichmentMode.INLINE),
        )
        services = build_services(
            settings,
            clock=clock,
            store=DynamoDbMemoryStore("rapport-governance", dynamodb_resource=resource),
            index=EmbeddedVectorIndex(data_dir / "governance-vectors.sqlite3", DIMENSIONS),
            embedder=HashingEmbedder(DIMENSIONS),
        )
        for n in range(interactions):
            clock.set(START + timedelta(minutes=5 * n))
            services.interactions.record(
                scope,
                NewInteraction(
                    messages=[
                        Message(role=MessageRole.USER, content=_FACTS[n % len(_FACTS)].format(n=n)),
                        Message(role=MessageRole.ASSISTANT, content=_REPLY),
                    ],
                    session_id=f"session-{n}",
                ),
            )
        write_path = Writes.of(meter.tally)
        memories = services.store.count_memories(scope)
        per_job = {name: WriteTally() for name in JobName}
        for day in range(1, days + 1):
            midnight = datetime.combine((START + timedelta(days=day)).date(), datetime.min.time(), tzinfo=UTC)
            runs = [(JobName(job), midnight + timedelta(hours=hour)) for job, hour in _SCHEDULE]
            if midnight.weekday() == _SUNDAY:
                runs.append((JobName.CONSOLIDATE, midnight + timedelta(hours=_CONSOLIDATE_HOUR)))
            for job, moment in runs:
                clock.set(moment)
                meter.tally = per_job[job]
                services.governance.run(job, scope, moment)
        return GovernanceWrites(
            interactions=interactions,
            memories=memories,
            days=days,
            write_path=write_path,
            jobs={job.value: Writes.of(tally) for job, tally in per_job.items()},
        )
