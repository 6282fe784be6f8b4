"""State, profile, people and events persist the same way on both item stores (DynamoDB under moto, SQLite)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from unittest.mock import patch

import pytest

from rapport.adapters.local.vader import RuleSignalDetector, VaderSentimentScorer
from rapport.clock import FixedClock
from rapport.domain.models import Interaction, Message, MessageRole
from rapport.domain.relational_state import RelationalEvent
from rapport.domain.scope import Scope
from rapport.domain.signals import to_metadata
from rapport.errors import ConflictError, InvalidInputError, StorageError
from rapport.ids import new_id
from rapport.ports.items import ItemStore
from rapport.services.people import PeopleService
from rapport.services.profiles import ProfileService
from rapport.services.relational_state import RelationalStateService
from rapport.services.signals import SignalService
from rapport.settings import Settings

pytestmark = pytest.mark.integration


def _interaction(clock: FixedClock, text: str, signals: SignalService) -> Interaction:
    now = clock.now()
    interaction = Interaction(
        id=new_id(now),
        tenant_id="tenant-a",
        user_id="dana",
        messages=[Message(role=MessageRole.USER, content=text)],
        occurred_at=now,
        created_at=now,
    )
    interaction.metadata = to_metadata(signals.detect_messages(interaction.messages))
    return interaction


def test_relational_items_on_each_store(any_store: ItemStore, settings: Settings, clock: FixedClock) -> None:
    signals = SignalService(RuleSignalDetector())
    state = RelationalStateService(any_store, settings, clock)
    profiles = ProfileService(any_store, settings, clock)
    people = PeopleService(any_store, VaderSentimentScorer(), settings, clock)

    for text in ("You ignored my boss Sarah again, ridiculous!!", "My mom called."):
        interaction = _interaction(clock, text, signals)
        for listener in (state.record_interaction, profiles.record_interaction, people.record_interaction):
            listener(interaction)
    clock.advance(timedelta(hours=12))

    reading = state.read(Scope("tenant-a", "dana"))
    assert reading.trust == pytest.approx(0.52) and reading.familiarity == pytest.approx(0.01)
    assert reading.grudge == pytest.approx(0.15 / 2)  # anger with shouting, one half-life ago
    profile = profiles.get(Scope("tenant-a", "dana"))
    assert profile is not None and profile.interaction_count == 2
    assert [p.slug for p in people.list_people(Scope("tenant-a", "dana"), limit=10, cursor=None).items] == [
        "mother",
        "sarah",
    ]

    record, after, replayed = state.report_event(
        Scope("tenant-a", "dana"), RelationalEvent.BROKEN_PROMISE, "late", idempotency_key="retry-me"
    )
    assert after.trust == pytest.approx(0.47) and record.note == "late" and not replayed
    # The client retries after a timeout with the same key: the first record comes back, trust falls once
    again, after_again, replayed = state.report_event(
        Scope("tenant-a", "dana"), RelationalEvent.BROKEN_PROMISE, "late", idempotency_key="retry-me"
    )
    assert replayed and again == record and after_again.trust == pytest.approx(0.47)
    assert [e.id for e in state.events(Scope("tenant-a", "dana"), limit=5, cursor=None).items] == [record.id]
    with pytest.raises(ConflictError):  # the same key for another event is a client bug, not a retry
        state.report_event(Scope("tenant-a", "dana"), RelationalEvent.PROMISE_KEPT, idempotency_key="retry-me")
    # Another tenant sees nothing.
    assert state.read(Scope("tenant-b", "dana")).trust == 0.5 and profiles.get(Scope("tenant-b", "dana")) is None


def test_a_retry_after_a_failed_record_write_does_not_apply_the_event_twice(
    any_store: ItemStore, settings: Settings, clock: FixedClock
) -> None:
    state = RelationalStateService(any_store, settings, clock)
    real_put = any_store.put_item
    calls = {"events": 0}

    def put_failing_once(scope: Any, kind: str, key: str, body: Any, **options: Any) -> Any:
        if kind == "STATE_EVENT":
            calls["events"] += 1
            if calls["events"] == 1:
                raise StorageError("the table throttled the event record")
        return real_put(scope, kind, key, body, **options)

    # Given: the state was written but the event's record was not (the request failed, the client will retry)
    with patch.object(any_store, "put_item", put_failing_once), pytest.raises(StorageError):
        state.report_event(Scope("tenant-a", "dana"), RelationalEvent.BROKEN_PROMISE, idempotency_key="k-1")
    assert state.read(Scope("tenant-a", "dana")).trust == pytest.approx(0.45)  # applied once, from 0.5

    # When: the client retries with the same key
    record, after, replayed = state.report_event(
        Scope("tenant-a", "dana"), RelationalEvent.BROKEN_PROMISE, idempotency_key="k-1"
    )

    # Then: the record is written now, and trust fell once, not twice
    assert not replayed and after.trust == pytest.approx(0.45)
    assert [e.id for e in state.events(Scope("tenant-a", "dana"), limit=5, cursor=None).items] == [record.id]
    with pytest.raises(InvalidInputError):
        state.report_event(Scope("tenant-a", "dana"), RelationalEvent.BROKEN_PROMISE, idempotency_key=" ")
