"""API output of the ingestion pipeline: a run's result and the constructive filter's decisions."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from rapport.api.schemas import InteractionOut, MemoryOut
from rapport.domain.filtering import FilterDecision, Verdict
from rapport.domain.models import Domain
from rapport.ports.pipeline import PipelineRun
from rapport.services.interactions import InteractionProgress, RecordedInteraction


class FilterDecisionOut(BaseModel):
    id: str
    interaction_id: str
    domain: Domain
    type: str
    verdict: Verdict
    reason: str
    original: str = Field(description="What the extractor proposed.")
    content: str | None = Field(
        description="What was stored: the original, its reframe, or null when blocked. A quarantined original is "
        "stored but never recalled until restored; an episode's (type `episode`) is the message as said."
    )
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


class RecordedInteractionOut(BaseModel):
    interaction: InteractionOut
    memories: list[MemoryOut] = Field(description="The episodes recorded: one memory per message.")
    pipeline: PipelineRunOut | None = Field(description="The extraction pipeline's run, when one is configured.")

    @classmethod
    def of(cls, recorded: RecordedInteraction) -> RecordedInteractionOut:
        return cls(
            interaction=InteractionOut.of(recorded.interaction),
            memories=[MemoryOut.of(m) for m in recorded.episodes],
            pipeline=PipelineRunOut.of(recorded.pipeline) if recorded.pipeline else None,
        )


class InteractionProgressOut(BaseModel):
    status: str = Field(description="pending until the pipeline has run, then done or failed.")
    stored: list[str] = Field(description="Ids of the memories the pipeline created.")
    reinforced: list[str]
    invalidated: list[str]
    filter_decisions: list[str]
    attempts: int
    error: str | None


class InteractionStatusOut(BaseModel):
    interaction: InteractionOut
    pipeline: InteractionProgressOut

    @classmethod
    def of(cls, progress: InteractionProgress) -> InteractionStatusOut:
        run = progress.run
        outcome = run.outcome if run else None
        return cls(
            interaction=InteractionOut.of(progress.interaction),
            pipeline=InteractionProgressOut(
                status=progress.status,
                stored=outcome.stored if outcome else [],
                reinforced=outcome.reinforced if outcome else [],
                invalidated=outcome.invalidated if outcome else [],
                filter_decisions=outcome.decisions if outcome else [],
                attempts=run.attempts if run else 0,
                error=run.error if run else None,
            ),
        )


class FilterDecisionPageOut(BaseModel):
    decisions: list[FilterDecisionOut]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last.")


class RestoredOut(BaseModel):
    decision: FilterDecisionOut
    memory: MemoryOut = Field(description="The original, stored (or the one a previous restore stored).")


class TurnRepliedOut(RecordedInteractionOut):
    turn_id: str
    status: str = Field(description="The turn's status: recorded once its reply is attached.")
    replayed: bool = Field(description="True when the turn already had this reply: nothing was recorded again.")
