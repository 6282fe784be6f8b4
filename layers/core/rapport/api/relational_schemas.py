"""API input and output models of /v1/process, relational state, events and people (the wire format)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from rapport.api.schemas import agent_id_field
from rapport.domain.people import Person, PersonFact
from rapport.domain.profile import Profile
from rapport.domain.recall import RecallHit
from rapport.domain.relational_state import RelationalState, StateReading
from rapport.services.process import ProcessOutcome
from rapport.services.relational_state import StateEventRecord


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PreviousTurnIn(_Request):
    turn_id: str = Field(max_length=64)
    reply: str = Field(description="What the assistant answered.")


class ProcessRequest(_Request):
    user_id: str = Field(description="The end user the message comes from.")
    message: str = Field(description="What the user said.")
    channel: str | None = Field(None, max_length=64)
    session_id: str | None = Field(None, max_length=128, description="Earlier turns of this session go to the model.")
    previous_turn: PreviousTurnIn | None = Field(
        None, description="Your model's reply to this person's previous turn, if you did not send it on its own."
    )
    agent_id: str | None = agent_id_field()


class TurnReplyRequest(_Request):
    user_id: str = Field(description="The end user whose turn it is.")
    reply: str = Field(description="What the assistant answered.")


class StateEventRequest(_Request):
    # A plain string, not an enum: an unknown type must be a 400 that lists the known ones, not a 422.
    type: str = Field(description="`broken_promise`, `promise_kept` or `crisis_resolved`.")
    note: str | None = Field(None, description="Why, in the tenant's words; kept with the event.")
    agent_id: str | None = agent_id_field()


class RelevantMemoryOut(BaseModel):
    id: str
    text: str
    similarity: float
    timestamp: datetime

    @classmethod
    def of(cls, hit: RecallHit) -> RelevantMemoryOut:
        memory = hit.memory
        return cls(
            id=memory.id,
            text=memory.content,
            similarity=hit.similarity,
            timestamp=memory.occurred_at or memory.created_at,
        )


class MemoryContextOut(BaseModel):
    relevant_memories: list[RelevantMemoryOut] = Field(description="Top-K (3) of both domains above similarity 0.3.")
    relational_notes: list[RelevantMemoryOut] = Field(
        description="Relational memories above the same bar that the top-K left out (how you work with this person)."
    )
    total_stored: int
    interaction_count: int
    known_since: datetime | None
    last_seen: datetime | None


class UserStateOut(BaseModel):
    trust: float
    sentiment: float
    grudge: float
    familiarity: float


class ReplyContextOut(BaseModel):
    tone_grudge_modifier: str | None
    relation_bias: float
    system_prompt: str


class SafetyOut(BaseModel):
    crisis: bool


class ProcessResponse(BaseModel):
    reply: str | None = Field(description="The server's reply, when a language model is configured; else null.")
    turn_id: str = Field(
        description="Send your model's reply to POST /v1/turns/{turn_id}/reply, or with the next call."
    )
    turn_status: str = Field(description="awaiting_reply, or recorded when the server replied itself.")
    interaction_id: str | None = Field(description="The interaction the turn was recorded as, once recorded.")
    memory: MemoryContextOut
    user: UserStateOut
    context: ReplyContextOut
    safety: SafetyOut

    @classmethod
    def of(cls, outcome: ProcessOutcome) -> ProcessResponse:
        profile = outcome.profile
        return cls(
            reply=outcome.reply,
            turn_id=outcome.turn_id,
            turn_status=outcome.turn_status.value,
            interaction_id=outcome.interaction.id if outcome.interaction else None,
            memory=MemoryContextOut(
                relevant_memories=[RelevantMemoryOut.of(h) for h in outcome.memories],
                relational_notes=[RelevantMemoryOut.of(h) for h in outcome.relational_notes],
                total_stored=outcome.total_stored,
                interaction_count=profile.interaction_count if profile else 0,
                known_since=profile.known_since if profile else None,
                last_seen=profile.last_seen if profile else None,
            ),
            user=UserStateOut(**_rounded(outcome.state)),
            context=ReplyContextOut(
                tone_grudge_modifier=outcome.context_state.tone_modifier.value
                if outcome.context_state.tone_modifier
                else None,
                relation_bias=round(outcome.context_state.relation_bias, 6),
                system_prompt=outcome.system_prompt,
            ),
            safety=SafetyOut(crisis=outcome.crisis),
        )


def _rounded(reading: StateReading) -> dict[str, float]:
    # Six decimals: enough to check the documented arithmetic by hand, without float noise like 0.5099999999.
    return {
        "trust": round(reading.trust, 6),
        "sentiment": round(reading.sentiment, 6),
        "grudge": round(reading.grudge, 6),
        "familiarity": round(reading.familiarity, 6),
    }


class ProfileOut(BaseModel):
    known_since: datetime
    last_seen: datetime
    interaction_count: int
    plan_tier: str


class StateTimesOut(BaseModel):
    trust: datetime | None
    sentiment: datetime | None
    grudge: datetime | None
    familiarity: datetime | None


class StateOut(UserStateOut):
    user_id: str
    relation_bias: float
    tone_grudge_modifier: str | None
    crisis_open: bool
    as_of: datetime
    last_updated: StateTimesOut
    profile: ProfileOut | None

    @classmethod
    def of(cls, user_id: str, reading: StateReading, stored: RelationalState, profile: Profile | None) -> StateOut:
        return cls(
            user_id=user_id,
            **_rounded(reading),
            relation_bias=round(reading.relation_bias, 6),
            tone_grudge_modifier=reading.tone_modifier.value if reading.tone_modifier else None,
            crisis_open=reading.crisis_open,
            as_of=reading.at,
            last_updated=StateTimesOut(
                trust=stored.trust_at,
                sentiment=stored.sentiment_at,
                grudge=stored.grudge_at,
                familiarity=stored.familiarity_at,
            ),
            profile=ProfileOut.model_validate(profile.model_dump()) if profile else None,
        )


class StateEventOut(BaseModel):
    id: str
    type: str
    note: str | None
    at: datetime
    before: dict[str, float]
    after: dict[str, float]

    @classmethod
    def of(cls, record: StateEventRecord) -> StateEventOut:
        return cls(
            id=record.id,
            type=record.type.value,
            note=record.note,
            at=record.at,
            before={k: round(v, 6) for k, v in record.before.items()},
            after={k: round(v, 6) for k, v in record.after.items()},
        )


class PersonFactOut(BaseModel):
    text: str
    at: datetime
    sentiment: float

    @classmethod
    def of(cls, fact: PersonFact) -> PersonFactOut:
        return cls(text=fact.text, at=fact.at, sentiment=fact.sentiment)


class PersonOut(BaseModel):
    slug: str
    name: str | None
    role: str | None
    sentiment: float
    sentiment_label: str
    mention_count: int
    first_mentioned: datetime
    last_mentioned: datetime
    facts: list[PersonFactOut]

    @classmethod
    def of(cls, person: Person) -> PersonOut:
        return cls(
            slug=person.slug,
            name=person.name,
            role=person.role,
            sentiment=round(person.sentiment, 4),
            sentiment_label=person.sentiment_label.value,
            mention_count=person.mention_count,
            first_mentioned=person.first_mentioned,
            last_mentioned=person.last_mentioned,
            facts=[PersonFactOut.of(f) for f in person.facts],
        )


class StateEventPageOut(BaseModel):
    events: list[StateEventOut]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last.")


class StateEventReportedOut(BaseModel):
    event: StateEventOut
    replayed: bool = Field(description="True when this Idempotency-Key was seen before: the event counted once.")
    state: StateOut


class PeoplePageOut(BaseModel):
    people: list[PersonOut]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last.")
