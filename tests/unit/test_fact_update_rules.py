"""The rule-based extractor's updates of fact: what is true now, the value that stopped being true, and the user's
words for the change, across the forms people use."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rapport.domain.models import Interaction, Message, MessageRole
from rapport.domain.prompts import extract_user, payload
from rapport.domain.prompts.conversation import ConversationInput
from rapport.domain.rules.model import RulesLanguageModel

NOW = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def extracted(said: str, role: MessageRole = MessageRole.USER) -> dict[str, extract_user.ExtractedUserMemory]:
    interaction = Interaction(
        id="01KE6P4YM0NAQ24FSQ8YPPMFZB",
        tenant_id="t",
        user_id="u",
        messages=[Message(role=role, content=said)],
        occurred_at=NOW,
        created_at=NOW,
    )
    answer = RulesLanguageModel().structured(
        system=extract_user.SYSTEM,
        user=payload.render(extract_user.TASK, ConversationInput.of(interaction, 24_000)),
        response_model=extract_user.UserExtraction,
    )
    return {m.content: m for m in answer.memories}


@pytest.mark.parametrize(
    ("said", "now", "slot", "old"),
    [
        ("I moved from Berlin to Lisbon last month.", "User lives in Lisbon", "home_location", "Berlin"),
        ("we relocated from New York to Austin in June", "User lives in Austin", "home_location", "New York"),
        ("So I've moved to Porto from Madrid, finally!", "User lives in Porto", "home_location", "Madrid"),
        ("I left Acme to join Globex in March.", "User works at Globex", "employer", "Acme"),
        ("Last year I quit my job at Initech for a job at Hooli.", "User works at Hooli", "employer", "Initech"),
        ("I switched jobs from Acme to Globex.", "User works at Globex", "employer", "Acme"),
        (
            "I quit Initech in May, now working at a small agency called Hooli.",
            "User works at Hooli",
            "employer",
            "Initech",
        ),
        ("I left Acme last year and I'm now with Globex.", "User works at Globex", "employer", "Acme"),
        ("I left Acme for Globex.", "User left Acme for Globex", None, "Acme"),
        ("I switched from VS Code to Vim last week.", "User switched from VS Code to Vim", None, "VS Code"),
        ("We migrated from Postgres to MySQL because of licensing.", None, None, None),
        (
            "I've switched over from Node.js to Deno for side projects.",
            "User switched from Node.js to Deno",
            None,
            "Node.js",
        ),
        ("I no longer work at Acme.", "User no longer works at Acme", "employer", "Acme"),
        ("I'm not with Globex any more.", "User no longer works at Globex", "employer", "Globex"),
        ("I don't live in Berlin anymore", "User no longer lives in Berlin", "home_location", "Berlin"),
        ("I moved out of London two years ago.", "User no longer lives in London", "home_location", "London"),
        ("I don't eat meat anymore.", "User no longer eats meat", None, "meat"),
        ("I no longer watch football on Sundays.", "User no longer watches football", None, "football"),
        ("I stopped using Slack at work.", "User stopped using Slack", None, "Slack"),
        ("I quit smoking last year!", "User stopped smoking", None, "smoking"),
        ("I gave up coffee because of my sleep.", "User gave up coffee", None, "coffee"),
    ],
)
def test_an_update_names_what_is_true_now_and_what_stopped_being_true(
    said: str, now: str | None, slot: str | None, old: str | None
) -> None:
    found = extracted(said)
    if now is None:
        # "we migrated" speaks of a team's system, not of the user: no update of the user's facts
        assert all(m.replaces is None for m in found.values()), sorted(found)
        return
    assert now in found, sorted(found)
    memory = found[now]
    assert (memory.slot, memory.replaces) == (slot, old)
    # the reason the old fact will be invalidated with is what the user said
    assert memory.change is not None and said.rstrip("!.")[:30] in memory.change


@pytest.mark.parametrize(
    ("said", "now", "slot"),
    [
        ("These days I work for Globex.", "User works at Globex", "employer"),
        ("Nowadays I'm working at Globex, nice team.", "User works at Globex", "employer"),
        ("I now live in Lisbon.", "User lives in Lisbon", "home_location"),
        ("I've moved to Lisbon.", "User lives in Lisbon", "home_location"),
        ("These days I mostly use Neovim.", "User uses Neovim", None),
    ],
)
def test_these_days_states_the_current_value_of_its_slot(said: str, now: str, slot: str | None) -> None:
    found = extracted(said)
    assert now in found, sorted(found)
    assert found[now].slot == slot and found[now].replaces is None


@pytest.mark.parametrize(
    "said",
    [
        "I stopped thinking about it.",
        "I gave up on that idea.",
        "I left it for later.",
        "I'm not at home right now.",
        "My friend moved from Paris to Rome.",
    ],
)
def test_no_update_is_read_into_words_that_end_nothing_of_the_user(said: str) -> None:
    assert all(m.replaces is None for m in extracted(said).values())


def test_the_assistant_saying_a_change_is_not_an_update_of_the_user() -> None:
    assert extracted("You moved from Berlin to Lisbon, right? I left Acme for Globex.", MessageRole.ASSISTANT) == {}


@pytest.mark.parametrize(
    ("said", "now", "slot"),
    [
        # Where the user is "now" is where they work.
        ("I switched jobs, I'm at Globex now.", "User works at Globex", "employer"),
        ("i'm with Fabrikam these days, much happier", "User works at Fabrikam", "employer"),
        ("I'm now at Initech after five years at Umbrella.", "User works at Initech", "employer"),
        # Starting a job names the new employer, with or without the "I".
        ("Started my new job at Wayne Enterprises today!", "User works at Wayne Enterprises", "employer"),
        ("I've just started working for Tyrell, wish me luck", "User works at Tyrell", "employer"),
        ("Began a new role with Acme Corp last week.", "User works at Acme Corp", "employer"),
        ("Today was my first day at Hooli and everyone was lovely.", "User works at Hooli", "employer"),
        ("These days I work for a tiny agency called Brightloop.", "User works at Brightloop", "employer"),
        # The present perfect says they still live there.
        ("I've lived in Utrecht for six years now.", "User lives in Utrecht", "home_location"),
    ],
)
def test_a_new_employer_or_home_in_everyday_words_fills_its_slot(said: str, now: str, slot: str) -> None:
    memory = extracted(said)[now]
    assert memory.slot == slot and memory.type.value == "fact"


@pytest.mark.parametrize(
    ("said", "now"),
    [
        ("Our cat is named Pixel.", "User has a cat named Pixel"),
        ("our dog's called Waffles and he hates the rain", "User has a dog named Waffles"),
        ("My rabbit is called Clover.", "User has a rabbit named Clover"),
        ("Our puppy's name is Juniper.", "User has a puppy named Juniper"),
        ("We just adopted a kitten named Miso!", "User has a kitten named Miso"),
        ("We've got a parrot called Captain.", "User has a parrot named Captain"),
    ],
)
def test_a_pet_named_in_the_households_words_is_the_users(said: str, now: str) -> None:
    assert now in extracted(said)


@pytest.mark.parametrize(
    "said",
    [
        "I'm at Heathrow waiting for my flight.",  # where they are, not where they work
        "I'm at home now, finally.",
        "I lived in Paris as a student.",  # past, not where they live
        "Our meeting is called Standup.",
    ],
)
def test_being_somewhere_or_having_lived_somewhere_is_no_employer_or_home(said: str) -> None:
    found = extracted(said)
    assert not [m for m in found.values() if m.slot in {"employer", "home_location"}], found
