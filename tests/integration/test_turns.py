"""A turn is recorded once, whatever happens to the replies sent for it: at the same time, after a failure, after a
request that died half way."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from rapport.composition.services import Services
from rapport.domain.models import Domain, Message, MessageRole
from rapport.domain.scope import Scope
from rapport.errors import ConflictError, IdempotencyKeyReusedError, NotFoundError
from rapport.ports.items import ItemScope
from rapport.services.idempotency import KeyedRequest
from rapport.services.interactions import InteractionService, NewInteraction
from rapport.services.memories import NewMemory
from rapport.services.turns import TURN_KIND, Turn, TurnStatus
from tests.integration.test_write_path import dynamodb_services

S = Scope("tenant-a", "dana")
REPLY = "Congratulations! What will you miss about the old team?"


def begin(services: Services) -> Turn:
    return services.turns.begin(S, "I start a new job on Monday", enrichment={}, channel="web", session_id="s1")


def history(services: Services) -> list[Any]:
    return services.interactions.history(S, limit=10, cursor=None).items


@pytest.fixture(params=["sqlite", "dynamodb"])
def any_services(request: pytest.FixtureRequest, services: Services) -> Services:
    if request.param == "sqlite":
        return services
    return dynamodb_services(
        request.getfixturevalue("settings"), request.getfixturevalue("clock"), request.getfixturevalue("moto_dynamodb")
    )


def test_a_reply_records_the_turn_as_its_interaction_once(any_services: Services) -> None:
    turn = begin(any_services)
    assert history(any_services) == []
    first = any_services.turns.reply(S, turn.id, REPLY)
    assert not first.replayed and first.recorded.interaction.id == turn.id
    assert [m.content for m in first.recorded.interaction.messages] == ["I start a new job on Monday", REPLY]
    again = any_services.turns.reply(S, turn.id, REPLY)
    assert again.replayed and again.recorded.interaction.id == turn.id
    with pytest.raises(ConflictError):
        any_services.turns.reply(S, turn.id, "another answer")
    with pytest.raises(NotFoundError):
        any_services.turns.reply(Scope("tenant-b", "dana"), turn.id, REPLY)
    assert [i.id for i in history(any_services)] == [turn.id]
    assert any_services.profiles.get(S).interaction_count == 1  # type: ignore[union-attr]


def test_simultaneous_replies_record_one_interaction(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    turn = begin(services)
    inside = threading.Event()
    release = threading.Event()
    original = InteractionService.record

    def slow(self: InteractionService, *args: Any, **kwargs: Any) -> Any:
        inside.set()
        release.wait(timeout=10)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(InteractionService, "record", slow)

    def second() -> Any:
        inside.wait(timeout=10)
        try:
            return services.turns.reply(S, turn.id, REPLY)
        finally:
            release.set()

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = [pool.submit(services.turns.reply, S, turn.id, REPLY), pool.submit(second)]
        outcomes = []
        for future in results:
            try:
                outcomes.append(future.result())
            except ConflictError as error:
                outcomes.append(error)
    assert sum(isinstance(o, ConflictError) for o in outcomes) == 1
    assert [i.id for i in history(services)] == [turn.id]
    # The one that was told to wait, retrying, gets the recorded turn as a replay
    assert services.turns.reply(S, turn.id, REPLY).replayed


def test_a_reply_that_fails_to_record_leaves_the_turn_awaiting_it(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn = begin(services)

    def boom(*_: Any, **__: Any) -> Any:
        raise RuntimeError("store down")

    monkeypatch.setattr(InteractionService, "record", boom)
    with pytest.raises(RuntimeError):
        services.turns.reply(S, turn.id, REPLY)
    monkeypatch.undo()
    stored = services.items.get_item(ItemScope.of_user(S), TURN_KIND, turn.id)
    assert stored is not None and Turn.model_validate(stored.body).status is TurnStatus.AWAITING_REPLY
    assert history(services) == []
    assert not services.turns.reply(S, turn.id, REPLY).replayed
    assert len(history(services)) == 1


def test_a_reply_whose_request_died_after_recording_is_closed_by_its_retry(services: Services, clock: Any) -> None:
    turn = begin(services)
    # A first reply claimed the turn and recorded the interaction, then its process died before closing the turn
    scope = ItemScope.of_user(S)
    stored = services.items.get_item(scope, TURN_KIND, turn.id)
    assert stored is not None
    claimed = turn.model_copy(update={"status": TurnStatus.RECORDING, "reply": REPLY, "claimed_at": clock.now()})
    services.items.put_item(
        scope, TURN_KIND, turn.id, claimed.model_dump(mode="json"), now=clock.now(), expected_version=stored.version
    )
    messages = [
        Message(role=MessageRole.USER, content=turn.message),
        Message(role=MessageRole.ASSISTANT, content=REPLY),
    ]
    services.interactions.record(S, NewInteraction(messages=messages), interaction_id=turn.id)  # it got through
    # Within the claim's lease a retry is told to wait; after it, the retry closes the turn without a second record
    with pytest.raises(ConflictError):
        services.turns.reply(S, turn.id, REPLY)
    clock.advance(timedelta(minutes=6))
    retried = services.turns.reply(S, turn.id, REPLY)
    assert retried.replayed and [i.id for i in history(services)] == [turn.id]
    assert services.profiles.get(S).interaction_count == 1  # type: ignore[union-attr]


def test_a_keyed_process_retry_answers_the_same_turn_and_stores_nothing_twice(any_services: Services) -> None:
    remembered = any_services.memories.remember(S, NewMemory(content="Works at a bakery", domain=Domain.USER))
    keyed = KeyedRequest(route="process", key="k-1", request={"user_id": "dana", "message": "I quit the bakery"})
    first = any_services.process.process(S, "I quit the bakery", keyed=keyed)
    strength = any_services.memories.get(S, remembered.id).strength
    again = any_services.process.process(S, "I quit the bakery", keyed=keyed)
    assert (first.replayed, again.replayed) == (False, True)
    assert again.turn_id == first.turn_id and again.turn_status is TurnStatus.AWAITING_REPLY
    assert any_services.memories.get(S, remembered.id).strength == strength  # reinforced once
    # The reply then records that one turn, and a further retry answers it recorded
    any_services.turns.reply(S, first.turn_id, REPLY)
    third = any_services.process.process(S, "I quit the bakery", keyed=keyed)
    assert third.turn_status is TurnStatus.RECORDED and third.interaction is not None
    assert [i.id for i in history(any_services)] == [first.turn_id]
    with pytest.raises(IdempotencyKeyReusedError):
        other = KeyedRequest(route="process", key="k-1", request={"user_id": "dana", "message": "something else"})
        any_services.process.process(S, "something else", keyed=other)
