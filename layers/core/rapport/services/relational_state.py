"""The relational state of each end user: moved by interactions and reported events, read with decay applied.

Stored as one versioned item, so concurrent interactions never lose an update.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime

from pydantic import BaseModel, Field

from rapport.clock import Clock
from rapport.domain.models import Interaction, Page
from rapport.domain.relational_state import (
    RelationalEvent,
    RelationalState,
    StateReading,
    apply_event,
    apply_interaction,
    initial_state,
    read_state,
)
from rapport.domain.scope import Scope
from rapport.domain.signals import Signals, from_metadata
from rapport.errors import ConflictError, InvalidInputError
from rapport.ids import new_id
from rapport.ports.items import ItemRef, ItemScope, ItemStore, ItemWrite, relationship_query, relationship_ref
from rapport.services.assistants import AssistantDirectory
from rapport.services.versioned_items import ItemsRead, apply_alone, modify_model
from rapport.settings import Settings

STATE_KIND = "STATE"
EVENT_KIND = "STATE_EVENT"
EVENT_KEY_KIND = "STATE_EVENT_KEY"  # an idempotency key's digest -> the event it reported
APPLIED_KEYS_KEPT = 50  # how many recent keys the state itself remembers (a retry comes within minutes)
MAX_IDEMPOTENCY_KEY_CHARS = 255
# The default assistant's state key (`STATE`, no key): the one state a person had before assistants had names.
DEFAULT_AGENT = ""
MAX_NOTE_CHARS = 1_000


class StateEventRecord(BaseModel):
    """A reported event and what it did, kept as the relationship's own trail."""

    id: str
    type: RelationalEvent
    note: str | None = None
    at: datetime
    before: dict[str, float] = Field(default_factory=dict)
    after: dict[str, float] = Field(default_factory=dict)


class ReportedKey(BaseModel):
    """An idempotency key already used: the event it reported, and of which type."""

    event_id: str
    type: str


def state_ref(agent_id: str) -> ItemRef:
    """Where one assistant's state with a person is kept (`STATE` for the default assistant, as always)."""
    return relationship_ref(STATE_KIND, DEFAULT_AGENT, agent_id)


class RelationalStateRepository:
    """Per assistant of the tenant (`relationship_ref`): the state (`STATE`, one versioned item), the reported events
    (`STATE_EVENT`, keyed by their time-ordered id) and the idempotency keys they were reported with
    (`STATE_EVENT_KEY`, keyed by digest)."""

    def __init__(self, items: ItemStore) -> None:
        self._items = items

    def stored(self, scope: Scope) -> RelationalState | None:
        item = self._items.get_item(ItemScope.of_user(scope), *state_ref(scope.agent_id))
        return RelationalState.model_validate(item.body) if item else None

    def change(
        self,
        scope: Scope,
        change: Callable[[RelationalState | None], RelationalState],
        *,
        now: datetime,
        attempts: int,
    ) -> RelationalState:
        """Apply `change` to the stored state; a concurrent write makes it read again and re-apply."""
        kind, key = state_ref(scope.agent_id)
        return modify_model(
            self._items, ItemScope.of_user(scope), kind, key, RelationalState, change, now=now, attempts=attempts
        )

    def put_event(self, scope: Scope, record: StateEventRecord, *, now: datetime) -> None:
        kind, key = relationship_ref(EVENT_KIND, record.id, scope.agent_id)
        self._items.put_item(ItemScope.of_user(scope), kind, key, record.model_dump(mode="json"), now=now)

    def get_event(self, scope: Scope, event_id: str) -> StateEventRecord | None:
        item = self._items.get_item(ItemScope.of_user(scope), *relationship_ref(EVENT_KIND, event_id, scope.agent_id))
        return StateEventRecord.model_validate(item.body) if item is not None else None

    def events(self, scope: Scope, *, limit: int, cursor: str | None) -> Page[StateEventRecord]:
        """Newest first."""
        query = relationship_query(EVENT_KIND, scope.agent_id, limit=limit, cursor=cursor, descending=True)
        page = self._items.list_items(ItemScope.of_user(scope), query)
        return Page[StateEventRecord](
            items=[StateEventRecord.model_validate(i.body) for i in page.items], next_cursor=page.next_cursor
        )

    def put_key(self, scope: Scope, digest: str, reported: ReportedKey, *, now: datetime) -> None:
        kind, key = relationship_ref(EVENT_KEY_KIND, digest, scope.agent_id)
        self._items.put_item(ItemScope.of_user(scope), kind, key, reported.model_dump(mode="json"), now=now)

    def get_key(self, scope: Scope, digest: str) -> ReportedKey | None:
        item = self._items.get_item(ItemScope.of_user(scope), *relationship_ref(EVENT_KEY_KIND, digest, scope.agent_id))
        return ReportedKey.model_validate(item.body) if item is not None else None


def _key_digest(key: str) -> str:
    """What is stored of a client's idempotency key: its SHA-256 (the key may hold anything the client chose)."""
    if not key.strip() or len(key) > MAX_IDEMPOTENCY_KEY_CHARS:
        raise InvalidInputError(f"Idempotency-Key must hold 1 to {MAX_IDEMPOTENCY_KEY_CHARS} characters")
    return hashlib.sha256(key.encode()).hexdigest()


def parse_event(value: str) -> RelationalEvent:
    """The event type a client sent; an unknown one is a 400 that lists the known ones."""
    try:
        return RelationalEvent(value)
    except ValueError:
        known = ", ".join(e.value for e in RelationalEvent)
        raise InvalidInputError(f"unknown event type {value!r}; known types: {known}") from None


def interaction_time(interaction: Interaction) -> datetime:
    """When an interaction counts for the state: when it happened (imports of old talks decay as they should),
    never later than when it was recorded."""
    return min(interaction.occurred_at, interaction.created_at)


def _numbers(reading: StateReading) -> dict[str, float]:
    return {
        "trust": reading.trust,
        "sentiment": reading.sentiment,
        "grudge": reading.grudge,
        "familiarity": reading.familiarity,
    }


class RelationalStateService:
    def __init__(
        self, items: ItemStore, settings: Settings, clock: Clock, assistants: AssistantDirectory | None = None
    ) -> None:
        self._items = items
        self._assistants = assistants  # a named assistant reporting first registers it with its tenant
        self._states = RelationalStateRepository(items)
        self._policy = settings.relational
        self._settings = settings
        self._clock = clock

    def stored(self, scope: Scope) -> RelationalState:
        """The stored state (a new person's starting state when there is none); decay not applied."""
        return self._states.stored(scope) or initial_state(self._policy)

    def read(self, scope: Scope, at: datetime | None = None) -> StateReading:
        """The state now (or at `at`), decay applied. Never writes: reading cannot change what the next read says."""
        return read_state(self.stored(scope), at or self._clock.now(), self._policy)

    def preview(self, scope: Scope, signals: Signals, at: datetime) -> StateReading:
        """What the state would be after one interaction with these signals at `at`, without writing it."""
        updated = apply_interaction(self.stored(scope), signals.effect(), at, self._policy)
        return read_state(updated, at, self._policy)

    def _update(self, scope: Scope, change: Callable[[RelationalState], RelationalState]) -> RelationalState:
        return self._states.change(
            scope,
            lambda current: change(current or initial_state(self._policy)),
            now=self._clock.now(),
            attempts=self._policy.write_attempts,
        )

    def reads(self, interaction: Interaction) -> list[ItemRef]:
        """What `plan` builds on: the state item of the assistant that took part."""
        return [state_ref(interaction.agent_id)]

    def plan(self, interaction: Interaction, read: ItemsRead) -> list[ItemWrite]:
        """The state after the interaction, as a write of the state item: trust and familiarity grow, sentiment and
        grudge follow the signals the enricher stored (none stored: a neutral interaction)."""
        kind, key = state_ref(interaction.agent_id)
        item = read.get(kind, key)
        current = RelationalState.model_validate(item.body) if item else initial_state(self._policy)
        signals = from_metadata(interaction.metadata) or Signals()
        updated = apply_interaction(current, signals.effect(), interaction_time(interaction), self._policy)
        return [read.put(kind, key, updated.model_dump(mode="json"))]

    def record_interaction(self, interaction: Interaction) -> None:
        """`plan`, read and written on its own (the recorded interaction writes it with the history instead)."""
        apply_alone(self._items, self, interaction, now=self._clock.now(), attempts=self._policy.write_attempts)

    def report_event(
        self,
        scope: Scope,
        event: RelationalEvent,
        note: str | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[StateEventRecord, StateReading, bool]:
        """Applies the event and keeps its record; returns (record, state after, replayed). With an idempotency key,
        a report already made with that key is not applied again: its first record comes back with `replayed` true
        (and a 409 if the key was used for another event type). docs/relational-state.md."""
        if note is not None and len(note) > MAX_NOTE_CHARS:
            raise InvalidInputError(f"note has {len(note)} characters; the limit is {MAX_NOTE_CHARS}")
        digest = _key_digest(idempotency_key) if idempotency_key is not None else None
        if digest is not None:
            earlier = self._reported_with(scope, digest, event)
            if earlier is not None:
                return earlier, self.read(scope), True
        now = self._clock.now()
        before = self.read(scope, now)

        def change(current: RelationalState) -> RelationalState:
            if digest is None:
                return apply_event(current, event, now, self._policy)
            if digest in current.applied_event_keys:
                return current  # a retry after a crash between the state write and the record below
            applied = apply_event(current, event, now, self._policy)
            keys = (*current.applied_event_keys, digest)[-APPLIED_KEYS_KEPT:]
            return applied.model_copy(update={"applied_event_keys": keys})

        state = self._update(scope, change)
        after = read_state(state, now, self._policy)
        record = StateEventRecord(
            id=new_id(now), type=event, note=note, at=now, before=_numbers(before), after=_numbers(after)
        )
        self._states.put_event(scope, record, now=now)
        if digest is not None:
            self._states.put_key(scope, digest, ReportedKey(event_id=record.id, type=event.value), now=now)
        if self._assistants is not None:
            self._assistants.note(scope)
        return record, after, False

    def _reported_with(self, scope: Scope, digest: str, event: RelationalEvent) -> StateEventRecord | None:
        reported = self._states.get_key(scope, digest)
        if reported is None:
            return None
        if reported.type != event.value:
            raise ConflictError(
                f"this Idempotency-Key was used for a {reported.type} event; use a new key for a new event"
            )
        return self._states.get_event(scope, reported.event_id)

    def events(self, scope: Scope, *, limit: int, cursor: str | None) -> Page[StateEventRecord]:
        """Reported events, newest first."""
        if not 1 <= limit <= self._settings.max_page_size:
            raise InvalidInputError(f"limit must be between 1 and {self._settings.max_page_size}; got {limit}")
        return self._states.events(scope, limit=limit, cursor=cursor)
