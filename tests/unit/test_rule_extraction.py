"""The rule-based extractors: user facts and preferences, and the six relational types from cues in the exchange."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rapport.domain.models import Interaction, Message, MessageRole
from rapport.domain.prompts import extract_relational, extract_user, payload
from rapport.domain.prompts.conversation import ConversationInput
from rapport.domain.rules.model import RulesLanguageModel
from rapport.errors import InvalidModelOutputError

NOW = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def conversation(*turns: tuple[str, str]) -> ConversationInput:
    interaction = Interaction(
        id="01KE6P4YM0NAQ24FSQ8YPPMFZB",
        tenant_id="t",
        user_id="u",
        messages=[Message(role=MessageRole(role), content=content) for role, content in turns],
        occurred_at=NOW,
        created_at=NOW,
    )
    return ConversationInput.of(interaction, 24_000)


def user_memories(*turns: tuple[str, str]) -> list[extract_user.ExtractedUserMemory]:
    answer = RulesLanguageModel().structured(
        system=extract_user.SYSTEM,
        user=payload.render(extract_user.TASK, conversation(*turns)),
        response_model=extract_user.UserExtraction,
    )
    return answer.memories


def relational_memories(*turns: tuple[str, str]) -> list[extract_relational.ExtractedRelationalMemory]:
    answer = RulesLanguageModel().structured(
        system=extract_relational.SYSTEM,
        user=payload.render(extract_relational.TASK, conversation(*turns)),
        response_model=extract_relational.RelationalExtraction,
    )
    return answer.memories


@pytest.mark.parametrize(
    ("said", "expected", "kind", "slot"),
    [
        ("I work at Acme Corp and I love it", "User works at Acme Corp", "fact", "employer"),
        ("I just joined Initech as a designer", "User works at Initech", "fact", "employer"),
        ("Hey, my dog Max keeps barking at night", "User has a dog named Max", "fact", None),
        ("My cat's name is Luna.", "User has a cat named Luna", "fact", None),
        ("I prefer morning meetings because I focus better", "User prefers morning meetings", "preference", None),
        ("I live in Lisbon these days", "User lives in Lisbon", "fact", "home_location"),
        ("I'm a data engineer", "User is a data engineer", "fact", "occupation"),
        ("My name is Priya", "User's name is Priya", "fact", "name"),
        ("I'm learning Rust on weekends", "User is learning Rust on weekends", "goal", None),
        ("I'm planning a trip to Rome", "User is planning a trip to Rome", "event", None),
        # moving is not travelling: the note keeps the verb said
        ("I'm moving to Berlin next month", "User is moving to Berlin next month", "event", None),
        ("I'm flying to Rome on Friday", "User is flying to Rome on Friday", "event", None),
        # what someone was promoted to is part of the news; what a puppy is for is not
        ("I recently got promoted to team lead last week", "User recently got promoted to team lead", "event", None),
        ("I got a puppy to keep me company", "User recently got a puppy", "event", None),
        # "im" typed for "I'm"
        ("so im heading to Lisbon tomorrow", "User is heading to Lisbon tomorrow", "event", None),
        ("I'm writing my thesis on coral reefs", "User is writing their thesis on coral reefs", "event", None),
        (
            "I'm applying for a junior data analyst role at Monzo",
            "User is applying for a junior data analyst role at Monzo",
            "event",
            None,
        ),
        ("I want to finish my thesis by June", "User wants to finish their thesis by June", "goal", None),
        # a question put to me after it is no part of the aim
        (
            "I want to get my Spanish to B2 by next year — can you suggest a weekly plan",
            "User wants to get their Spanish to B2 by next year",
            "goal",
            None,
        ),
        ("I hate long meetings", "User dislikes long meetings", "preference", None),
        ("we're on Postgres 16 in production", "User is on Postgres 16", "fact", None),
        ("I'm running Ubuntu 24.04 on the laptop", "User is on Ubuntu 24.04", "fact", None),
        ("still on 1.21, can't upgrade yet. I'm on 1.21", "User is on 1.21", "fact", None),
        # the people of a life, by name
        ("My colleague Priya is taking over the project", "User's colleague is Priya", "fact", None),
        ("my brother-in-law Sam is a mechanic", "User's brother-in-law is Sam", "fact", None),
        ("My neighbour, Janet, offered to drive me", "User's neighbour is Janet", "fact", None),
    ],
)
def test_user_facts_and_preferences_come_from_what_the_user_says(
    said: str, expected: str, kind: str, slot: str | None
) -> None:
    found = {m.content: m for m in user_memories(("user", said))}
    assert expected in found, sorted(found)
    assert found[expected].type.value == kind
    assert found[expected].slot == slot
    assert found[expected].evidence == [0]


@pytest.mark.parametrize(
    "said",
    [
        "I don't think I'd ever work at Acme",
        "I like it",
        "I'd prefer if you kept going",
        "Do you think my dog is sick?",
        "thanks!",
        "I'm on it, give me five minutes",  # being on something that is no platform
        "I'm on Friday's rota",
        "we're on the same page then",
        "I'll see my friend Saturday",  # a day, not a name
    ],
)
def test_no_memory_is_invented_from_negations_pronouns_or_small_talk(said: str) -> None:
    assert [m.content for m in user_memories(("user", said))] == []


def test_a_negated_fact_is_an_update_never_the_fact_itself() -> None:
    (memory,) = user_memories(("user", "I don't work at Acme anymore"))
    assert (memory.content, memory.slot, memory.replaces) == ("User no longer works at Acme", "employer", "Acme")


def test_only_the_users_own_words_count_as_facts_about_them() -> None:
    assert user_memories(("assistant", "I work at OpenAI and I prefer tea")) == []


def test_a_correction_is_marked_and_keeps_its_slot() -> None:
    (memory,) = user_memories(("user", "Actually, I work at Globex now, not Acme."))
    assert (memory.content, memory.slot, memory.correction) == ("User works at Globex", "employer", True)


def test_the_situation_is_read_from_the_whole_conversation() -> None:
    memories = user_memories(
        ("user", "The /orders endpoint throws an exception for every request"),
        ("assistant", "Can you share the stack trace?"),
        ("user", "Sure, our team saw it in production this morning"),
    )
    assert "User is debugging an API at work" in [m.content for m in memories]


@pytest.mark.parametrize(
    ("said", "situation"),
    [
        ("our billing job keeps timing out every night, no idea why", "User is debugging their billing job"),
        ("The search page is broken since the last release, error in the console", "User is debugging the search page"),
    ],
)
def test_the_situation_names_what_the_user_says_is_failing(said: str, situation: str) -> None:
    assert situation in [m.content for m in user_memories(("user", said))]


def test_a_situation_with_nothing_named_is_no_memory() -> None:
    said = "Something throws an exception somewhere, no clue where"
    assert not [m for m in user_memories(("user", said)) if m.content.startswith("User is debugging")]


DEBUGGING = (
    ("user", "I'm getting a 500 on /users again"),
    ("assistant", "Let's add step-by-step logging around the request handlers."),
    ("user", "It was the auth middleware, thanks — the step-by-step logging really helped"),
)


@pytest.mark.parametrize(
    ("turns", "kind", "expected"),
    [
        (
            DEBUGGING,
            "collaboration_outcome",
            "We debugged a 500 on /users together — the auth middleware was the root cause",
        ),
        (DEBUGGING, "approach_effectiveness", "Step-by-step logging worked well with this user"),
        (
            (
                ("user", "The deploy is failing"),
                ("assistant", "Try clearing the build cache."),
                ("user", "That worked!"),
            ),
            "approach_effectiveness",
            "Clearing the build cache worked for this user",
        ),
        (
            (("user", "Can you summarise the RFC?"), ("user", "Bullet points are easier for me to read")),
            "communication_preference",
            "Bullet points work better with this user",
        ),
        (DEBUGGING, "interaction_pattern", "User shows appreciation when we solve something together"),
        (
            (("user", "Let's keep going on the repo called Atlas"),),
            "shared_context",
            "We are working together on Atlas",
        ),
        (
            (("user", "Just give me the code, I'll read it"),),
            "working_style",
            "User wants the direct answer first, details after",
        ),
    ],
)
def test_the_six_relational_types_come_from_cues_in_the_exchange(
    turns: tuple[tuple[str, str], ...], kind: str, expected: str
) -> None:
    found = {(m.type.value, m.content) for m in relational_memories(*turns)}
    assert (kind, expected) in found, sorted(found)


def test_a_user_snapping_is_reported_raw_for_the_filter_to_judge() -> None:
    memories = relational_memories(
        ("user", "Why does the deploy fail?"),
        ("assistant", "It could be several things; can you share the log?"),
        ("user", "This is useless!! You're not listening"),
    )
    assert [(m.type.value, m.content) for m in memories] == [("interaction_pattern", "User was frustrated with me")]


def test_a_prompt_the_rules_cannot_answer_is_an_invalid_output_not_a_crash() -> None:
    with pytest.raises(InvalidModelOutputError, match="no rules"):
        RulesLanguageModel().structured(system="", user="", response_model=ConversationInput)
    with pytest.raises(InvalidModelOutputError, match="could not read"):
        RulesLanguageModel().structured(system="", user="no input here", response_model=extract_user.UserExtraction)
    assert RulesLanguageModel().reply(system="", messages=[]) is None


@pytest.mark.parametrize(
    "crisis",
    [
        "Bullet points are easier for me to read. Honestly I don't want to be alive anymore.",
        "Just give me the code, I'll read it. I've been saving up my pills anyway.",
        "I cut again last night. Let's keep going on the repo called Atlas.",
    ],
)
def test_a_crisis_is_never_kept_as_a_lesson(crisis: str) -> None:
    # What the same words teach without the crisis is kept; beside the crisis, nothing relational is
    assert relational_memories(
        ("user", "Can you summarise the RFC?"), ("user", "Bullet points are easier for me to read")
    )
    assert relational_memories(("user", "Can you summarise the RFC?"), ("user", crisis)) == []


@pytest.mark.parametrize(
    "said",
    [
        "I'm so confused by these insurance terms. What is a deductible?",
        "The visa forms are way too complicated, which one do I fill in first?",
    ],
)
def test_confusion_before_any_answer_of_mine_is_about_the_world_and_no_lesson(said: str) -> None:
    # Given an opening message that finds something hard, when no answer of mine came before it, then it says
    # nothing of how I explain: no "got confused by my explanation" for the filter to turn into a lesson.
    found = relational_memories(("user", said), ("assistant", "A deductible is what you pay before cover starts."))

    assert [m.content for m in found if "confused" in m.content] == []


def test_confusion_after_an_answer_of_mine_and_a_request_for_simpler_words_are_reported() -> None:
    after = relational_memories(
        ("user", "What is a mutex?"),
        ("assistant", "A mutual-exclusion primitive serialising access to a critical section."),
        ("user", "I'm totally lost, that's way too technical."),
    )
    asked = relational_memories(("user", "Explain it like I'm five, I'm not technical at all."))

    assert [m.content for m in after] == ["User got confused by my technical explanation"]
    assert [m.content for m in asked] == ["User got confused by my technical explanation"]


def test_people_talking_among_themselves_make_no_relational_memory_and_keep_their_facts() -> None:
    # Given the exchange that makes an outcome, an approach and a pattern between the user and me, when its user
    # messages come under two names (a group chat, a transcript), then nothing of "us" is drawn from it: it was not
    # said to me. A pattern's fact still is.
    def named(*turns: tuple[str, str, str | None]) -> ConversationInput:
        interaction = Interaction(
            id="01KE6P4YM0NAQ24FSQ8YPPMFZB",
            tenant_id="t",
            user_id="u",
            messages=[Message(role=MessageRole(r), content=c, name=n) for r, c, n in turns],
            occurred_at=NOW,
            created_at=NOW,
        )
        return ConversationInput.of(interaction, 24_000)

    def extracted(conversation: ConversationInput) -> tuple[list[str], list[str]]:
        model = RulesLanguageModel()
        relational = model.structured(
            system=extract_relational.SYSTEM,
            user=payload.render(extract_relational.TASK, conversation),
            response_model=extract_relational.RelationalExtraction,
        )
        user = model.structured(
            system=extract_user.SYSTEM,
            user=payload.render(extract_user.TASK, conversation),
            response_model=extract_user.UserExtraction,
        )
        return [m.type.value for m in relational.memories], [m.content for m in user.memories]

    first, second = DEBUGGING[0][1], DEBUGGING[2][1] + ". I work at Acme Corp."
    with_me = named(("user", first, "Ana"), ("assistant", DEBUGGING[1][1], None), ("user", second, "Ana"))
    among = named(("user", first, "Ana"), ("user", DEBUGGING[1][1], "Ben"), ("user", second, "Ana"))

    assert "collaboration_outcome" in extracted(with_me)[0]
    kinds, facts = extracted(among)
    assert kinds == []
    assert "User works at Acme Corp" in facts
    assert not with_me.among_several()
    assert among.among_several()


@pytest.mark.parametrize(
    ("said", "lesson"),
    [
        ("Keep it brief this time, I'm about to board a plane.", False),
        ("Tables are easier for me just for today, the laptop screen is tiny.", False),
        ("Keep it brief from now on, I mostly read you on my phone.", True),
        ("Tables are easier for me, I compare things side by side.", True),
    ],
)
def test_a_request_for_this_once_is_no_standing_preference(said: str, lesson: bool) -> None:
    # Given how the user wants an answer, when they ask it for this once, then it says how to answer now, not how to
    # answer them: no communication preference is stored; said as a rule or with no such limit, it is.
    kinds = [m.type.value for m in relational_memories(("user", said))]
    assert ("communication_preference" in kinds) is lesson, kinds


def test_im_in_another_language_is_not_i_am() -> None:
    assert user_memories(("user", "Ich wohne im Zentrum von Berlin")) == []
