"""Domain entities: memories, interactions, audit events, and the vocabulary of domains, types, tiers and statuses."""

from __future__ import annotations

import functools
from datetime import date, datetime
from enum import StrEnum
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rapport.domain.access import LEGACY_SCOPES, ApiScope
from rapport.domain.scope import DEFAULT_AGENT, Scope


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
    # Read as instructions to the assistant (rapport.domain.quarantine): kept, listed, restorable, never recalled.
    QUARANTINED = "quarantined"


# What recall, expansion and the decay job treat as current: a compact memory stands for the originals it archived,
# so it is live like an active one. Archived and invalidated memories are history, returned only when asked for.
LIVE_STATUSES: frozenset[MemoryStatus] = frozenset({MemoryStatus.ACTIVE, MemoryStatus.COMPRESSED})
# Never recalled, history or not: a recall feeds a prompt, and a quarantined text must not reach one until the tenant
# restores it. Listing the memories still shows it.
NEVER_RECALLED: frozenset[MemoryStatus] = frozenset({MemoryStatus.QUARANTINED})


@functools.cache
def recalled_statuses(include_archived: bool) -> tuple[MemoryStatus, ...]:
    """What a recall may return: the live statuses, and the history after them when it is asked for."""
    live = tuple(s for s in MemoryStatus if s in LIVE_STATUSES)
    history = tuple(s for s in MemoryStatus if s not in LIVE_STATUSES and s not in NEVER_RECALLED)
    return live + history if include_archived else live


class SourceKind(StrEnum):
    API = "api"
    INTERACTION = "interaction"
    PIPELINE = "pipeline"
    GOVERNANCE = "governance"  # made by compression or consolidation; its sources are listed in its metadata
    IMPORTED = "imported"  # brought in from another memory system (a Mem0 export): nobody here saw it said


class Trust(StrEnum):
    """Whose words a memory is, which says how far a reader may take it: a person's own words and what was extracted
    from them are data about the person; only the tenant, through its API key, speaks for the application."""

    USER_SAID = "user_said"  # an end user's message, as said
    ASSISTANT_SAID = "assistant_said"  # the assistant's reply, as recorded by the tenant
    EXTRACTED = "extracted"  # a model (or the rules) read it out of a conversation
    TENANT_API = "tenant_api"  # written by the tenant through the memory API
    DERIVED = "derived"  # made by a governance job from other memories
    IMPORTED = "imported"  # taken from another system's export: whose words they were is not known here


_TRUST_OF_SOURCE: dict[SourceKind, Trust] = {
    SourceKind.API: Trust.TENANT_API,
    SourceKind.INTERACTION: Trust.USER_SAID,
    SourceKind.PIPELINE: Trust.EXTRACTED,
    SourceKind.GOVERNANCE: Trust.DERIVED,
    SourceKind.IMPORTED: Trust.IMPORTED,
}


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


class Granularity(StrEnum):
    """How precisely a time phrase places its event: "yesterday" a day, "last week" a week, "in May" a month."""

    DAY = "day"
    WEEK = "week"
    WEEKEND = "weekend"
    MONTH = "month"
    SEASON = "season"
    YEAR = "year"


class DateSpan(BaseModel):
    """A time phrase of a memory's words resolved against when they were said: "yesterday" said on 8 May 2023 is
    7 May 2023 (`start` and `end` inclusive). Recall matches a question's dates on these (docs/recall.md)."""

    model_config = ConfigDict(frozen=True)

    phrase: str
    start: date
    end: date
    granularity: Granularity


class Memory(BaseModel):
    """One memory of one end user of one tenant. Immutable (`model_copy` makes a changed one), so a store may hand
    the same instance to every reader."""

    model_config = ConfigDict(frozen=True)

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
    # Whose words these are; when not given, what the source says (a memory stored before trust was recorded, or
    # made where only one answer is possible).
    trust: Trust = Trust.TENANT_API
    # An episode's preceding message in its conversation (docs/recall.md); None for the first message and for any
    # other memory.
    in_reply_to: PrecedingMessage | None = None
    # The time phrases of its words resolved to dates (rapport.domain.time_expressions); empty when it has none or
    # was stored before they were resolved.
    mentioned_dates: list[DateSpan] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime
    occurred_at: datetime | None = None
    last_reinforced_at: datetime
    # When the decay job last wrote `strength` down (None: never). Decay runs from the later of this and
    # last_reinforced_at, so a persisted decay is not applied twice (rapport.domain.lifecycle.decay).
    decayed_at: datetime | None = None
    # The assistant it was made with. A relational memory belongs to that assistant's relationship with the person;
    # a user memory is a fact about the person that every assistant of the tenant reads (docs/data-model.md).
    agent_id: str = DEFAULT_AGENT
    embedding: list[float] | None = Field(default=None, repr=False)

    @model_validator(mode="before")
    @classmethod
    def _trust_of_source(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("trust") is None:
            data = {**data, "trust": trust_of(data.get("source"))}
        return data

    @property
    def scope(self) -> Scope:
        return Scope(tenant_id=self.tenant_id, user_id=self.user_id, agent_id=self.agent_id)

    @property
    def relationship(self) -> str | None:
        """The assistant whose relationship it is part of (a relational memory's), None for a shared fact."""
        return self.agent_id if self.domain is Domain.RELATIONAL else None

    def visible_to(self, scope: Scope) -> bool:
        """Whether this assistant of the tenant may read it: every user memory, its own relational ones."""
        return self.domain is Domain.USER or self.agent_id == scope.agent_id

    def without_embedding(self) -> Memory:
        return self.model_copy(update={"embedding": None})


def trust_of(source: Provenance | dict[str, Any] | None) -> Trust:
    """The trust a source implies. An episode is its speaker's: the interaction path sets it from the message's
    role; read back without it, an episode whose speaker is not "assistant" is taken for the person's."""
    if source is None:
        return Trust.TENANT_API
    if not isinstance(source, Provenance):
        source = Provenance.model_validate(source)
    if source.kind is SourceKind.INTERACTION and source.speaker == MessageRole.ASSISTANT.value:
        return Trust.ASSISTANT_SAID
    return _TRUST_OF_SOURCE[source.kind]


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
    agent_id: str = DEFAULT_AGENT  # the assistant that took part; the history itself is shared by all of them

    @property
    def scope(self) -> Scope:
        return Scope(tenant_id=self.tenant_id, user_id=self.user_id, agent_id=self.agent_id)


class AuditAction(StrEnum):
    ERASE_USER = "erase_user"
    WRITE = "write"
    PRIVILEGED_READ = "privileged_read"


class AuditEvent(BaseModel):
    """A write or a privileged read, who made it and its outcome. Never holds content: names, texts, bodies."""

    id: str
    tenant_id: str
    action: AuditAction
    actor: str  # the key's id (a prefix of its hash), never the key
    # Scope.user_hash: the audit trail outlives the person, so it never holds their id. None: a tenant-wide call.
    target_user_hash: str | None
    at: datetime
    counts: dict[str, int] = Field(default_factory=dict)
    operation: str | None = None  # the route's operation id (`memories_add`); None on events older than it
    status: int | None = None  # the HTTP status answered
    # What went of each assistant's relationship with the person (erasure): its relational memories and items.
    agents: dict[str, dict[str, int]] = Field(default_factory=dict)


class ApiKeyRecord(BaseModel):
    tenant_id: str
    key_hash: str
    name: str = "default"
    created_at: datetime
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None  # to the hour: a key used all day is written once an hour, not per request
    # What the key may do (domain/access.py); a record stored before keys had scopes reads as the legacy default.
    scopes: frozenset[ApiScope] = LEGACY_SCOPES

    @property
    def key_id(self) -> str:
        """How a key is named where it is listed: the first hex digits of its hash, never the key."""
        return self.key_hash[:12]

    def usable(self, now: datetime) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    """A page of results and the opaque cursor for the next one (None when there is none)."""

    items: list[T]
    next_cursor: str | None = None

    def __class_getitem__(cls, params: Any) -> Any:
        # pydantic caches `Page[Memory]` weakly: once nothing refers to it, a garbage collection frees it and the next
        # page built rebuilds the whole model (2–8 ms, schema and validator), which ingestion paid on most
        # interactions. Every page type made is kept for the process, a handful of classes.
        model = super().__class_getitem__(params)
        _PAGE_TYPES.add(model)
        return model


_PAGE_TYPES: set[Any] = set()


class RelationshipCounts(BaseModel):
    """One assistant's share of an erasure: its relational memories and its relationship's items (state, events,
    sessions), each also counted in the totals."""

    relational_memories: int = 0
    items: int = 0


class ErasureCounts(BaseModel):
    memories: int = 0
    interactions: int = 0
    other_items: int = 0
    index_entries: int = 0
    agents: dict[str, RelationshipCounts] = Field(default_factory=dict)

    def as_dict(self) -> dict[str, int]:
        return self.model_dump(exclude={"agents"})

    def by_agent(self) -> dict[str, dict[str, int]]:
        return {agent: counts.model_dump() for agent, counts in sorted(self.agents.items())}
