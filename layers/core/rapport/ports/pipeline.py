"""Port `PipelineTrigger`: start the ingestion pipeline for a recorded interaction (Step Functions, or in process)."""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, Field

from rapport.domain.models import Memory
from rapport.pipeline.models import PipelineRequest, StoreOutcome


class PipelineStatus(StrEnum):
    COMPLETED = "completed"  # ran to the end before the call returned; `outcome` says what it stored
    STARTED = "started"  # running elsewhere (Step Functions, a background thread)
    FAILED = "failed"  # did not run to the end; the interaction is kept and the run can be repeated


class PipelineRun(BaseModel):
    interaction_id: str
    status: PipelineStatus
    execution_id: str | None = None
    outcome: StoreOutcome | None = None
    memories: list[Memory] = Field(default_factory=list)  # stored or reinforced, without embeddings
    error: str | None = None


class PipelineTrigger(Protocol):
    def start(self, request: PipelineRequest, *, wait: bool) -> PipelineRun:
        """Start the pipeline for one interaction. With `wait`, an in-process trigger runs it to the end first;
        an asynchronous one (Step Functions) starts it either way. Starting twice is harmless: every step is
        idempotent on the interaction id."""
