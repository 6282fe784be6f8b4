"""Updates of fact in the forms people use: the old fact is invalidated with the user's reason and kept as history,
through the whole pipeline (rule-based model, SQLite, the embedded index)."""

from __future__ import annotations

from typing import Any

import pytest

from rapport.composition.services import Services
from rapport.domain.models import Domain, DomainFilter, Memory, MemoryStatus
from rapport.domain.recall import RecallQuery
from rapport.domain.relations import RelationType
from rapport.domain.scope import Scope
from rapport.services.interactions import NewInteraction, RecordedInteraction
from rapport.services.memories import NewMemory

pytestmark = pytest.mark.integration

T, U = "tenant-a", "user-1"
SCOPE = Scope(T, U)


def record(services: Services, *user_says: str) -> RecordedInteraction:
    messages: list[dict[str, Any]] = []
    for text in user_says:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "Good to know."}]
    return services.interactions.record(SCOPE, NewInteraction.model_validate({"messages": messages}))


def stored(recorded: RecordedInteraction) -> dict[str, Memory]:
    assert recorded.pipeline is not None and recorded.pipeline.status == "completed", recorded.pipeline
    return {m.content: m for m in recorded.pipeline.memories}


def assert_ended(services: Services, old: Memory, new: Memory, said: str) -> None:
    """`old` is history now: invalidated by `new`, the user's words as the reason, on the memory and on the edge."""
    kept = services.memories.get(SCOPE, old.id)
    assert kept.status is MemoryStatus.INVALIDATED and kept.content == old.content
    assert kept.metadata["invalidated_by"] == new.id
    assert said in kept.metadata["invalidated_reason"]
    edge = services.edges.get(SCOPE, old.id, RelationType.INVALIDATED_BY, new.id)
    assert edge is not None and said in edge.properties["reason"]


@pytest.mark.parametrize(
    "update",
    [
        "I moved from Berlin to Lisbon last month.",
        "We relocated from Berlin to Lisbon in the spring.",
        "Big news: I've just moved to Lisbon from Berlin!",
        "I finally moved away from Berlin to Lisbon, best decision ever.",
    ],
)
def test_a_move_invalidates_the_old_city_and_keeps_it_as_history(services: Services, update: str) -> None:
    berlin = stored(record(services, "I live in Berlin with my partner."))["User lives in Berlin"]

    moved = record(services, update)
    lisbon = stored(moved)["User lives in Lisbon"]

    assert moved.pipeline is not None and moved.pipeline.outcome is not None
    assert moved.pipeline.outcome.invalidated == [berlin.id]
    assert_ended(services, berlin, lisbon, update)
    assert lisbon.status is MemoryStatus.ACTIVE
    # Recall answers with what is true now; the old city stays readable as history.
    hits = services.recall.recall(SCOPE, RecallQuery(query="where does the user live", domain=DomainFilter.USER))
    ids = [h.memory.id for h in hits]
    assert lisbon.id in ids and berlin.id not in ids


@pytest.mark.parametrize(
    ("update", "now"),
    [
        ("I left Acme to join Globex in March.", "User works at Globex"),
        ("I switched jobs from Acme to Globex.", "User works at Globex"),
        ("These days I work for Globex.", "User works at Globex"),
        ("Nowadays I'm working at Globex, it's a good team.", "User works at Globex"),
        ("I left Acme for Globex last year.", "User left Acme for Globex"),
    ],
)
def test_a_change_of_employer_ends_the_old_one(services: Services, update: str, now: str) -> None:
    acme = stored(record(services, "I work at Acme as a backend engineer."))["User works at Acme"]

    new = stored(record(services, update))[now]

    kept = services.memories.get(SCOPE, acme.id)
    assert kept.status is MemoryStatus.INVALIDATED and kept.metadata["invalidated_by"] == new.id
    assert services.edges.get(SCOPE, acme.id, RelationType.INVALIDATED_BY, new.id) is not None


def test_an_update_without_a_slot_takes_over_the_slot_it_ended(services: Services) -> None:
    # Given "left Acme for Globex" ended the employer fact
    stored(record(services, "I work at Acme."))
    left = stored(record(services, "I left Acme for Globex."))["User left Acme for Globex"]
    # When the user names an employer again, it is the update that gets replaced
    initech = stored(record(services, "I work at Initech now."))["User works at Initech"]
    kept = services.memories.get(SCOPE, left.id)
    assert kept.status is MemoryStatus.INVALIDATED and kept.metadata["invalidated_by"] == initech.id


@pytest.mark.parametrize(
    "update",
    ["I no longer work at Acme.", "I don't work at Acme anymore.", "I'm not at Acme any more, taking a break."],
)
def test_no_longer_ends_the_fact_it_names(services: Services, update: str) -> None:
    acme = stored(record(services, "I work at Acme."))["User works at Acme"]

    ended = stored(record(services, update))["User no longer works at Acme"]

    assert_ended(services, acme, ended, "Acme")


def test_no_longer_about_an_old_value_leaves_the_current_one_alone(services: Services) -> None:
    # Given the user moved on from Acme to Globex already
    stored(record(services, "I work at Acme."))
    globex = stored(record(services, "Actually I work at Globex now."))["User works at Globex"]
    # When they later mention that they no longer work at Acme
    stored(record(services, "I no longer work at Acme, by the way."))
    # Then Globex is still where they work
    assert services.memories.get(SCOPE, globex.id).status is MemoryStatus.ACTIVE


@pytest.mark.parametrize(
    ("before", "update", "after"),
    [
        (
            "I use VS Code for everything.",
            "I switched from VS Code to Vim last week.",
            "User switched from VS Code to Vim",
        ),
        ("I like to drink coffee in the morning.", "I gave up coffee because of my sleep.", "User gave up coffee"),
        ("I enjoy playing tennis on weekends.", "I don't play tennis anymore.", "User no longer plays tennis"),
        ("I enjoy using Slack for team chat.", "I stopped using Slack at work.", "User stopped using Slack"),
    ],
)
def test_a_changed_habit_or_tool_ends_the_preference_it_names(
    services: Services, before: str, update: str, after: str
) -> None:
    earlier = list(stored(record(services, before)).values())
    assert earlier, f"nothing stored from {before!r}"

    new = stored(record(services, update))[after]

    for old in earlier:
        kept = services.memories.get(SCOPE, old.id)
        assert kept.status is MemoryStatus.INVALIDATED and kept.metadata["invalidated_by"] == new.id


def test_a_move_does_not_end_where_the_user_comes_from(services: Services) -> None:
    origin = stored(record(services, "I'm originally from Berlin."))["User is from Berlin"]
    stored(record(services, "I left Berlin for Lisbon in May."))
    assert services.memories.get(SCOPE, origin.id).status is MemoryStatus.ACTIVE


def test_an_update_naming_the_old_value_ends_a_fact_stored_through_the_api(services: Services) -> None:
    # Given a preference the tenant stored itself: no slot, no pipeline
    tool = services.memories.remember(
        SCOPE, NewMemory(content="User uses VS Code for Python", domain=Domain.USER, type="preference")
    )
    # When the user says they switched away from it
    new = stored(record(services, "I switched from VS Code to PyCharm this spring."))[
        "User switched from VS Code to PyCharm"
    ]
    kept = services.memories.get(SCOPE, tool.id)
    assert kept.status is MemoryStatus.INVALIDATED and kept.metadata["invalidated_by"] == new.id


def test_an_event_is_history_an_update_never_ends(services: Services) -> None:
    trip = services.memories.remember(
        SCOPE, NewMemory(content="User visited Berlin for a conference", domain=Domain.USER, type="event")
    )
    stored(record(services, "I left Berlin for Lisbon."))
    assert services.memories.get(SCOPE, trip.id).status is MemoryStatus.ACTIVE
