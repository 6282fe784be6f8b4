"""Typed models of what the API answers. Every model keeps fields it does not know (`extra="allow"`, readable as
attributes and in `model_extra`), so a newer server never breaks an older client; values that are enums on the
server (`domain`, `tier`, `status`, ...) are plain strings here for the same reason."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class RapportModel(BaseModel):
    model_config = ConfigDict(extra="allow")


# Memories


class Provenance(RapportModel):
    """Where a memory came from: `api`, or an interaction (and which of its messages)."""

    kind: str = "api"
    interaction_id: str | None = None
    message_index: int | None = None
    session_id: str | None = None
    channel: str | None = None
    speaker: str | None = None


class PrecedingMessage(RapportModel):
    speaker: str
    content: str


class DateSpan(RapportModel):
    """A time phrase of the memory's words resolved against when they were said ("yesterday" said on 8 May 2023 is
    7 May 2023); `start` and `end` inclusive, `granularity` day, week, weekend, month, season or year."""

    phrase: str
    start: date
    end: date
    granularity: str


class Memory(RapportModel):
    id: str
    user_id: str
    domain: str
    type: str
    content: str
    strength: float
    importance: float
    confidence: float
    tier: str
    status: str
    associations: list[str] = Field(default_factory=list)
    source: Provenance = Field(default_factory=Provenance)
    # Whose words: user_said, assistant_said, extracted, tenant_api or derived; None from a server that predates it.
    trust: str | None = None
    # The assistant it was made with (a relational memory is that assistant's own); "default" before assistants.
    agent_id: str = "default"
    in_reply_to: PrecedingMessage | None = None
    # The dates its time phrases name; empty from a server that predates it, or words that name none.
    mentioned_dates: list[DateSpan] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime
    occurred_at: datetime | None = None
    last_reinforced_at: datetime | None = None


class PathStep(RapportModel):
    from_id: str
    relation: str
    direction: str


class RecallHit(Memory):
    """A memory recall found, with why: its similarity, composed score and the reasons it matched."""

    similarity: float
    score: float
    match_strength: str
    match_reasons: list[str] = Field(default_factory=list)
    matched_terms: list[str] = Field(default_factory=list)
    path: list[PathStep] = Field(default_factory=list)


class SearchResults(RapportModel):
    memories: list[RecallHit]
    total_stored: int


class BatchItemResult(RapportModel):
    """One memory of a batch: `created` with the memory, or `invalid` with the reason in `message`."""

    index: int
    status: str
    memory: Memory | None = None
    error: str | None = None
    message: str | None = None


class BatchResult(RapportModel):
    results: list[BatchItemResult]
    created: int
    invalid: int


# Conversations


class Message(RapportModel):
    role: str
    content: str
    name: str | None = None


class Interaction(RapportModel):
    id: str
    user_id: str
    messages: list[Message]
    channel: str | None = None
    session_id: str | None = None
    occurred_at: datetime
    created_at: datetime
    metadata: dict[str, Any] = Field(default_factory=dict)
    memory_ids: list[str] = Field(default_factory=list)
    agent_id: str = "default"  # the assistant that took part


class PipelineRun(RapportModel):
    """The ingestion pipeline's run for one interaction: what it stored, reinforced and invalidated."""

    status: str
    execution_id: str | None = None
    memories: list[Memory] = Field(default_factory=list)
    stored: list[str] = Field(default_factory=list)
    reinforced: list[str] = Field(default_factory=list)
    invalidated: list[str] = Field(default_factory=list)
    filter_decisions: list[Any] = Field(default_factory=list)
    error: str | None = None


class RecordedInteraction(RapportModel):
    """The answer to recording a conversation: the interaction, its episodes, and the pipeline's run (or None)."""

    interaction: Interaction
    memories: list[Memory] = Field(default_factory=list)
    pipeline: PipelineRun | None = None


class PipelineStatus(RapportModel):
    """Where the pipeline stands for one interaction: `pending`, `done` or `failed`."""

    status: str
    stored: list[str] = Field(default_factory=list)
    reinforced: list[str] = Field(default_factory=list)
    invalidated: list[str] = Field(default_factory=list)
    filter_decisions: list[Any] = Field(default_factory=list)
    attempts: int = 0
    error: str | None = None


class InteractionStatus(RapportModel):
    interaction: Interaction
    pipeline: PipelineStatus | None = None


# /v1/process and turns


class RelevantMemory(RapportModel):
    id: str
    text: str
    similarity: float
    timestamp: datetime


class MemoryContext(RapportModel):
    relevant_memories: list[RelevantMemory] = Field(default_factory=list)
    relational_notes: list[RelevantMemory] = Field(default_factory=list)
    total_stored: int = 0
    interaction_count: int = 0
    known_since: datetime | None = None
    last_seen: datetime | None = None


class UserState(RapportModel):
    trust: float
    sentiment: float
    grudge: float
    familiarity: float


class ReplyContext(RapportModel):
    tone_grudge_modifier: str | None = None
    relation_bias: float = 0.0
    system_prompt: str


class Safety(RapportModel):
    crisis: bool = False


class ProcessResult(RapportModel):
    """Context for one user message. `reply` is the server's model's answer, or None when it has none: then answer
    with your own model from `context.system_prompt` and send the answer with `turns.reply(user_id, turn_id, ...)`
    (`turn_status` is `awaiting_reply`)."""

    reply: str | None = None
    memory: MemoryContext
    user: UserState
    context: ReplyContext
    safety: Safety = Field(default_factory=Safety)
    turn_id: str | None = None
    turn_status: str | None = None
    interaction_id: str | None = None


class TurnRecorded(RapportModel):
    """The answer to `turns.reply`: the exchange recorded as an interaction; `replayed` when it was sent before."""

    turn_id: str
    status: str
    replayed: bool = False
    interaction: Interaction
    memories: list[Memory] = Field(default_factory=list)
    pipeline: PipelineRun | None = None


class TurnResult(RapportModel):
    """What `turn()` did: the reply given (by the server's model or yours), the context it was given with, and the
    recorded exchange. `interaction` is set when the reply was yours (recorded through `turns.reply`); when the
    server replied it recorded the exchange itself and only `interaction_id` is known
    (`interactions.get` reads it)."""

    reply: str
    replied_by: str = Field(description="`server` (its model answered) or `client` (your callable did).")
    process: ProcessResult
    interaction_id: str | None = None
    interaction: Interaction | None = None
    recorded: TurnRecorded | None = None


# Relational state, events, people, privacy


class Profile(RapportModel):
    known_since: datetime
    last_seen: datetime
    interaction_count: int
    plan_tier: str


class StateTimes(RapportModel):
    trust: datetime | None = None
    sentiment: datetime | None = None
    grudge: datetime | None = None
    familiarity: datetime | None = None


class RelationalState(UserState):
    user_id: str
    relation_bias: float
    tone_grudge_modifier: str | None = None
    crisis_open: bool = False
    as_of: datetime
    last_updated: StateTimes = Field(default_factory=StateTimes)
    profile: Profile | None = None


class StateEvent(RapportModel):
    id: str
    type: str
    note: str | None = None
    at: datetime
    before: dict[str, float] = Field(default_factory=dict)
    after: dict[str, float] = Field(default_factory=dict)


class EventReported(RapportModel):
    event: StateEvent
    replayed: bool = False
    state: RelationalState


class PersonFact(RapportModel):
    text: str
    at: datetime
    sentiment: float


class Person(RapportModel):
    slug: str
    name: str | None = None
    role: str | None = None
    sentiment: float
    sentiment_label: str
    mention_count: int
    first_mentioned: datetime
    last_mentioned: datetime
    facts: list[PersonFact] = Field(default_factory=list)


class Erasure(RapportModel):
    status: str
    user_id: str
    counts: dict[str, int] = Field(default_factory=dict)
    agents: dict[str, dict[str, int]] = Field(default_factory=dict)  # per assistant: relational_memories, items
    audit_event_id: str


class AuditEvent(RapportModel):
    id: str
    action: str  # write, privileged_read or erase_user
    actor: str  # the key's id, as the key listing names it
    operation: str | None = None  # the API operation called; None on an erasure
    status: int | None = None  # the HTTP status it answered
    # sha256 of tenant id, 0x1F, user id: the audit trail never holds the id; None for a call about no end user
    target_user_hash: str | None = None
    at: datetime
    counts: dict[str, int] = Field(default_factory=dict)
    agents: dict[str, dict[str, int]] = Field(default_factory=dict)


class UserSummary(RapportModel):
    user_id: str
    memory_count: int
    interaction_count: int
    last_seen: datetime | None = None
    known_since: datetime | None = None


class ImportLineError(RapportModel):
    line: int  # the line's number in the file (or in the lines given), 1 being the header
    error: str
    message: str


class ImportResult(RapportModel):
    imported: dict[str, int] = Field(default_factory=dict)
    skipped: dict[str, int] = Field(default_factory=dict)
    errors: list[ImportLineError] = Field(default_factory=list)


class Agent(RapportModel):
    """One of the tenant's assistants, with what it holds of its relationships."""

    agent_id: str
    default: bool
    first_seen: datetime | None = None
    people: int = 0
    relational_memories: int = 0


class Agents(RapportModel):
    agents: list[Agent] = Field(default_factory=list)
