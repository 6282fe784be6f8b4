"""Domain entities: memories, interactions, audit events, and the vocabulary of domains, types, tiers and statuses."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from rapport.domain.scope import Scope


class Domain(StrEnum):
    USER = "user"
    RELATIONAL = "relational"


class DomainFilter(StrEnum):
    USER = "user"
    RELATIONAL = "relational"
    BOTH = "both"

    def domains(self) -> tuple[Domain, ...]:
        if self is DomainFilter.BOTH:
            return (Domain.USER, Domain.RELATIONAL)
        return (Domain(self.value),)


class UserMemoryType(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    EVENT = "event"
    GOAL = "goal"
    EPISODE = "episode"  # a message of the conversation history, kept so recall can find it


class RelationalMemoryType(StrEnum):
    INTERACTION_PATTERN = "interaction_pattern"
    COLLABORATION_OUTCOME = "collaboration_outcome"
    APPROACH_EFFECTIVENESS = "approach_effectiveness"
    COMMUNICATION_PREFERENCE = "communication_preference"
    SHARED_CONTEXT = "shared_context"
    WORKING_STYLE = "working_style"


TYPES_BY_DOMAIN: dict[Domain, frozenset[str]] = {
    Domain.USER: frozenset(t.value for t in UserMemoryType),
    Domain.RELATIONAL: frozenset(t.value for t in RelationalMemoryType),
}

DEFAULT_TYPE: dict[Domain, str] = {
    Domain.USER: UserMemoryType.FACT.value,
    Domain.RELATIONAL: RelationalMemoryType.SHARED_CONTEXT.value,
}


class Tier(StrEnum):
    WORKING = "working"
    SHORT_TERM = "short_term"
    LONG_TERM = "long_term"


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"
    INVALIDATED = "invalidated"
    COMPRESSED = "compressed"


# What recall, expansion and the decay job treat as current: a compact memory stands for the originals it archived,
# so it is live like an active one. Archived and invalidated memories are history, returned only when asked for.
LIVE_STATUSES: frozenset[MemoryStatus] = frozenset({MemoryStatus.ACTIVE, MemoryStatus.COMPRESSED})


def recalled_statuses(include_archived: bool) -> tuple[MemoryStatus, ...]:
    """What a recall may return: the live statuses, and the history after them when it is asked for."""
    live = tuple(s for s in MemoryStatus if s in LIVE_STATUSES)
    return live + tuple(s for s in MemoryStatus if s not in LIVE_STATUSES) if include_archived else live


class SourceKind(StrEnum):
    API = "api"
    INTERACTION = "interaction"
    PIPELINE = "pipeline"
    GOVERNANCE = "governance"  # made by compression or consolidation; its sources are listed in its metadata


class Provenance(BaseModel):
    """Where a memory came from: the API call, or an interaction (and which of its messages)."""

    model_config = ConfigDict(frozen=True)

    kind: SourceKind = SourceKind.API
    interaction_id: str | None = None
    message_index: int | None = None
    session_id: str | None = None
    channel: str | None = None
    speaker: str | None = None


class PrecedingMessage(BaseModel):
    """The message said just before an episode's in its conversation (its last characters when long): a reply
    ("It was Matt Patterson") means little without it, so it is embedded with the reply (docs/recall.md)."""

    model_config = ConfigDict(frozen=True)

    speaker: str
    content: str


class Memory(BaseModel):
    """One memory of one end user of one tenant."""

    id: str
    tenant_id: str
    user_id: str
    domain: Domain
    type: str
    content: str
    strength: float = Field(1.0, ge=0.0, le=1.0)
    importance: float = Field(0.5, ge=0.0, le=1.0)
    confidence: float = Field(1.0, ge=0.0, le=1.0)
    tier: Tier = Tier.SHORT_TERM
    status: MemoryStatus = MemoryStatus.ACTIVE
    associations: list[str] = Field(default_factory=list)
    source: Provenance = Field(default_factory=Provenance)
    # An episode's preceding message in its conversation (docs/recall.md); None for the first message and for any
    # other memory.
    in_reply_to: PrecedingMessage | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime
    occurred_at: datetime | None = None
    last_reinforced_at: datetime
    # When the decay job last wrote `strength` down (None: never). Decay runs from the later of this and
    # last_reinforced_at, so a persisted decay is not applied twice (rapport.domain.lifecycle.decay).
    decayed_at: datetime | None = None
    embedding: list[float] | None = Field(default=None, repr=False)

    @property
    def scope(self) -> Scope:
        return Scope(tenant_id=self.tenant_id, user_id=self.user_id)

    def without_embedding(self) -> Memory:
        return self.model_copy(update={"embedding": None})


class MemoryPatch(BaseModel):
    """The fields a client may change on an existing memory; None means unchanged."""

    content: str | None = None
    type: str | None = None
    importance: float | None = Field(None, ge=0.0, le=1.0)
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    tier: Tier | None = None
    status: MemoryStatus | None = None
    metadata: dict[str, Any] | None = None


class MessageRole(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: MessageRole
    content: str
    name: str | None = None


class Interaction(BaseModel):
    """One exchange (or a whole session) between the end user and the assistant, as history."""

    id: str
    tenant_id: str
    user_id: str
    messages: list[Message]
    channel: str | None = None
    session_id: str | None = None
    occurred_at: datetime
    created_at: datetime
    metadata: dict[str, Any] = Field(default_factory=dict)
    memory_ids: list[str] = Field(default_factory=list)

    @property
    def scope(self) -> Scope:
        return Scope(tenant_id=self.tenant_id, user_id=self.user_id)


class AuditAction(StrEnum):
    ERASE_USER = "erase_user"


class AuditEvent(BaseModel):
    """A privileged action and its effect. Never holds memory content."""

    id: str
    tenant_id: str
    action: AuditAction
    actor: str
    target_user_id: str
    at: datetime
    counts: dict[str, int] = Field(default_factory=dict)


class ApiKeyRecord(BaseModel):
    tenant_id: str
    key_hash: str
    name: str = "default"
    created_at: datetime


T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    """A page of results and the opaque cursor for the next one (None when there is none)."""

    items: list[T]
    next_cursor: str | None = None


class ErasureCounts(BaseModel):
    memories: int = 0
    interactions: int = 0
    other_items: int = 0
    index_entries: int = 0

    def as_dict(self) -> dict[str, int]:
        return self.model_dump()
