"""Signal rules (emotions, shouting, crisis language, intent, mood) and the two detectors."""

from __future__ import annotations

from typing import Any

import pytest

from rapport.adapters.local.vader import RuleSignalDetector, VaderSentimentScorer
from rapport.domain.models import Message
from rapport.domain.signals import (
    Emotion,
    Intent,
    Signals,
    classify_intent,
    combine,
    ended_mood,
    find_emotions,
    from_metadata,
    has_crisis_language,
    is_shouting,
    mood_delta,
    to_metadata,
)
from rapport.errors import InvalidModelOutputError, UpstreamError
from rapport.services.model_signals import LanguageModelSignalDetector, SignalReading


@pytest.mark.parametrize(
    ("text", "emotions"),
    [
        ("I'm so frustrated with this build", {Emotion.FRUSTRATION}),
        ("It keeps crashing whenever I open it", {Emotion.FRUSTRATION}),
        ("This is ridiculous, I'm furious", {Emotion.ANGER}),
        ("I'm worried about the interview tomorrow", {Emotion.ANXIETY}),
        ("I've been feeling down since she left", {Emotion.SADNESS}),
        ("We're thrilled, the launch went great", {Emotion.JOY}),
        ("Thank you, I appreciate it", {Emotion.GRATITUDE}),
        ("I'm not happy with the result", set()),
        ("I'm not angry, just curious", set()),
        ("I hate to bother you, but where is the report?", set()),
        ("The meeting is at noon.", set()),
        ("You keep suggesting the same library", {Emotion.FRUSTRATION}),
        ("Please stop apologizing and answer", {Emotion.FRUSTRATION}),
        ("I can't stop thinking about the results", {Emotion.ANXIETY}),
        ("Every time I ask for a summary I get an essay", {Emotion.FRUSTRATION}),
        ("This is the fourth time you've ignored the version I gave", {Emotion.FRUSTRATION}),
        ("The commute is driving me nuts", {Emotion.FRUSTRATION}),
        ("Just answer, for heaven's sake", {Emotion.FRUSTRATION}),
        ("I told you twice already that it's Postgres", {Emotion.FRUSTRATION}),
        ("Ok I'm officially done with this printer", {Emotion.FRUSTRATION}),
        ("I haven't slept since the scan, I keep picturing bad news", {Emotion.ANXIETY}),
        ("I keep imagining everything going wrong on the day", {Emotion.ANXIETY}),
        ("I feel so stupid for forgetting", set()),  # shame, not anger at anyone
        ("This form is stupid", {Emotion.ANGER}),
        ("Far too wordy, I needed two lines", {Emotion.FRUSTRATION}),
        ("I only asked for the command, not a lecture", {Emotion.FRUSTRATION}),
        ("I asked my landlord about the deposit", set()),  # asking someone else is no complaint
        ("The talk went too long for me", set()),  # too long, said without the intensifier of a complaint
    ],
)
def test_emotions(text: str, emotions: set[Emotion]) -> None:
    assert set(find_emotions(text)) == emotions


@pytest.mark.parametrize(
    ("text", "shouting"),
    [
        ("WHY IS THIS NOT WORKING", True),
        ("why is this not working!!", True),
        ("why is this not working ! !", True),
        ("Why is this not working?", False),
        ("I use AWS and the NASA API daily", False),
        ("OK", False),  # too short to mean anything
        ("Great!", False),
    ],
)
def test_shouting(text: str, shouting: bool) -> None:
    assert is_shouting(text) is shouting


@pytest.mark.parametrize(
    ("text", "crisis"),
    [
        ("Sometimes I think about killing myself", True),
        ("Sometimes I want to kill myself", True),
        ("I've been having suicidal thoughts", True),
        ("I just want to end my life", True),
        ("Honestly everyone would be better off without me", True),
        ("I don’t want to live anymore", True),  # curly apostrophe
        ("I started self-harming again", True),
        ("I'm just tired of living, honestly", True),
        ("I don't see the point of going on", True),
        ("No one would even notice if I was gone", True),
        ("I've been stockpiling my meds for a while", True),
        ("The tablets are in front of me right now", True),
        ("I burned myself again yesterday", True),
        ("I'm sitting on the ledge of the car park", True),
        ("I cut the onions again because the first batch burned", False),
        ("This bug is killing me", False),
        ("I'd die for a good pizza", False),
        ("The process was killed by the OOM killer", False),
    ],
)
def test_crisis_language(text: str, crisis: bool) -> None:
    assert has_crisis_language(text) is crisis


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("Can you help me fix this CORS error?", Intent.REQUEST),
        ("Please summarize the meeting notes", Intent.REQUEST),
        ("Write a haiku about autumn", Intent.REQUEST),
        ("How do I configure nginx?", Intent.QUESTION),
        ("what's the difference between TCP and UDP", Intent.QUESTION),
        ("hi!", Intent.SMALL_TALK),
        ("How are you?", Intent.SMALL_TALK),
        ("thanks!", Intent.SMALL_TALK),
        ("That worked, thanks", Intent.FEEDBACK),
        ("That didn't help at all", Intent.FEEDBACK),
        ("I'm so anxious about tomorrow, I can't sleep", Intent.EMOTIONAL_SUPPORT),
        ("I need to vent about my week", Intent.EMOTIONAL_SUPPORT),
        ("The deploy finished at noon.", Intent.STATEMENT),
    ],
)
def test_intent(text: str, intent: Intent) -> None:
    assert classify_intent(text, find_emotions(text), has_crisis_language(text)) is intent


def test_crisis_always_means_emotional_support() -> None:
    assert classify_intent("Can you tell me how to end my life?", (), crisis=True) is Intent.EMOTIONAL_SUPPORT


def test_mood_uses_the_lexicon_and_falls_back_on_emotion_valence() -> None:
    assert mood_delta(-0.8, (Emotion.JOY,)) == -0.8
    assert mood_delta(0.0, (Emotion.FRUSTRATION,)) == pytest.approx(-0.3)
    assert mood_delta(0.01, (Emotion.ANGER, Emotion.GRATITUDE)) == pytest.approx(-0.1)
    assert mood_delta(0.0, ()) == 0.0


def test_a_complaint_the_lexicon_likes_still_lowers_the_mood() -> None:
    # every emotion found is unpleasant: a positive lexicon score gives way to them
    assert mood_delta(0.6, (Emotion.FRUSTRATION,)) == pytest.approx(-0.3)
    assert mood_delta(0.6, (Emotion.FRUSTRATION, Emotion.ANXIETY)) == pytest.approx(-0.3)
    # a pleasant emotion beside them, or a lexicon that agrees, leaves the score as it is
    assert mood_delta(0.6, (Emotion.FRUSTRATION, Emotion.GRATITUDE)) == 0.6
    assert mood_delta(-0.7, (Emotion.ANGER,)) == -0.7
    text = "could you maybe stop with the bullet points? just write normal paragraphs like a person would"
    signals = RuleSignalDetector().detect(text)
    assert Emotion.FRUSTRATION in signals.emotions and signals.mood_delta < 0


@pytest.mark.parametrize(
    "asked",
    [
        "What's the best way to keep fresh coriander from wilting?",
        "Could you help me plan a nice weekend in Lisbon?",
        "Please suggest a good name for my sourdough starter.",
    ],
)
def test_what_the_lexicon_likes_in_asking_is_no_mood(asked: str) -> None:
    assert VaderSentimentScorer().polarity(asked) > 0.3  # the words it likes are there
    signals = RuleSignalDetector().detect(asked)
    assert signals.emotions == () and signals.mood_delta == 0.0


def test_praise_of_my_help_beside_a_request_is_still_a_mood_and_a_thanks() -> None:
    signals = RuleSignalDetector().detect("That was super helpful, could you do the same for chapter 2?")
    assert Emotion.GRATITUDE in signals.emotions and signals.mood_delta > 0.5
    assert Emotion.GRATITUDE in RuleSignalDetector().detect("Honestly, you've been a huge help with all this").emotions
    # praise of the past beside a complaint of now is no thanks
    said = "Last week you were helpful, today you just keep going in circles."
    assert Emotion.GRATITUDE not in RuleSignalDetector().detect(said).emotions


@pytest.mark.parametrize(
    "said",
    [
        "Is 'worried' an adjective here, in 'I am worried about it'?",
        'Does "annoyed" take "at" or "with" when it is about a person?',
        "I used to be terrified of exams, now I actually enjoy them. Any revision tips?",
    ],
)
def test_a_feeling_mentioned_in_quotes_or_had_once_is_not_felt_now(said: str) -> None:
    assert find_emotions(said) == ()


@pytest.mark.parametrize(
    "said",
    [
        "Every time I fix one broken import three more appear. I've been at this all morning.",
        "I've been fighting this config file since lunch and it keeps breaking.",
    ],
)
def test_a_struggle_of_their_own_told_to_no_one_is_no_grievance_with_me(said: str) -> None:
    signals = RuleSignalDetector().detect(said)
    assert Emotion.FRUSTRATION in signals.emotions and signals.aimed_elsewhere


def test_they_who_keep_at_it_in_a_message_not_to_me_are_someone_else() -> None:
    said = "I've told the council three times the bin wasn't collected. They keep saying it was."
    signals = RuleSignalDetector().detect(said)
    assert Emotion.FRUSTRATION in signals.emotions and signals.aimed_elsewhere
    # said to me, "they" may be my answers
    assert not RuleSignalDetector().detect("Your answers are long. They keep going on and on.").aimed_elsewhere


def test_the_same_struggle_said_to_me_is_aimed_at_me() -> None:
    signals = RuleSignalDetector().detect("Every time I run your fix three more errors appear. You keep breaking it.")
    assert Emotion.FRUSTRATION in signals.emotions and not signals.aimed_elsewhere


@pytest.mark.parametrize(
    ("said", "felt"),
    [
        ("Thanks for nothing, I'll ask a human.", Emotion.FRUSTRATION),
        ("Could you for once just answer the question I asked?", Emotion.FRUSTRATION),
        ("Skip the history lesson I didn't ask for and give me the command.", Emotion.FRUSTRATION),
        ("Two hours on hold again. How is anyone supposed to reach them?", Emotion.FRUSTRATION),
        ("She has had a fever since Tuesday and a rash now. Is it something serious?", Emotion.ANXIETY),
        ("Presentation in ten minutes and my hands are shaking.", Emotion.ANXIETY),
    ],
)
def test_exasperation_and_fear_in_so_many_words(said: str, felt: Emotion) -> None:
    assert felt in find_emotions(said)


def test_for_once_in_good_news_and_thanks_for_help_are_no_exasperation() -> None:
    assert Emotion.FRUSTRATION not in find_emotions("For once the train was on time and I'm thrilled")
    assert find_emotions("Thanks for the help!") == (Emotion.GRATITUDE,)


@pytest.mark.parametrize(
    "said",
    [
        "Write a short scene where the villain is furious at his own reflection.",
        "For a character in my play: how would a frightened witness act in court?",
        "Everyone says I should be nervous about the move, but honestly I can't wait.",
        "lol I'm the least stressed person in my office. how do I look busier?",
    ],
)
def test_a_characters_feeling_one_expected_of_them_or_the_least_of_it_is_not_felt(said: str) -> None:
    assert not set(find_emotions(said)) & {Emotion.ANXIETY, Emotion.FRUSTRATION, Emotion.ANGER}


def test_their_own_feeling_about_their_story_is_still_felt() -> None:
    assert Emotion.ANXIETY in find_emotions("I'm so stressed about my novel's deadline")


def test_a_feeling_said_outright_beside_a_quote_is_still_felt() -> None:
    assert find_emotions('I\'m so worried about the "final" exam tomorrow') == (Emotion.ANXIETY,)


def test_vader_detector_reads_a_message() -> None:
    signals = RuleSignalDetector().detect("WHY IS THIS STILL BROKEN? THIS IS RIDICULOUS!!")
    assert signals.emotions == (Emotion.ANGER,) and signals.shouting and not signals.crisis
    assert signals.mood_delta < -0.5 and signals.detector == "vader+rules"
    assert VaderSentimentScorer().polarity("   ") == 0.0


def test_combine_takes_flags_of_any_message_the_mood_they_end_on_and_the_last_intent() -> None:
    first = Signals(emotions=(Emotion.ANGER,), shouting=True, mood_delta=-0.6, intent=Intent.QUESTION)
    second = Signals(emotions=(Emotion.GRATITUDE,), shouting=False, mood_delta=0.2, intent=Intent.FEEDBACK)
    combined = combine([first, second])
    assert combined.emotions == (Emotion.ANGER, Emotion.GRATITUDE)
    assert combined.shouting and not combined.crisis and combined.intent is Intent.FEEDBACK
    assert combined.mood_delta == pytest.approx(-0.6 + 0.7 * (0.2 - -0.6))
    assert combine([]) == Signals()


def test_the_mood_of_an_interaction_weighs_its_later_messages_more_and_skips_messages_without_one() -> None:
    assert ended_mood([-0.6, 0.6]) > 0 > ended_mood([0.6, -0.6])
    assert ended_mood([0.0, -0.5, 0.0]) == pytest.approx(-0.5)
    assert ended_mood([0.5, 0.0, 0.5]) == pytest.approx(0.5)
    assert ended_mood([]) == ended_mood([0.0, 0.0]) == 0.0


def test_a_problem_reported_and_then_reported_solved_leaves_the_person_better_off() -> None:
    # Given a complaint about a broken deploy, then word that the fix worked
    detector = RuleSignalDetector()
    problem = detector.detect("the deploy keeps failing with a horrible permissions error, this is awful")
    solved = detector.detect("that did it, deploy is green now, thank you!")
    assert problem.mood_delta < 0 < solved.mood_delta < -problem.mood_delta
    # Then the interaction's mood is good news, though the mean of the two is bad; the other way round it is bad
    assert (problem.mood_delta + solved.mood_delta) / 2 < 0 < combine([problem, solved]).mood_delta
    assert combine([solved, problem]).mood_delta < 0


def test_combine_lets_no_message_average_a_crisis_away() -> None:
    # Given a crisis message followed by a polite, positive one
    crisis = Signals(crisis=True, mood_delta=-0.6, intent=Intent.EMOTIONAL_SUPPORT)
    polite = Signals(emotions=(Emotion.GRATITUDE,), mood_delta=0.9, intent=Intent.FEEDBACK)
    combined = combine([crisis, polite])
    # Then the interaction is still a crisis asking for support, with a negative mood
    assert combined.crisis and combined.intent is Intent.EMOTIONAL_SUPPORT
    assert combined.mood_delta <= -0.6


def test_metadata_round_trip_and_malformed_metadata() -> None:
    signals = Signals(emotions=(Emotion.JOY,), shouting=True, intent=Intent.REQUEST, mood_delta=0.5)
    metadata = to_metadata(signals)
    assert metadata["detected_emotions"] == ["joy"] and metadata["intent"] == "request"
    assert from_metadata(metadata) == signals
    about_someone = Signals(emotions=(Emotion.ANGER,), aimed_elsewhere=True, mood_delta=-0.5)
    assert from_metadata(to_metadata(about_someone)) == about_someone
    # an interaction stored before the target was read counts its grievance against the assistant, as it did
    older = to_metadata(about_someone)
    del older["signals"]["aimed_elsewhere"]
    assert from_metadata(older) == about_someone.model_copy(update={"aimed_elsewhere": False})
    assert from_metadata({}) is None
    assert from_metadata({"signals": {"mood_delta": "high"}}) is None
    assert from_metadata({"signals": {}, "detected_emotions": ["boredom"]}) is None


class _FakeModel:
    def __init__(self, answer: SignalReading | Exception) -> None:
        self.answer = answer
        self.calls: list[dict[str, Any]] = []

    @property
    def name(self) -> str:
        return "fake"

    def structured(self, *, system: str, user: str, response_model: type) -> Any:
        self.calls.append({"system": system, "user": user, "response_model": response_model})
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def reply(self, *, system: str, messages: list[Message]) -> str | None:
        return None


def test_llm_detector_uses_the_model_and_keeps_typography_and_crisis_rules() -> None:
    model = _FakeModel(SignalReading(emotions=[Emotion.SADNESS], intent=Intent.QUESTION, mood_delta=-0.4, crisis=False))
    detector = LanguageModelSignalDetector(model, RuleSignalDetector())
    signals = detector.detect("WHY DOES NOBODY CARE, I WANT TO DIE")
    assert model.calls[0]["user"] == "WHY DOES NOBODY CARE, I WANT TO DIE"
    # The model missed the crisis; the rules did not, and either one is enough (its mood held at the crisis ceiling).
    assert signals.emotions == (Emotion.SADNESS,) and signals.mood_delta == -0.6
    assert signals.crisis and signals.intent is Intent.EMOTIONAL_SUPPORT and signals.shouting
    assert signals.detector == "llm:fake"


def test_llm_detector_holds_a_crisis_it_sees_to_the_same_contract_as_the_rules() -> None:
    # Given a model that flags a crisis the rules miss, with a cheerful mood and a plain intent
    model = _FakeModel(SignalReading(emotions=[Emotion.JOY], intent=Intent.STATEMENT, mood_delta=0.7, crisis=True))
    signals = LanguageModelSignalDetector(model, RuleSignalDetector()).detect("I'll be gone soon, it's fine :)")
    # Then the reading is a crisis: support, and a mood that cannot raise sentiment
    assert signals.crisis and signals.intent is Intent.EMOTIONAL_SUPPORT and signals.mood_delta <= -0.6
    # and the model was told the scenarios the rules follow
    assert "anxiety, not frustration" in model.calls[0]["system"] and "never positive" in model.calls[0]["system"]


def test_llm_detector_reads_whom_a_grievance_is_about_from_the_words() -> None:
    model = _FakeModel(SignalReading(emotions=[Emotion.ANGER], intent=Intent.STATEMENT, mood_delta=-0.6, crisis=False))
    detector = LanguageModelSignalDetector(model, RuleSignalDetector())
    about_landlord = detector.detect("My landlord ignored the leak for a month. I'm furious.")
    at_assistant = detector.detect("You ignored what I asked for a month. I'm furious.")
    assert about_landlord.aimed_elsewhere and not about_landlord.effect().anger
    assert not at_assistant.aimed_elsewhere and at_assistant.effect().anger


@pytest.mark.parametrize("failure", [UpstreamError("down"), InvalidModelOutputError("garbled")])
def test_llm_detector_falls_back_to_rules(failure: Exception) -> None:
    signals = LanguageModelSignalDetector(_FakeModel(failure), RuleSignalDetector()).detect("I'm so frustrated")
    assert signals.emotions == (Emotion.FRUSTRATION,) and signals.detector == "vader+rules"


def test_an_emotion_read_by_meaning_counts_where_the_rules_found_none_and_blames_me_only_if_spoken_to() -> None:
    from rapport.domain.signals import read_message

    elsewhere = read_message(
        "the printer ate my thesis draft twenty minutes before the deadline", -0.4, felt=Emotion.FRUSTRATION
    )
    at_me = read_message("third time I'm asking you the same thing", -0.2, felt=Emotion.FRUSTRATION)
    cued = read_message("I'm so worried about the scan results", -0.5, felt=Emotion.FRUSTRATION)

    assert elsewhere.emotions == (Emotion.FRUSTRATION,) and elsewhere.aimed_elsewhere
    assert at_me.emotions == (Emotion.FRUSTRATION,) and not at_me.aimed_elsewhere
    # the rules' own reading stands where they found one
    assert cued.emotions == (Emotion.ANXIETY,)


@pytest.mark.parametrize(
    "said",
    [
        "Stop. That's wrong. Read what I wrote.",
        "That's not what I asked for.",
        "Again with the bullet points. I said plain paragraphs.",
    ],
)
def test_a_grievance_about_what_i_was_told_is_aimed_at_me_without_a_you(said: str) -> None:
    from rapport.domain.signals import read_message

    felt = read_message(said, -0.3, felt=Emotion.FRUSTRATION)
    assert not felt.aimed_elsewhere and felt.effect().frustration


@pytest.mark.parametrize(
    ("said", "elsewhere"),
    [
        ("ugh my train is late again", True),
        ("omg our wifi keeps dropping", True),
        ("ugh this answer keeps missing the point", False),
        ("ugh the build keeps failing", False),
    ],
)
def test_a_sigh_before_the_subject_leaves_the_grievance_with_its_subject(said: str, elsewhere: bool) -> None:
    from rapport.domain.signals import read_message

    assert read_message(said, -0.4).aimed_elsewhere is elsewhere


def test_what_was_said_to_someone_else_is_still_about_them() -> None:
    from rapport.domain.signals import read_message

    told = read_message("I said to my landlord the boiler is broken and he still ignores me. So annoying.", -0.4)
    assert told.aimed_elsewhere and not told.effect().frustration
    refused = read_message("I said no to my landlord and he keeps calling. So annoying.", -0.4)
    assert refused.aimed_elsewhere and not refused.effect().frustration


class _Probe:
    """A semantic layer whose emotion probe says what it is told to, and counts what it was asked."""

    def __init__(self, odds: dict[str, float]) -> None:
        self.odds, self.asked = odds, []

    def probabilities(self, classifier: str, texts: list[str]) -> list[dict[str, float]]:
        self.asked.append((classifier, list(texts)))
        return [self.odds for _ in texts]


def test_the_detector_asks_the_emotion_probe_where_the_rules_found_nothing_or_frustration_alone() -> None:
    sure = _Probe({"anxiety": 0.8, "frustration": 0.1, "none": 0.1})
    detector = RuleSignalDetector(semantics=sure)  # type: ignore[arg-type]

    assert detector.detect("the op is at 8am tomorrow").emotions == (Emotion.ANXIETY,)
    # the rules' repetition cue read as frustration is a worry by meaning
    assert detector.detect("I keep checking the clock").emotions == (Emotion.ANXIETY,)
    assert detector.detect("I'm so worried about it").emotions == (Emotion.ANXIETY,)  # the rules' cue, not asked
    assert sure.asked == [("emotion", ["the op is at 8am tomorrow"]), ("emotion", ["I keep checking the clock"])]
    unsure = RuleSignalDetector(semantics=_Probe({"anxiety": 0.5, "frustration": 0.2, "none": 0.3}))  # type: ignore[arg-type]
    assert unsure.detect("the op is at 8am tomorrow").emotions == ()
    # a frustration the rules read is never turned into none or another grievance by the probe
    angry = RuleSignalDetector(semantics=_Probe({"anxiety": 0.1, "frustration": 0.1, "none": 0.8}))  # type: ignore[arg-type]
    assert angry.detect("this is so frustrating").emotions == (Emotion.FRUSTRATION,)


@pytest.mark.parametrize(
    "said",
    [
        "my sister is so stressed about her exams, what can I get her?",
        "My colleague is panicking about the audit, how do I help?",
        "what makes people so anxious about flying?",
    ],
)
def test_a_feeling_someone_else_has_is_not_theirs(said: str) -> None:
    assert find_emotions(said) == ()


def test_their_own_feeling_beside_someone_elses_is_still_felt() -> None:
    assert find_emotions("I'm so stressed about my exams") == (Emotion.ANXIETY,)


@pytest.mark.parametrize(
    "said",
    [
        "You've mixed up Austria and Australia again.",
        "That's the same broken query as before.",
        "are you even reading my messages",
        "Thanks for the script. Shame it doesn't run.",
        "you got the date wrong again",
    ],
)
def test_my_slip_told_plainly_is_frustration(said: str) -> None:
    assert Emotion.FRUSTRATION in find_emotions(said)


def test_my_success_again_is_no_slip() -> None:
    assert Emotion.FRUSTRATION not in find_emotions("you got it right again, thanks!")
