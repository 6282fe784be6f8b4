"""API input and output models of working memory and the governance routes."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from rapport.api.schemas import MemoryOut
from rapport.domain.models import MessageRole
from rapport.services.sessions import SessionView


class TurnOut(BaseModel):
    role: MessageRole
    content: str
    name: str | None
    at: datetime
    interaction_id: str


class SessionContextOut(BaseModel):
    session_id: str
    user_id: str
    summary: str = Field(description="The running summary of the turns folded out of the context, oldest first.")
    turns: list[TurnOut] = Field(description="The latest turns, verbatim, oldest first.")
    folded_turns: int
    token_estimate: int
    token_budget: int
    started_at: datetime
    last_activity_at: datetime
    expires_at: datetime

    @classmethod
    def of(cls, view: SessionView) -> SessionContextOut:
        return cls.model_validate(view.model_dump(exclude={"recent_interaction_ids"}))


class MarkUsedRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_ids: list[str] = Field(min_length=1, max_length=50, description="Memories the assistant used in a reply.")


class MarkUsedOut(BaseModel):
    memories: list[MemoryOut]
    not_found: list[str]


class UndoConsolidationOut(BaseModel):
    consolidation_id: str
    state: str
    restored: list[str] = Field(description="Originals this call made active again.")
    originals: list[str]
