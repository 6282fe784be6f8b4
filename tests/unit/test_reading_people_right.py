"""Signals that read people right: crisis language is never good news, worry is anxiety (no grudge), sentiment is a
moving average that no run of messages pins at a bound, and a feeling said of "him" is the person's it refers to."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rapport.adapters.local.vader import RuleSignalDetector
from rapport.domain.people import find_mentions
from rapport.domain.relational_state import (
    InteractionEffect,
    RelationalState,
    apply_interaction,
    grudge_increment,
    initial_state,
    moved_sentiment,
    observed_sentiment,
)
from rapport.domain.signals import Emotion, Intent, Signals, combine, with_crisis
from rapport.settings import RelationalSettings

POLICY = RelationalSettings()
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
DETECTOR = RuleSignalDetector()


def _at(sentiment: float) -> RelationalState:
    return initial_state(POLICY).model_copy(update={"sentiment": sentiment, "sentiment_at": T0})


def _after(state: RelationalState, signals: Signals) -> float:
    return apply_interaction(state, signals.effect(), T0, POLICY).sentiment


# --- crisis: a negative mood and the flag, however the words score ---------------------------------------------------

CRISIS_MESSAGES = [
    "Honestly everyone would be better off without me.",
    "I just want it all to end, thanks for always listening though :)",
    "Some nights I think about ending my life.",
    "I don't want to be here anymore. Nothing feels worth it.",
    "I've been thinking life isn't worth living lately, but you're so kind to me.",
    "I can't go on like this, I keep thinking about killing myself.",
    "lol I'm fine, just want to die, great day",
]


@pytest.mark.parametrize("message", CRISIS_MESSAGES)
def test_crisis_language_sets_the_flag_and_a_negative_mood(message: str) -> None:
    signals = DETECTOR.detect(message)
    assert signals.crisis and signals.intent is Intent.EMOTIONAL_SUPPORT
    assert signals.mood_delta <= -0.6
    # Then grudge gets the crisis amount and nothing makes the mood look better
    assert grudge_increment(signals.effect(), POLICY) >= POLICY.grudge_crisis


@pytest.mark.parametrize("message", CRISIS_MESSAGES)
@pytest.mark.parametrize("sentiment", [0.05, 0.15, 0.5, 0.81, 0.99])
def test_a_crisis_message_never_raises_sentiment(message: str, sentiment: float) -> None:
    assert _after(_at(sentiment), DETECTOR.detect(message)) <= sentiment + 1e-12  # (decay to the same instant)


def test_a_crisis_stays_a_crisis_next_to_a_cheerful_message() -> None:
    both = combine([DETECTOR.detect("Thank you so much, that's wonderful!"), DETECTOR.detect(CRISIS_MESSAGES[0])])
    assert both.crisis and both.mood_delta <= -0.6 and both.intent is Intent.EMOTIONAL_SUPPORT
    assert _after(_at(0.6), both) < 0.6


@given(mood=st.floats(-1.0, 1.0, allow_nan=False), sentiment=st.floats(0.0, 1.0, allow_nan=False))
def test_no_crisis_reading_raises_sentiment_whatever_mood_it_carries(mood: float, sentiment: float) -> None:
    # Even a crisis recorded with a positive mood (an older history, another detector) cannot raise it.
    effect = InteractionEffect(crisis=True, mood_delta=mood)
    assert moved_sentiment(sentiment, effect, POLICY) <= sentiment
    assert with_crisis(mood, True) <= -0.6 and with_crisis(mood, False) == mood


# --- sentiment: an exponential moving average, 0.7 of the way per message -------------------------------------------

FRIENDLY = [
    ("Thanks so much, this is amazing!", "You're awesome, that fixed it, I'm thrilled!"),
    ("I love this, thank you!!", "Wonderful, everything works perfectly now."),
    ("Great news, the demo went perfectly, thank you.", "Honestly the best help ever, so happy."),
]


@pytest.mark.parametrize(("first", "second"), FRIENDLY)
def test_two_friendly_messages_do_not_pin_sentiment_at_one(first: str, second: str) -> None:
    state = initial_state(POLICY)
    for message in (first, second):
        state = apply_interaction(state, DETECTOR.detect(message).effect(), T0, POLICY)
    assert 0.75 < state.sentiment < 0.97


@given(
    start=st.floats(0.001, 0.999, allow_nan=False),
    moods=st.lists(st.floats(-1.0, 1.0, allow_nan=False), min_size=1, max_size=6),
)
def test_a_few_messages_never_reach_a_bound(start: float, moods: list[float]) -> None:
    sentiment = start
    for mood in moods:
        sentiment = moved_sentiment(sentiment, InteractionEffect(mood_delta=mood), POLICY)
        assert 0.0 < sentiment < 1.0


@given(sentiment=st.floats(0.0, 1.0, allow_nan=False), mood=st.floats(-1.0, 1.0, allow_nan=False))
def test_each_message_moves_sentiment_toward_its_mood_by_the_step(sentiment: float, mood: float) -> None:
    observed = observed_sentiment(mood, POLICY.sentiment_neutral)
    moved = moved_sentiment(sentiment, InteractionEffect(mood_delta=mood), POLICY)
    if mood == 0.0:
        assert moved == sentiment  # no reading, no evidence
    elif (mood > 0) == (observed > sentiment):
        assert moved == pytest.approx(sentiment + POLICY.mood_factor * (observed - sentiment))
    else:
        assert moved == sentiment  # the step never goes against the mood's sign


def test_the_mood_scale_maps_onto_sentiment() -> None:
    assert observed_sentiment(-1.0, 0.5) == 0.0
    assert observed_sentiment(0.0, 0.5) == 0.5
    assert observed_sentiment(1.0, 0.5) == 1.0
    assert observed_sentiment(-0.4, 0.5) == pytest.approx(0.3)


# --- good news and relief the lexicon has no word for ----------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "Passed my final exam this morning!",
        "Our son was born on Saturday.",
        "I got the job at the lab.",
        "swapped the cable and the flicker is gone",
        "ok it's working now",
        "yes, that did it",
    ],
)
def test_good_news_and_a_problem_gone_raise_the_mood(message: str) -> None:
    signals = DETECTOR.detect(message)
    assert Emotion.JOY in signals.emotions
    assert signals.mood_delta > 0


@pytest.mark.parametrize("message", ["the rash is not gone", "still not working now", "I failed my exam"])
def test_news_that_is_not_good_does_not_read_as_joy(message: str) -> None:
    assert Emotion.JOY not in DETECTOR.detect(message).emotions


def test_relief_named_by_its_problem_keeps_the_lexicons_reading() -> None:
    # A known limit: the lexicon scores the problem's own name ("errors") and a pleasant emotion does not overrule it
    signals = DETECTOR.detect("bumped the memory limit and the OOM errors are gone")
    assert Emotion.JOY in signals.emotions and signals.mood_delta < 0


# --- worry and fear are anxiety, with no grudge -----------------------------------------------------------------------

WORRIED = [
    "I keep waking up at 3am worrying about my operation on Friday.",
    "I can't sleep, I keep thinking about the surgery tomorrow.",
    "The biopsy results come back Monday and I'm terrified, I've been lying awake all week.",
    "My knee surgery is next week and I'm so nervous it keeps me up at night.",
    "I'm scared the anaesthesia will go wrong, I keep reading horror stories.",
    "Still not sleeping, the dread about my op just keeps building.",
]


@pytest.mark.parametrize("message", WORRIED)
def test_a_patients_worry_is_anxiety_and_adds_no_grudge(message: str) -> None:
    signals = DETECTOR.detect(message)
    assert Emotion.ANXIETY in signals.emotions
    assert Emotion.FRUSTRATION not in signals.emotions and Emotion.ANGER not in signals.emotions
    assert grudge_increment(signals.effect(), POLICY) == 0.0
    assert apply_interaction(initial_state(POLICY), signals.effect(), T0, POLICY).grudge == 0.0
    assert signals.intent is Intent.EMOTIONAL_SUPPORT


@pytest.mark.parametrize(
    "message",
    [
        "The build keeps failing on the same test.",
        "It's still not working after the third restart.",
        "Broken again, over and over, I'm done.",
    ],
)
def test_repetition_without_worry_is_still_frustration(message: str) -> None:
    signals = DETECTOR.detect(message)
    assert Emotion.FRUSTRATION in signals.emotions
    assert grudge_increment(signals.effect(), POLICY) == POLICY.grudge_frustration


def test_worry_in_one_sentence_does_not_excuse_frustration_in_another() -> None:
    signals = DETECTOR.detect("I'm worried about the launch. Also the deploy keeps failing again.")
    assert Emotion.ANXIETY in signals.emotions and Emotion.FRUSTRATION in signals.emotions


# --- a grievance about someone else is felt, but is no grudge against the assistant ----------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "My landlord ignored the leak for a month. I'm furious.",
        "Priya, my manager, keeps rescheduling our reviews and it's so annoying.",
        "My sister borrowed the car again without asking. Honestly fed up with her.",
        "Whoever wrote this migration should be banned from SQL, it's ridiculous. How do I roll it back?",
    ],
)
def test_a_grievance_about_someone_else_adds_no_grudge(message: str) -> None:
    signals = DETECTOR.detect(message)
    assert set(signals.emotions) & {Emotion.FRUSTRATION, Emotion.ANGER} and signals.aimed_elsewhere
    assert signals.mood_delta < 0
    assert grudge_increment(signals.effect(), POLICY) == 0.0


@pytest.mark.parametrize(
    "message",
    [
        "Our staging database keeps locking up, it's driving me nuts.",
        "This printer is killing me, third jam today.",
        "My laptop keeps freezing and I'm so done with it.",
        "Their API keeps timing out, ridiculous.",
    ],
)
def test_a_grievance_about_a_thing_of_the_persons_own_adds_no_grudge(message: str) -> None:
    signals = DETECTOR.detect(message)
    assert Emotion.FRUSTRATION in signals.emotions and signals.aimed_elsewhere
    assert signals.mood_delta < 0
    assert grudge_increment(signals.effect(), POLICY) == 0.0


@pytest.mark.parametrize(
    "message",
    [
        "This answer keeps missing the point, so frustrating.",  # the assistant's work
        "this reply is useless, I'm so done",
        "my assistant keeps forgetting things, so annoying",  # the assistant itself
        "The build keeps failing.",  # "the …" may be the fix just tried
        "THIS IS USELESS!! NOTHING WORKS!!",  # "this" with its verb: no thing named
        "this keeps happening, so annoying",
    ],
)
def test_a_grievance_about_the_assistants_work_still_adds_grudge(message: str) -> None:
    signals = DETECTOR.detect(message)
    assert not signals.aimed_elsewhere
    assert grudge_increment(signals.effect(), POLICY) > 0.0


@pytest.mark.parametrize(
    "message",
    [
        "You keep ignoring what I said about my boss, it's annoying.",
        "My boss is waiting and you're still not giving me the query. Ridiculous.",
        "Ugh, the build keeps failing.",  # about nobody else: the friction is in this conversation
    ],
)
def test_a_grievance_at_the_assistant_or_at_nobody_else_still_adds_grudge(message: str) -> None:
    signals = DETECTOR.detect(message)
    assert not signals.aimed_elsewhere
    assert grudge_increment(signals.effect(), POLICY) > 0.0


def test_one_message_of_grievance_at_the_assistant_is_enough() -> None:
    about_boss = DETECTOR.detect("My boss moved the deadline again. I'm livid.")
    at_assistant = DETECTOR.detect("And you keep giving me the wrong dates, it's frustrating.")
    assert about_boss.aimed_elsewhere and not at_assistant.aimed_elsewhere
    assert grudge_increment(combine([about_boss, about_boss]).effect(), POLICY) == 0.0
    assert grudge_increment(combine([about_boss, at_assistant]).effect(), POLICY) > 0.0
    # a calm message beside a grievance about someone else does not turn it on the assistant
    assert combine([about_boss, DETECTOR.detect("Can you help me write to him?")]).aimed_elsewhere


# --- feelings about a person, across the sentences that refer to them -----------------------------------------------


@pytest.mark.parametrize(
    ("text", "slug", "feeling"),
    [
        ("My boss moved the deadline again. I'm so fed up with him.", "boss", "I'm so fed up with him."),
        ("My manager Dana cancelled my leave. I can't stand her.", "dana", "I can't stand her."),
        (
            "My mom called this morning. We talked about the trip. She is honestly the best.",
            "mother",
            "She is honestly the best.",
        ),
        ("My brother visited. Ugh, he is so annoying.", "brother", "Ugh, he is so annoying."),
    ],
)
def test_a_pronoun_carries_the_feeling_to_the_person_named_before(text: str, slug: str, feeling: str) -> None:
    mentions = [(m.slug, m.sentence) for m in find_mentions(text)]
    assert (slug, feeling) in mentions


def test_a_pronoun_that_fits_two_people_is_nobodys() -> None:
    mentions = find_mentions("My boss and my coworker argued all day. He was rude.")
    assert all(m.sentence != "He was rude." for m in mentions)


def test_a_gendered_role_picks_the_person_the_pronoun_fits() -> None:
    mentions = find_mentions("My sister and my dad came over. She was lovely.")
    assert [m.slug for m in mentions if m.sentence == "She was lovely."] == ["sister"]


def test_a_pronoun_far_from_its_person_is_not_theirs() -> None:
    text = "My boss called. The weather was grey. The train was late. Lunch was fine. He is awful."
    assert all(m.sentence != "He is awful." for m in find_mentions(text))


def test_a_new_person_takes_over_the_pronouns() -> None:
    mentions = find_mentions("My dad fixed the car. Then my brother Sam broke it. He is hopeless.")
    # "He" fits both men, and Sam was named last: the previous sentence's person only.
    assert [m.slug for m in mentions if m.sentence == "He is hopeless."] == ["sam"]
