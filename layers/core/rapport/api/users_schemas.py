"""Wire models of the tenant's end-user routes: the listing, and an export's lines and an import's answer."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rapport.services.assistants import AssistantSummary
from rapport.services.user_directory import UserSummary
from rapport.services.user_import import ImportResult


class UserOut(BaseModel):
    user_id: str
    memory_count: int = Field(description="Memories kept, in every domain and status")
    interaction_count: int = Field(description="Interactions recorded (from the profile; trimmed history counts)")
    last_seen: datetime | None = Field(description="The latest interaction's time; null when none was recorded")
    known_since: datetime | None = None

    @classmethod
    def of(cls, summary: UserSummary) -> UserOut:
        return cls(
            user_id=summary.user_id,
            memory_count=summary.memory_count,
            interaction_count=summary.interaction_count,
            last_seen=summary.last_seen,
            known_since=summary.known_since,
        )


class UserPageOut(BaseModel):
    users: list[UserOut]
    next_cursor: str | None = None


class ExportLineOut(BaseModel):
    """One line of `application/x-ndjson`: the header first, then one entity per line with its fields beside
    `kind` (docs/data-model.md, "Export format")."""

    model_config = ConfigDict(extra="allow")

    kind: Literal["header", "profile", "state", "memory", "edge", "person", "interaction", "filter_decision"]


class ImportErrorOut(BaseModel):
    line: int = Field(description="The line's number in the body, 1 being the header")
    error: str = Field(description="malformed_json, unknown_kind, invalid_line or unsupported_format")
    message: str


class ImportOut(BaseModel):
    imported: dict[str, int] = Field(description="Lines written, by kind")
    skipped: dict[str, int] = Field(description="Memories and interactions already stored under the same id")
    errors: list[ImportErrorOut]

    @classmethod
    def of(cls, result: ImportResult) -> ImportOut:
        return cls(
            imported=dict(result.imported),
            skipped=dict(result.skipped),
            errors=[ImportErrorOut(line=e.line, error=e.error, message=e.message) for e in result.errors],
        )


class AgentOut(BaseModel):
    agent_id: str = Field(description="The assistant's id, as sent in `agent_id` (`default`: none sent).")
    default: bool = Field(description="The assistant a call without `agent_id` talks to.")
    first_seen: datetime | None = Field(
        description="When it first wrote in this tenant; null for the default assistant, which is never registered."
    )
    people: int = Field(description="People it has relational memories of.")
    relational_memories: int = Field(description="Its relational memories, every status.")

    @classmethod
    def of(cls, summary: AssistantSummary) -> AgentOut:
        return cls.model_validate(summary.model_dump())


class AgentsOut(BaseModel):
    agents: list[AgentOut]
