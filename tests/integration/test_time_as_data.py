"""Time as data (docs/recall.md): what a message says with "yesterday" or "last week" is stored as the dates it
means, kept through every store, and found by a question that names those dates."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest
from moto import mock_aws

from rapport.adapters.dynamodb.store import DynamoDbMemoryStore
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.filtering import Verdict
from rapport.domain.models import DateSpan, Domain, Granularity, Memory
from rapport.domain.recall import RecallQuery
from rapport.domain.scope import Scope
from rapport.pipeline.placement import Placer
from rapport.pipeline.slots import SlotRepository
from rapport.ports.pipeline import Candidate, Judged
from rapport.services.interactions import NewInteraction
from rapport.settings import RecallTimeWeights, Settings
from tests.integration.test_person_keys_dynamodb import Aws, services_over

pytestmark = pytest.mark.integration

T, U = "tenant-a", "user-1"
SAID = datetime(2024, 10, 16, 18, 30, tzinfo=UTC)  # a Wednesday
KITTEN = "We adopted a kitten yesterday, she is tiny and loud."
KITCHEN = "My brother and I repainted the kitchen last week."
OTHER = [
    "I love the smell of fresh coffee in the morning.",
    "The kids keep asking for a trampoline.",
    "Work has been busy with the quarterly report.",
    "We should try that new ramen place.",
]


def talk(services: Services, scope: Scope = Scope(T, U)) -> list[Memory]:
    messages = [{"role": "user", "content": text} for text in [KITTEN, *OTHER[:2], KITCHEN, *OTHER[2:]]]
    recorded = services.interactions.record(
        scope, NewInteraction.model_validate({"messages": messages, "session_id": "s-1", "occurred_at": SAID})
    )
    return recorded.episodes


def test_an_episode_keeps_the_dates_its_words_mean(services: Services) -> None:
    episodes = {e.content: e for e in talk(services)}
    assert episodes[KITTEN].mentioned_dates == [
        DateSpan(phrase="yesterday", start=date(2024, 10, 15), end=date(2024, 10, 15), granularity=Granularity.DAY)
    ]
    assert [(s.start, s.end) for s in episodes[KITCHEN].mentioned_dates] == [(date(2024, 10, 7), date(2024, 10, 13))]
    assert all(episodes[text].mentioned_dates == [] for text in OTHER)
    # read back from the (sealed) store as written
    stored = {m.content: m for m in services.store.get_memories(Scope(T, U), [e.id for e in episodes.values()])}
    assert stored[KITTEN].mentioned_dates == episodes[KITTEN].mentioned_dates


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did we do on 15 October 2024?", KITTEN),
        ("What happened on October 15th, 2024?", KITTEN),
        ("What did I do with my brother on 9 October 2024?", KITCHEN),
    ],
)
def test_a_question_naming_the_absolute_date_finds_the_relative_wording(
    services: Services, query: str, expected: str
) -> None:
    talk(services)
    hits = services.recall.recall(Scope(T, U), RecallQuery(query=query, limit=3))
    assert hits[0].memory.content == expected


@pytest.mark.parametrize(("weight", "first"), [(0.0, "We have a tiny loud kitten."), (0.2, KITTEN)])
def test_a_when_question_ranks_the_message_that_says_when_first_and_says_why(
    settings: Settings, clock: FixedClock, services: Services, weight: float, first: str
) -> None:
    # Given two messages about the kitten said the same day, the closer in words not saying when; 0.2 the default
    timed = build_services(
        settings.model_copy(update={"recall_time": RecallTimeWeights(in_range=weight, dated=weight)}),
        clock=clock,
        store=services.store,
        index=services.index,
        embedder=services.embedder,
    )
    talk(timed)
    timed.interactions.record(
        Scope(T, U),
        NewInteraction.model_validate(
            {
                "messages": [{"role": "user", "content": "We have a tiny loud kitten."}],
                "occurred_at": SAID,
            }
        ),
    )
    # When asked when, the message that says when comes first with the time rules on, and says why
    hits = timed.recall.recall(Scope(T, U), RecallQuery(query="When did we adopt the tiny loud kitten?", limit=3))
    assert hits[0].memory.content == first
    dated = next(h for h in hits if h.memory.content == KITTEN)
    assert ("its dates fit the question" in dated.match_reasons) is (weight > 0)


def test_every_store_round_trips_the_dates_and_an_old_memory_reads_without_them(
    any_store: DynamoDbMemoryStore | SqliteMemoryStore,
) -> None:
    span = DateSpan(phrase="last year", start=date(2023, 1, 1), end=date(2023, 12, 31), granularity=Granularity.YEAR)
    made = {
        "id": "m-1",
        "tenant_id": T,
        "user_id": U,
        "domain": Domain.USER,
        "type": "event",
        "content": "Ran a marathon last year",
        "created_at": SAID,
        "updated_at": SAID,
        "last_reinforced_at": SAID,
    }
    any_store.put_memory(Memory.model_validate({**made, "mentioned_dates": [span]}))
    any_store.put_memory(Memory.model_validate({**made, "id": "m-2"}))
    found = {m.id: m for m in any_store.get_memories(Scope(T, U), ["m-1", "m-2"])}
    assert found["m-1"].mentioned_dates == [span]
    assert found["m-2"].mentioned_dates == []


@pytest.fixture
def sealed_table() -> Iterator[Aws]:
    with mock_aws():
        yield Aws()


def test_on_dynamodb_the_dates_are_sealed_with_the_words_they_quote(
    sealed_table: Aws, settings: Settings, clock: object
) -> None:
    aws = sealed_table
    services = services_over(settings, clock, aws.store(aws.keyring()))
    episodes = talk(services)
    kitten = next(e for e in episodes if e.content == KITTEN)
    items = aws.items_of(Scope(T, U))
    wire = next(i for i in items if i.get("id", {}).get("S") == kitten.id)
    sealed = wire["source"]["M"]["mentioned_dates"]
    assert set(sealed) == {"S"} and "yesterday" not in sealed["S"]
    assert services.store.get_memories(Scope(T, U), [kitten.id])[0].mentioned_dates == kitten.mentioned_dates


def test_an_export_carries_the_dates_and_an_import_brings_them_back(services: Services) -> None:
    scope = Scope(T, U)
    kitten = next(e for e in talk(services) if e.content == KITTEN)
    page = services.user_export.page(scope, None)
    assert page.next_cursor is None
    lines = [json.loads(line) for line in page.ndjson().splitlines()]
    exported = next(line for line in lines if line.get("id") == kitten.id)
    assert exported["mentioned_dates"] == [
        {"phrase": "yesterday", "start": "2024-10-15", "end": "2024-10-15", "granularity": "day"}
    ]
    services.privacy.erase_user(scope, actor="test")
    assert services.user_import.import_text(scope, page.ndjson()).errors == []
    assert services.store.get_memory(scope, kitten.id).mentioned_dates == kitten.mentioned_dates


@pytest.mark.parametrize(
    ("memory_type", "content", "phrases"),
    [
        ("event", "Went to a pottery class", ["yesterday"]),  # the extracted words dropped the phrase
        ("event", "Moved to Lisbon in 2019", ["in 2019"]),  # its own words name a date
        ("fact", "Likes pottery", []),  # a fact is not dated by the message it was read from
    ],
)
def test_an_extracted_memory_takes_the_dates_of_its_words_or_an_events_message(
    services: Services, memory_type: str, content: str, phrases: list[str]
) -> None:
    interaction = services.interactions.record(
        Scope(T, U),
        NewInteraction.model_validate(
            {"messages": [{"role": "user", "content": "I went to a pottery class yesterday."}], "occurred_at": SAID}
        ),
    ).interaction
    placer = Placer(
        store=services.store,
        index=services.index,
        slots=SlotRepository(services.items),
        memories=services.memories,
        clock=services.clock,
        settings=services.settings,
    )
    candidate = Candidate(
        domain=Domain.USER, type=memory_type, content=content, importance=0.6, confidence=0.9, evidence=[0]
    )
    judged = Judged(
        decision_id="d-1",
        candidate=candidate,
        verdict=Verdict.ALLOWED,
        reason="test",
        content=content,
        decided_by="rules",
        extractor="rules",
    )
    assert [span.phrase for span in placer.build(interaction, judged).mentioned_dates] == phrases
