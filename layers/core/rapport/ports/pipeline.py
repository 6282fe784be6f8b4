"""Port `PipelineTrigger`: start the ingestion pipeline for a recorded interaction (Step Functions, or in process),
and the models that flow between its steps: the same pydantic models in process and as Step Functions state."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from rapport.domain.filtering import Verdict
from rapport.domain.models import Domain, Interaction, Memory
from rapport.domain.scope import AGENT_ID_PATTERN, DEFAULT_AGENT, Scope


class PipelineStatus(StrEnum):
    """How far a run got. A trigger answers STARTED, COMPLETED or FAILED; the run's stored item says RUNNING,
    COMPLETED or FAILED. STARTED and RUNNING stay apart because both are already in use as they are: STARTED in
    the API's answer (the run goes on elsewhere), RUNNING in stored items (a step opened the run, none closed it)."""

    STARTED = "started"  # running elsewhere (Step Functions, a background thread)
    RUNNING = "running"
    COMPLETED = "completed"  # ran to the end; `outcome` says what it stored
    FAILED = "failed"  # did not run to the end; the interaction is kept and the run can be repeated


class PipelineRequest(BaseModel):
    """The state machine's input: a reference to a recorded interaction, never its text (the 256 KB state limit,
    and end users' words stay out of execution state)."""

    # The state carries the other steps' results and, after a failure, the error: each step reads what it needs.
    model_config = ConfigDict(extra="ignore")

    tenant_id: str = Field(min_length=1)
    user_id: str = Field(min_length=1)
    interaction_id: str = Field(min_length=1)
    # The assistant that took part, for whoever reads the execution (a named one's only: the default assistant's
    # request is the one it always was, which a request queued before assistants had names also is). The steps take
    # it from the interaction they read, so a dead letter, which keeps the three ids, replays as it ran.
    agent_id: str = Field(DEFAULT_AGENT, pattern=AGENT_ID_PATTERN)

    @property
    def scope(self) -> Scope:
        return Scope(self.tenant_id, self.user_id, self.agent_id)

    @model_serializer(mode="wrap")
    def _named_agent_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("agent_id") == DEFAULT_AGENT:
            data.pop("agent_id")
        return data


class RecordOutcome(BaseModel):
    interaction_id: str
    message_count: int
    session_id: str | None = None
    # A previous run of this interaction completed: the later steps skip their work (Express executions are
    # at-least-once, and a redriven message may arrive after the original succeeded).
    already_done: bool = False


class Candidate(BaseModel):
    """A memory an extractor proposes, before the constructive filter has seen it."""

    domain: Domain
    type: str
    content: str
    importance: float = Field(ge=0.0, le=1.0)
    confidence: float = Field(ge=0.0, le=1.0)
    slot: str | None = None
    correction: bool = False
    # An update of fact: the earlier value the user says stopped being true, and their words for the change (the
    # reason the memories stating it are invalidated with).
    replaces: str | None = None
    change: str | None = None
    evidence: list[int] = Field(default_factory=list)


class ExtractionResult(BaseModel):
    domain: Domain
    candidates: list[Candidate] = Field(default_factory=list)
    extractor: str  # the model that answered
    fallback_reason: str | None = None  # why the rule-based model stood in, when it did
    skipped: bool = False


class Judged(BaseModel):
    """A candidate with the filter's verdict; `content` is what will be stored (None when blocked)."""

    decision_id: str
    candidate: Candidate
    verdict: Verdict
    reason: str
    content: str | None
    decided_by: str
    fallback_reason: str | None = None
    extractor: str
    extractor_fallback_reason: str | None = None


class FilterOutcome(BaseModel):
    judged: list[Judged] = Field(default_factory=list)
    skipped: bool = False


class StoreOutcome(BaseModel):
    interaction_id: str
    stored: list[str] = Field(default_factory=list)  # memories this interaction created
    reinforced: list[str] = Field(default_factory=list)  # existing memories it observed again
    invalidated: list[str] = Field(default_factory=list)  # facts it contradicted (kept, marked invalidated)
    decisions: list[str] = Field(default_factory=list)  # every filter decision, blocked ones included
    skipped: bool = False  # a previous run had already stored this interaction


class PipelineState(PipelineRequest):
    """The whole state of one run: the request plus each step's result under its own key."""

    recorded: RecordOutcome | None = None
    extracted: list[ExtractionResult] | None = None
    filtered: FilterOutcome | None = None

    def request(self) -> PipelineRequest:
        return PipelineRequest(
            tenant_id=self.tenant_id, user_id=self.user_id, interaction_id=self.interaction_id, agent_id=self.agent_id
        )

    @property
    def already_done(self) -> bool:
        return self.recorded is not None and self.recorded.already_done


class PipelineRun(BaseModel):
    """One interaction's run: what a trigger answers, and (its `STORED_FIELDS`) the item that records how far the
    run got. The stored item is RUNNING, COMPLETED or FAILED, never STARTED, and never holds the memories or the
    execution id of an answer."""

    STORED_FIELDS: ClassVar[frozenset[str]] = frozenset(
        {"interaction_id", "status", "attempts", "started_at", "finished_at", "outcome", "error"}
    )

    interaction_id: str
    status: PipelineStatus
    execution_id: str | None = None
    attempts: int = 0
    started_at: datetime | None = None
    finished_at: datetime | None = None
    outcome: StoreOutcome | None = None
    memories: list[Memory] = Field(default_factory=list)  # stored or reinforced, without embeddings
    error: str | None = None


class PipelineRuns(Protocol):
    """Where an interaction's run is recorded, for whoever reports how far it got."""

    def get(self, scope: Scope, interaction_id: str) -> PipelineRun | None: ...


class RunsInFlight(Protocol):
    """Runs this process started and has not finished: an erasure waits for a person's, or a run that ends after it
    would write their memories again."""

    def settle(self, scope: Scope, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the person's runs started so far; False when one is still running."""


class PipelineTrigger(Protocol):
    def start(self, request: PipelineRequest, *, wait: bool, recorded: Interaction | None = None) -> PipelineRun:
        """Start the pipeline for one interaction. With `wait`, an in-process trigger runs it to the end first;
        an asynchronous one (Step Functions) starts it either way. Starting twice is harmless: every step is
        idempotent on the interaction id. `recorded`: the interaction as the caller has just stored it, before any
        run of it could start; an in-process trigger runs from it instead of reading it back."""
