"""The constructive filter, table-driven over reference cases (docs/pipeline.md) and new phrasings of the same ideas."""

from __future__ import annotations

import pytest

from rapport.domain.filtering import Verdict
from rapport.domain.models import Domain
from rapport.domain.prompts import constructive_filter as prompt
from rapport.domain.prompts import payload
from rapport.domain.rules.model import RulesLanguageModel

REFRAMED_SIMPLER = "User benefits from simpler explanations first"

CASES: list[tuple[str, Verdict, str | None]] = [
    # the reference cases: three allowed, three blocked, one reframe (docs/pipeline.md's table shows most of them)
    ("User prefers step-by-step explanations", Verdict.ALLOWED, None),
    ("We solved the CORS issue together — it was the proxy config", Verdict.ALLOWED, None),
    ("Bullet points work better with this user", Verdict.ALLOWED, None),
    ("User was frustrated with my response", Verdict.BLOCKED, None),
    ("My suggestion was rejected", Verdict.BLOCKED, None),
    ("User didn't follow my advice", Verdict.BLOCKED, None),
    ("User got confused by my technical explanation", Verdict.REFRAMED, REFRAMED_SIMPLER),
    # the same ideas in other words
    ("Direct suggestions beat exploratory questions with this user", Verdict.ALLOWED, None),
    ("User was frustrated with the slow build, not with our work", Verdict.ALLOWED, None),
    ("The user got annoyed at me for asking twice", Verdict.BLOCKED, None),
    ("User was frustrated with me, not with the tool", Verdict.BLOCKED, None),
    ("User ignored my recommendation to pin the version", Verdict.BLOCKED, None),
    ("User refused to take my advice about the schema", Verdict.BLOCKED, None),
    ("User snapped at me", Verdict.BLOCKED, None),
    ("User is rude and impatient", Verdict.BLOCKED, None),
    ("User seemed lost by my explanation of closures", Verdict.REFRAMED, REFRAMED_SIMPLER),
    ("My answers were too long for this user", Verdict.REFRAMED, "User prefers short, focused answers"),
    ("User was impatient with my clarifying questions", Verdict.REFRAMED, None),
    ("ok", Verdict.BLOCKED, None),
    ("My plan of splitting the service was turned down in review", Verdict.BLOCKED, None),
    ("My proposal for a weekly check-in got shot down", Verdict.BLOCKED, None),
    ("She didn't even bother reading the checklist I wrote", Verdict.BLOCKED, None),
    ("User refused to try the stretches I suggested", Verdict.BLOCKED, None),
    ("Not exactly the sharpest when it comes to taxes", Verdict.BLOCKED, None),
    ("The session went fine.", Verdict.BLOCKED, None),
    ("We talked again", Verdict.BLOCKED, None),
    ("I told him the wrong opening hours and he arrived to a closed shop", Verdict.BLOCKED, None),
    ("We talked through the migration plan and agreed to do the users table first", Verdict.ALLOWED, None),
    ("User is a very bright student of economics", Verdict.ALLOWED, None),
    # what I did that went badly is kept as what to avoid, in the assistant's voice, the feeling dropped
    (
        "User was irritated that I used Celsius when he lives in Ohio",
        Verdict.REFRAMED,
        "With this user, avoid using Celsius when they live in Ohio",
    ),
    (
        "User couldn't keep up when I skipped the setup steps",
        Verdict.REFRAMED,
        "With this user, avoid skipping the setup steps",
    ),
    (
        "Frustrated because I kept recommending paid tools she isn't able to buy",
        Verdict.REFRAMED,
        "With this user, avoid recommending paid tools they aren't able to buy",
    ),
    (
        "Overwhelmed him by listing every edge case at once",
        Verdict.REFRAMED,
        "With this user, avoid listing every edge case at once",
    ),
    # a suggestion turned down in other words, unless the note says what they wanted instead
    ("User waved off the savings plan I drafted", Verdict.BLOCKED, None),
    ("Wasn't keen on my idea of a standing desk", Verdict.BLOCKED, None),
    ("Declined my offer to rewrite the intro and asked for bullet points instead", Verdict.ALLOWED, None),
    ("Was interested in the podcasts I recommended", Verdict.ALLOWED, None),
    # a judgement hedged with no subject, and insults, are held against no one; a hedge alone judges nothing
    ("Bit of a drama queen about deadlines", Verdict.BLOCKED, None),
    ("Called me a joke when the export failed", Verdict.BLOCKED, None),
    ("Quite a fast learner with spreadsheets", Verdict.ALLOWED, None),
    ("Difficult week at work with two deadlines", Verdict.ALLOWED, None),
    ("Really difficult week at work with two deadlines", Verdict.ALLOWED, None),
    ("Pretty stubborn cough that has lasted a month", Verdict.ALLOWED, None),
    ("Very demanding job on the night shift", Verdict.ALLOWED, None),
    ("Chatted about this and that", Verdict.BLOCKED, None),
    # who reacted by pronoun or name, a temper lost, what my answer was and what it did to them
    (
        "Priya lost her patience when I repeated the same checklist",
        Verdict.REFRAMED,
        "With this user, avoid repeating the same checklist",
    ),
    (
        "He grumbled that my estimate left out the shipping costs",
        Verdict.REFRAMED,
        "With this user, avoid an estimate that left out the shipping costs",
    ),
    (
        "My reply confused him with three spellings of the same endpoint",
        Verdict.REFRAMED,
        "With this user, avoid confusing them with three spellings of the same endpoint",
    ),
    ("Sam said my fix worked", Verdict.ALLOWED, None),
    # corrections of fact are never dropped as negative, however they are phrased
    ("User corrected me: their dog is named Rex, not Max", Verdict.ALLOWED, None),
    ("User said my answer was wrong: the meeting is on Tuesday, not Monday", Verdict.ALLOWED, None),
    # a lesson said with the reaction after what I did, or as what my answer was
    (
        "I fixed the wrong file and the user lost patience",
        Verdict.REFRAMED,
        "With this user, avoid fixing the wrong file",
    ),
    (
        "He said my estimates were always too optimistic",
        Verdict.REFRAMED,
        "With this user, avoid estimates that were always too optimistic",
    ),
    ("User found my summary too dry", Verdict.REFRAMED, "With this user, avoid a summary that is too dry"),
    (
        "User got defensive when I questioned her budget",
        Verdict.REFRAMED,
        "With this user, avoid questioning their budget",
    ),
    (
        "My breakdown of the tax rules went over her head",
        Verdict.REFRAMED,
        "With this user, avoid a breakdown of the tax rules that goes over their head",
    ),
    # a slip of mine with nothing learnt, a judgement, a chat that only happened, help turned down
    ("I botched the timezone maths", Verdict.BLOCKED, None),
    ("I got the recipe's oven temperature wrong", Verdict.BLOCKED, None),
    ("User is not a very good speller", Verdict.BLOCKED, None),
    ("He's pretty gullible", Verdict.BLOCKED, None),
    ("Nothing much happened today", Verdict.BLOCKED, None),
    ("Had a short chat with the user this afternoon", Verdict.BLOCKED, None),
    ("User skipped the workout plan I drew up", Verdict.BLOCKED, None),
    ("My idea to refinance was declined", Verdict.BLOCKED, None),
    # my work and how it went wrong for them, or what I did or left undone that caused it: what to avoid, or to start by
    (
        "User was upset that I rewrote their whole cover letter when they only wanted a spell check",
        Verdict.REFRAMED,
        "With this user, avoid rewriting their whole cover letter when they only wanted a spell check",
    ),
    (
        "My packing list skipped the charger and the user got stuck at the airport",
        Verdict.REFRAMED,
        "With this user, avoid a packing list that skipped the charger",
    ),
    (
        "The timetable I made had overlapping classes and the user had to redo it",
        Verdict.REFRAMED,
        "With this user, avoid a timetable that had overlapping classes",
    ),
    (
        "The backup script wiped their photos because I never checked which folder it pointed at",
        Verdict.REFRAMED,
        "With this user, start by checking which folder it pointed at",
    ),
    (
        "User's cake sank after following my recipe, which used too much baking soda",
        Verdict.REFRAMED,
        "With this user, avoid a recipe that used too much baking soda",
    ),
    (
        "My migration broke the user's build because I renamed the config keys",
        Verdict.REFRAMED,
        "With this user, avoid renaming the config keys",
    ),
    (
        "User gets impatient when I list every option, since they want one pick",
        Verdict.REFRAMED,
        "With this user, avoid listing every option, since they want one pick",
    ),
    (
        "She was bored by my long history of the framework",
        Verdict.REFRAMED,
        "With this user, avoid a long history of the framework",
    ),
    (
        "User's daughter gave up during the 90-minute reading session I planned",
        Verdict.REFRAMED,
        "With this user, avoid a 90-minute reading session",
    ),
    ("My weekly plan for the user saved them two evenings", Verdict.ALLOWED, None),
    ("My first walkthrough confused them; the diagram worked much better", Verdict.ALLOWED, None),
    ("My answer was wrong about the user's birthday", Verdict.BLOCKED, None),
    # turned down, chosen over, or a mood with no cause: nothing to learn
    ("User blew off the reading list I put together", Verdict.BLOCKED, None),
    ("The assistant's savings strategy got waved away", Verdict.BLOCKED, None),
    ("User picked their sister's plan instead of mine", Verdict.BLOCKED, None),
    ("User booked the flight I warned them not to book", Verdict.BLOCKED, None),
    ("User logged off irritated", Verdict.BLOCKED, None),
    ("User is a lousy friend for forgetting birthdays", Verdict.BLOCKED, None),
    # a slip told with what is so of them that caused it: that fact is the lesson
    (
        "My packing list didn't help, since they travel with only a carry-on.",
        Verdict.REFRAMED,
        "With this user, keep in mind: they travel with only a carry-on",
    ),
    (
        "I suggested a squat routine and she pointed out her knee injury rules them out",
        Verdict.REFRAMED,
        "With this user, keep in mind: their knee injury rules them out",
    ),
    ("User missed the bus because their alarm didn't go off", Verdict.ALLOWED, None),
    # judgements and dismissals in more words
    ("Dealing with this user is a nightmare.", Verdict.BLOCKED, None),
    ("User threw a fit because the summary had one typo.", Verdict.BLOCKED, None),
    ("The workout plans I put together were waved away again.", Verdict.BLOCKED, None),
    ("My input wasn't wanted on the budget.", Verdict.BLOCKED, None),
    ("User's idea of retiring at 40 is frankly laughable.", Verdict.BLOCKED, None),
    ("Der Benutzer ist unhöflich.", Verdict.BLOCKED, None),
    # and what only looks like them
    ("User is not a morning person", Verdict.ALLOWED, None),
    ("User skipped breakfast before the exam", Verdict.ALLOWED, None),
    ("User felt rushed at work this week", Verdict.ALLOWED, None),
    ("I mixed up their kids' names, so I check the family notes first now", Verdict.ALLOWED, None),
    (
        "I gave them the wrong opening hours; they spotted it, and I now check the venue's own page",
        Verdict.ALLOWED,
        None,
    ),
]


def judge(*contents: str, correction: bool = False) -> prompt.FilterJudgement:
    """Through the LanguageModel port, with the prompt the pipeline sends."""
    request = prompt.FilterInput(
        candidates=[
            prompt.FilterCandidate(
                index=i, domain=Domain.RELATIONAL, type="interaction_pattern", content=c, correction=correction
            )
            for i, c in enumerate(contents)
        ]
    )
    return RulesLanguageModel().structured(
        system=prompt.SYSTEM, user=payload.render(prompt.TASK, request), response_model=prompt.FilterJudgement
    )


@pytest.mark.parametrize(("content", "verdict", "reframe"), CASES, ids=[c for c, _, _ in CASES])
def test_each_candidate_gets_the_verdict_a_person_would_give(
    content: str, verdict: Verdict, reframe: str | None
) -> None:
    (answer,) = judge(content).verdicts
    assert answer.verdict is verdict, answer.reason
    assert answer.reason
    if verdict is Verdict.REFRAMED:
        assert answer.reframed_content
        assert reframe is None or answer.reframed_content == reframe
    else:
        assert answer.reframed_content is None


def test_a_batch_gets_one_verdict_per_candidate_in_order() -> None:
    contents = [content for content, _, _ in CASES]
    verdicts = judge(*contents).verdicts
    assert [v.index for v in verdicts] == list(range(len(contents)))
    assert [v.verdict for v in verdicts] == [verdict for _, verdict, _ in CASES]


def test_a_candidate_the_extractor_marked_as_correction_is_allowed_whatever_it_says() -> None:
    (answer,) = judge("My answer was wrong about where the user works", correction=True).verdicts
    assert answer.verdict is Verdict.ALLOWED
    (unmarked,) = judge("My answer was wrong about where the user works").verdicts
    assert unmarked.verdict is Verdict.BLOCKED
