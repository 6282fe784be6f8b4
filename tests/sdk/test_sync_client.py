"""`Rapport` (the blocking client) against a real `rapport serve`."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from rapport_client import InvalidRequest, NotFound, Rapport, Unauthorized, UnprocessableEntity
from rapport_client.models import Interaction, RecallHit
from tests.e2e.conftest import RunningServer
from tests.sdk.conftest import API_KEY, OTHER_KEY


@pytest.fixture
def client(rapport_server: RunningServer) -> Iterator[Rapport]:
    with Rapport(rapport_server.base_url, API_KEY, max_retries=0) as client:
        yield client


@pytest.fixture
def user() -> str:
    """A fresh end user per test, so tests sharing the module's server do not see each other's memories."""
    return f"user-{uuid.uuid4().hex[:12]}"


def test_a_memory_is_added_found_read_changed_and_deleted(client: Rapport, user: str) -> None:
    dog = client.memories.add(user, "Has a dog named Max", type="fact", importance=0.8, metadata={"src": "sdk"})
    client.memories.add(
        user, "Bullet points work better than long paragraphs", domain="relational", type="communication_preference"
    )
    assert (dog.user_id, dog.domain, dog.importance, dog.metadata) == (user, "user", 0.8, {"src": "sdk"})

    found = client.memories.search(user, "what is the dog called", domain="user", limit=3)
    assert found.total_stored == 2
    assert [hit.id for hit in found.memories] == [dog.id]
    assert isinstance(found.memories[0], RecallHit)
    assert found.memories[0].similarity > 0

    assert client.memories.get(user, dog.id).content == "Has a dog named Max"
    changed = client.memories.update(user, dog.id, content="Has a dog named Maximus", importance=0.9)
    assert (changed.content, changed.importance) == ("Has a dog named Maximus", 0.9)
    assert client.memories.get(user, dog.id).content == "Has a dog named Maximus"

    client.memories.delete(user, dog.id)
    with pytest.raises(NotFound) as raised:
        client.memories.get(user, dog.id)
    assert raised.value.status == 404
    assert raised.value.error == "not_found"


def test_list_follows_next_cursor_page_by_page(rapport_server: RunningServer, user: str) -> None:
    pages_fetched: list[str] = []
    http = httpx.Client(event_hooks={"request": [lambda request: pages_fetched.append(str(request.url))]})
    with Rapport(rapport_server.base_url, API_KEY, http_client=http) as client:
        added = [client.memories.add(user, f"Memory number {n} about gardening") for n in range(5)]
        pages_fetched.clear()

        listed = client.memories.list(user, page_size=2)
        assert pages_fetched == []  # lazy: nothing fetched before the first item is asked for
        ids = [m.id for m in listed]

    assert sorted(ids) == sorted(m.id for m in added)
    assert len(ids) == len(set(ids)) == 5
    assert len(pages_fetched) == 3  # 2 + 2 + 1
    assert "cursor=" not in pages_fetched[0] and all("cursor=" in url for url in pages_fetched[1:])
    http.close()


def test_add_many_answers_per_item_and_refuses_a_batch_with_nothing_valid(client: Rapport, user: str) -> None:
    batch = client.memories.add_many(
        user,
        [
            {"content": "Lives in Lisbon"},
            {"content": "   "},
            {"content": "Prefers short answers", "domain": "relational", "type": "communication_preference"},
        ],
    )

    assert (batch.created, batch.invalid) == (2, 1)
    assert [r.status for r in batch.results] == ["created", "invalid", "created"]
    bad = batch.results[1]
    assert bad.index == 1 and bad.memory is None and bad.message and "content" in bad.message
    assert batch.results[2].memory is not None and batch.results[2].memory.domain == "relational"
    assert {m.content for m in client.memories.list(user)} == {"Lives in Lisbon", "Prefers short answers"}

    with pytest.raises(InvalidRequest) as raised:
        client.memories.add_many(user, [{"content": ""}])
    assert raised.value.details[0]["status"] == "invalid"


def test_record_then_read_history_and_the_pipeline_status(client: Rapport, user: str) -> None:
    recorded = client.interactions.record(
        user,
        [
            {"role": "user", "content": "I love hiking with my sister Anna"},
            {"role": "assistant", "content": "That sounds lovely"},
        ],
        channel="sdk-test",
        session_id="s-1",
        metadata={"ticket": 7},
    )
    assert recorded.interaction.user_id == user
    assert [m.role for m in recorded.interaction.messages] == ["user", "assistant"]
    assert recorded.pipeline is not None and recorded.pipeline.status == "completed"
    assert recorded.pipeline.stored

    history = list(client.interactions.history(user))
    assert [i.id for i in history] == [recorded.interaction.id]
    assert history[0].channel == "sdk-test"

    status = client.interactions.get(user, recorded.interaction.id)
    assert status.interaction.id == recorded.interaction.id
    assert status.pipeline is not None and status.pipeline.status == "done"
    assert set(status.pipeline.stored) == set(recorded.pipeline.stored)


def test_process_gives_the_context_and_opens_a_turn(client: Rapport, user: str) -> None:
    client.memories.add(user, "Works as a nurse on night shifts")

    processed = client.process(user, "I am so tired after my night shift at the hospital", channel="sdk-test")

    assert processed.reply is None  # the test server has no language model
    assert processed.memory.total_stored >= 1
    assert "nurse" in processed.context.system_prompt
    assert 0.0 <= processed.user.trust <= 1.0
    assert processed.safety.crisis is False
    assert processed.turn_id and processed.turn_status == "awaiting_reply"


def test_turn_calls_the_reply_model_and_records_the_exchange(client: Rapport, user: str) -> None:
    prompts: list[tuple[str, str]] = []

    def my_model(system_prompt: str, message: str) -> str:
        prompts.append((system_prompt, message))
        return "Have you tried a checklist for the move?"

    result = client.turn(user, "I am moving to Porto next month and it is stressful", reply=my_model)

    assert prompts and prompts[0][1] == "I am moving to Porto next month and it is stressful"
    assert prompts[0][0] == result.process.context.system_prompt
    assert (result.reply, result.replied_by) == ("Have you tried a checklist for the move?", "client")
    assert isinstance(result.interaction, Interaction)
    assert [m.content for m in result.interaction.messages] == [
        "I am moving to Porto next month and it is stressful",
        "Have you tried a checklist for the move?",
    ]
    assert [i.id for i in client.interactions.history(user)] == [result.interaction.id]

    # The same reply sent again is the same record, not a second interaction
    assert result.process.turn_id is not None
    again = client.turns.reply(user, result.process.turn_id, "Have you tried a checklist for the move?")
    assert again.replayed is True and again.interaction.id == result.interaction.id


def test_errors_arrive_as_their_exceptions(rapport_server: RunningServer, client: Rapport, user: str) -> None:
    with pytest.raises(InvalidRequest) as empty:
        client.memories.add(user, "")
    assert (empty.value.status, empty.value.error) == (400, "invalid_input")
    assert "content" in empty.value.message

    with pytest.raises(UnprocessableEntity) as invalid:
        client.memories.add(user, "Likes tea", importance=2.0)
    assert invalid.value.status == 422 and invalid.value.details

    with pytest.raises(NotFound):
        client.memories.get(user, "01HZZZZZZZZZZZZZZZZZZZZZZZ")

    with Rapport(rapport_server.base_url, "not-a-key") as stranger, pytest.raises(Unauthorized) as unknown:
        stranger.memories.search(user, "tea")
    assert unknown.value.status == 401 and unknown.value.error == "unauthorized"


def test_another_tenant_cannot_read_the_memory(rapport_server: RunningServer, client: Rapport, user: str) -> None:
    memory = client.memories.add(user, "Allergic to peanuts")

    with Rapport(f"{rapport_server.base_url}/v1/", OTHER_KEY) as other, pytest.raises(NotFound):
        other.memories.get(user, memory.id)


def test_state_events_and_people(client: Rapport, user: str) -> None:
    client.interactions.record(user, [{"role": "user", "content": "My boss Sarah keeps moving deadlines, I hate it"}])

    before = client.state.get(user)
    reported = client.events.report(user, "broken_promise", "late reply", idempotency_key=f"{user}-late")
    again = client.events.report(user, "broken_promise", "late reply", idempotency_key=f"{user}-late")

    assert reported.replayed is False and again.replayed is True
    assert again.event.id == reported.event.id
    assert reported.state.trust < before.trust
    assert [e.id for e in client.events.list(user)] == [reported.event.id]
    people = {p.slug: p for p in client.people.list(user)}
    assert "sarah" in people and people["sarah"].mention_count == 1


def test_clear_history_erases_everything_about_the_user(client: Rapport, user: str) -> None:
    client.memories.add(user, "Has a dog named Max")
    client.interactions.record(user, [{"role": "user", "content": "We adopted a cat called Luna"}])

    erased = client.clear_history(user)

    assert erased.status == "erased" and erased.user_id == user
    assert erased.counts["memories"] >= 2 and erased.counts["interactions"] == 1
    assert list(client.memories.list(user)) == []
    assert list(client.interactions.history(user)) == []
    assert client.memories.search(user, "dog").total_stored == 0
    assert erased.audit_event_id in {e.id for e in client.audit.list()}


def test_a_time_phrase_comes_back_as_the_dates_it_names(client: Rapport, user: str) -> None:
    from datetime import UTC, date, datetime

    from rapport_client.models import DateSpan

    recorded = client.interactions.record(
        user,
        [{"role": "user", "content": "I went to the pottery class yesterday"}],
        occurred_at=datetime(2023, 5, 8, 18, 0, tzinfo=UTC),
    )
    (episode,) = [m for m in recorded.memories if m.source.message_index == 0]
    assert episode.mentioned_dates == [
        DateSpan(phrase="yesterday", start=date(2023, 5, 7), end=date(2023, 5, 7), granularity="day")
    ]

    (hit, *_) = client.memories.search(user, "pottery class", limit=3).memories
    assert hit.id == episode.id
    assert [(d.start, d.end) for d in hit.mentioned_dates] == [(date(2023, 5, 7), date(2023, 5, 7))]
