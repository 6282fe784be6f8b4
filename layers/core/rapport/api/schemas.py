"""API input and output models: the wire format, kept apart from domain entities and persistence records."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rapport.domain.models import (
    AuditEvent,
    DateSpan,
    Domain,
    Interaction,
    Memory,
    MemoryStatus,
    Message,
    MessageRole,
    PrecedingMessage,
    Provenance,
    Tier,
    Trust,
)
from rapport.domain.recall import RecallHit
from rapport.domain.timestamps import Moment


class _Request(BaseModel):
    # A misspelt field is an error the client should hear about, not a value silently ignored.
    model_config = ConfigDict(extra="forbid")


AGENT_ID_DESCRIPTION = (
    "Which of the tenant's assistants this is about (a slug of your choosing: lowercase letters, digits, `_`, `-`). "
    "Each keeps its own relationship with a person (relational memories and state, sessions); facts about the "
    "person, the people they mention and the history are shared. Absent: the default assistant."
)


def agent_id_field() -> Any:
    """The optional assistant id of a write's body (its pattern is documented with the path's user id)."""
    return Field(None, description=AGENT_ID_DESCRIPTION)


class CreateMemoryRequest(_Request):
    model_config = ConfigDict(
        json_schema_extra={"examples": [{"content": "Has a dog named Max", "domain": "user", "type": "fact"}]}
    )

    content: str = Field(description="The memory's text.")
    domain: Domain = Field(description="`user` (facts about the person) or `relational` (our shared history).")
    type: str | None = Field(None, description="A type of the domain; defaults to `fact` / `shared_context`.")
    importance: float | None = Field(None, ge=0.0, le=1.0)
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    metadata: dict[str, Any] | None = None
    occurred_at: Moment | None = None
    agent_id: str | None = agent_id_field()


MAX_BATCH = 100


class CreateMemoriesRequest(_Request):
    memories: list[CreateMemoryRequest] = Field(
        min_length=1, max_length=MAX_BATCH, description=f"1 to {MAX_BATCH} memories, each as for a single create."
    )
    agent_id: str | None = agent_id_field()


class PatchMemoryRequest(_Request):
    content: str | None = None
    type: str | None = None
    importance: float | None = Field(None, ge=0.0, le=1.0)
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    tier: Tier | None = None
    status: MemoryStatus | None = None
    metadata: dict[str, Any] | None = None


class MessageIn(_Request):
    role: MessageRole
    content: str
    name: str | None = Field(None, max_length=128, description="The speaker's name, kept with the message.")

    def to_domain(self) -> Message:
        return Message(role=self.role, content=self.content, name=self.name)


class CreateInteractionRequest(_Request):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "messages": [
                        {"role": "user", "content": "I am getting a 500 on /users again"},
                        {"role": "assistant", "content": "Let us add logging around the auth middleware"},
                    ]
                }
            ]
        }
    )

    messages: list[MessageIn] = Field(description="The conversation, in order; at least one message.")
    channel: str | None = Field(None, max_length=64)
    session_id: str | None = Field(None, max_length=128)
    occurred_at: Moment | None = None
    metadata: dict[str, Any] | None = None
    agent_id: str | None = agent_id_field()


class MemoryOut(BaseModel):
    id: str
    user_id: str
    domain: Domain
    type: str
    content: str
    strength: float
    importance: float
    confidence: float
    tier: Tier
    status: MemoryStatus = Field(
        description="`quarantined`: read as instructions to the assistant; kept, never recalled until restored."
    )
    associations: list[str]
    source: Provenance
    trust: Trust = Field(
        description="Whose words these are: `user_said`, `assistant_said`, `extracted` (by the pipeline from a "
        "conversation), `tenant_api` (written through this API) or `derived` (by a governance job)."
    )
    # An episode's preceding message in its conversation, which it was embedded with; null for other memories.
    in_reply_to: PrecedingMessage | None = None
    mentioned_dates: list[DateSpan] = Field(
        default_factory=list,
        description="The time phrases of its words resolved to dates as of when they were said (`yesterday` said on "
        "8 May 2023: 2023-05-07), `start` and `end` inclusive; empty when it names no time.",
    )
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    occurred_at: datetime | None
    last_reinforced_at: datetime
    agent_id: str = Field(
        description="The assistant it was made with: a relational memory is that assistant's alone, a user memory "
        "every assistant's."
    )

    @classmethod
    def of(cls, memory: Memory) -> MemoryOut:
        return cls.model_validate(memory.model_dump(exclude={"embedding", "tenant_id"}))


class PathStepOut(BaseModel):
    from_id: str
    relation: str
    direction: str  # outgoing: from_id -relation-> this memory; incoming: this memory -relation-> from_id


class RecallHitOut(MemoryOut):
    similarity: float
    score: float
    match_strength: str
    match_reasons: list[str]
    matched_terms: list[str]
    # Graph expansion (docs/graph.md): empty for a hit the query found; the edges followed to one expansion reached.
    path: list[PathStepOut] = Field(default_factory=list)

    @classmethod
    def of_hit(cls, hit: RecallHit) -> RecallHitOut:
        return cls.model_validate(
            {
                **hit.memory.model_dump(exclude={"embedding", "tenant_id"}),
                "similarity": hit.similarity,
                "score": hit.score,
                "match_strength": hit.match_strength.value,
                "match_reasons": hit.match_reasons,
                "matched_terms": hit.matched_terms,
                "path": [step.model_dump(mode="json") for step in hit.path],
            }
        )


class InteractionOut(BaseModel):
    id: str
    user_id: str
    messages: list[Message]
    channel: str | None
    session_id: str | None
    occurred_at: datetime
    created_at: datetime
    metadata: dict[str, Any]
    memory_ids: list[str]
    agent_id: str = Field(description="The assistant that took part (the history is every assistant's).")

    @classmethod
    def of(cls, interaction: Interaction) -> InteractionOut:
        return cls.model_validate(interaction.model_dump(exclude={"tenant_id"}))


class AuditEventOut(BaseModel):
    id: str
    action: str = Field(description="write, privileged_read or erase_user.")
    actor: str = Field(description="The key's id (the first hex digits of its hash, as `GET /v1/keys` lists it).")
    operation: str | None = Field(description="The operation called (its id in this document); null on erasures.")
    status: int | None = Field(description="The HTTP status answered; null on erasures, which answered 200.")
    target_user_hash: str | None = Field(
        description="sha256 of the tenant id, a 0x1F byte and the user id (first 32 hex digits): never the id itself; "
        "null for a call about no one end user (the knowledge graph, keys, webhooks)."
    )
    at: datetime
    counts: dict[str, int] = Field(description="An erasure's counts of what went; empty otherwise.")
    agents: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="An erasure's counts per assistant of the tenant (`relational_memories`, `items`: its state, "
        "events and sessions), each also in `counts`; empty otherwise.",
    )

    @classmethod
    def of(cls, event: AuditEvent) -> AuditEventOut:
        return cls.model_validate(event.model_dump(exclude={"tenant_id"}))


class HealthOut(BaseModel):
    status: str = Field(examples=["ok"])
    version: str


class MemoryPageOut(BaseModel):
    # Hits first: a hit is a memory too, so the wider model must be tried before the narrower one.
    memories: list[RecallHitOut | MemoryOut] = Field(
        description="With `query`: the hits, best first, each with its score and why it matched; without: memories "
        "newest first."
    )
    total_stored: int = Field(description="Every memory stored for this end user, whatever the filters.")
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last (and on recall).")


class BatchCreatedOut(BaseModel):
    index: int = Field(description="The memory's position in the request.")
    status: Literal["created"]
    memory: MemoryOut


class BatchInvalidOut(BaseModel):
    index: int = Field(description="The memory's position in the request.")
    status: Literal["invalid"]
    error: str = Field(examples=["invalid_input"])
    message: str = Field(description="Why this memory was refused; the others are unaffected.")


class MemoryBatchOut(BaseModel):
    results: list[Annotated[BatchCreatedOut | BatchInvalidOut, Field(discriminator="status")]] = Field(
        description="One result per memory of the request, in its order."
    )
    created: int
    invalid: int


class InteractionPageOut(BaseModel):
    interactions: list[InteractionOut]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last.")


class AuditPageOut(BaseModel):
    events: list[AuditEventOut]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last.")


class ErasedOut(BaseModel):
    status: Literal["erased"]
    user_id: str
    counts: dict[str, int] = Field(description="How many items of each kind were erased.")
    agents: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="What went of each assistant's relationship with the person: `relational_memories` and `items` "
        "(its state, reported events and sessions), also counted in `counts`.",
    )
    audit_event_id: str = Field(description="The audit event recording the erasure (who, when, how much).")
