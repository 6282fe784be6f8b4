"""What a governance job did for one end user, and the totals of a run: printed by the CLI, turned into metrics."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field


class JobName(StrEnum):
    DECAY = "decay"
    COMPRESS = "compress"
    CONSOLIDATE = "consolidate"
    RETENTION = "retention"


class Change(BaseModel):
    action: str  # decayed, archived, compressed-into, consolidated-into, trimmed, kept
    target: str  # a memory or interaction id
    detail: str = ""


# Report field -> metric name (Powertools / CloudWatch), per job invocation.
METRICS = {
    "users": "UsersProcessed",
    "decayed": "MemoriesDecayed",
    "compressed": "MemoriesCompressed",
    "consolidated": "MemoriesConsolidated",
    "archived": "MemoriesArchived",
    "derived": "MemoriesDerived",
    "trimmed_messages": "MessagesTrimmed",
}


_CHANGES = (
    "decayed",
    "compressed",
    "consolidated",
    "archived",
    "derived",
    "resumed",
    "trimmed_interactions",
    "trimmed_messages",
)


class JobReport(BaseModel):
    """Counts add up across users (`merge`), so one shape serves a user, a batch and a whole run."""

    job: JobName
    as_of: datetime
    users: int = 0
    examined: int = 0
    decayed: int = 0
    compressed: int = 0  # originals folded into a compact memory
    consolidated: int = 0  # originals merged into a consolidated memory
    archived: int = 0  # every memory archived, whatever the reason
    derived: int = 0  # compact and consolidated memories written
    resumed: int = 0  # interrupted derivations finished
    kept: int = 0  # left as they were: the only copy of what they hold, or changed meanwhile
    trimmed_interactions: int = 0
    trimmed_messages: int = 0
    failed_users: list[str] = Field(default_factory=list)
    changes: list[Change] = Field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether anything was written (memories kept as the only copy of what they hold change nothing)."""
        return any(getattr(self, name) for name in _CHANGES)

    def note(self, action: str, target: str, detail: str = "") -> None:
        self.changes.append(Change(action=action, target=target, detail=detail))

    def merge(self, other: JobReport) -> JobReport:
        counts = {
            name: getattr(self, name) + getattr(other, name)
            for name in JobReport.model_fields
            if name not in {"job", "as_of", "failed_users", "changes"}
        }
        return self.model_copy(
            update={
                **counts,
                "failed_users": [*self.failed_users, *other.failed_users],
                "changes": [*self.changes, *other.changes],
            }
        )

    def metrics(self) -> dict[str, int]:
        return {metric: int(getattr(self, field)) for field, metric in METRICS.items()}

    def summary(self) -> dict[str, object]:
        """The one log line of a run: counts, no memory content."""
        counts = {name: getattr(self, name) for name in METRICS if name != "users"}
        return {
            "job": self.job.value,
            "as_of": self.as_of.isoformat(),
            "users": self.users,
            "examined": self.examined,
            **counts,
            "resumed": self.resumed,
            "kept": self.kept,
            "trimmed_interactions": self.trimmed_interactions,
            "failed_users": self.failed_users,
        }
