"""API output of the ingestion pipeline: a run's result and the constructive filter's decisions."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from rapport.api.schemas import MemoryOut
from rapport.domain.filtering import FilterDecision, Verdict
from rapport.domain.models import Domain
from rapport.ports.pipeline import PipelineRun


class FilterDecisionOut(BaseModel):
    id: str
    interaction_id: str
    domain: Domain
    type: str
    verdict: Verdict
    reason: str
    original: str = Field(description="What the extractor proposed.")
    content: str | None = Field(description="What was stored: the original, its reframe, or null when blocked.")
    decided_by: str = Field(description="The model that judged: 'rules' or e.g. 'openai:gpt-4o-mini'.")
    fallback_reason: str | None = Field(description="Set when the rule-based model stood in, saying why.")
    memory_id: str | None
    restored_memory_id: str | None
    restored_at: datetime | None
    decided_at: datetime

    @classmethod
    def of(cls, decision: FilterDecision) -> FilterDecisionOut:
        return cls.model_validate(decision.model_dump(exclude={"tenant_id", "user_id", "importance"}))


class PipelineRunOut(BaseModel):
    status: str = Field(description="completed, started (runs on; see the memories shortly) or failed.")
    execution_id: str | None
    memories: list[MemoryOut] = Field(description="Memories stored or reinforced, when the run completed here.")
    stored: list[str] = Field(description="Ids of the memories this interaction created.")
    reinforced: list[str] = Field(description="Ids of existing memories it observed again (strength up).")
    invalidated: list[str] = Field(description="Ids of facts it contradicted: kept, marked invalidated.")
    filter_decisions: list[str]
    error: str | None

    @classmethod
    def of(cls, run: PipelineRun) -> PipelineRunOut:
        outcome = run.outcome
        return cls(
            status=run.status.value,
            execution_id=run.execution_id,
            memories=[MemoryOut.of(m) for m in run.memories],
            stored=outcome.stored if outcome else [],
            reinforced=outcome.reinforced if outcome else [],
            invalidated=outcome.invalidated if outcome else [],
            filter_decisions=outcome.decisions if outcome else [],
            error=run.error,
        )
