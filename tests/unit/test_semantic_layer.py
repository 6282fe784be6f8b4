"""The semantic layer's mechanics with a fake encoder (no model): bars and margins, prototypes embedded once and
sentences in one batch, the notes' voice, and the patterns alone when the embedder has no calibration."""

from __future__ import annotations

import math

import pytest

from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.composition.language_models import build_rules_model
from rapport.domain.models import MessageRole
from rapport.domain.prompts import extract_relational, payload
from rapport.domain.prompts.conversation import ConversationInput, PromptMessage
from rapport.domain.rules.model import RulesLanguageModel
from rapport.domain.rules.relational_rules import extract_relational as relational_rules
from rapport.domain.semantics import prototypes
from rapport.domain.semantics.matcher import MINILM, Calibration, SemanticLayer, semantic_layer
from rapport.domain.semantics.voice import about_user, assistant_voice, clipped
from rapport.settings import Settings

# Words that pull a text towards one relational label; a text with none of them lands nowhere in particular.
_CUES = {
    "bullet": "format",
    "table": "format",
    "hint": "working_style",
    "helped": "approach_worked",
    "usual": "habit",
    "hotels": "shared_research",
    "thanks": "none_chat",
}
_AXES = sorted(set(prototypes.RELATIONAL) | set(prototypes.USER) | set(prototypes.FILTER) | set(prototypes.OUTCOME))


class CueEncoder:
    """One axis per label; a text points along the labels its cue words name (and a little along every axis, so
    no vector is zero). Counts what it is asked, to check batching and the prototype cache."""

    def __init__(self, name: str = "cue-encoder") -> None:
        self._name = name
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return self._name

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [self._one(text) for text in texts]

    def _one(self, text: str) -> list[float]:
        vector = [0.05] * len(_AXES)
        lowered = text.lower()
        for cue, label in _CUES.items():
            if cue in lowered:
                vector[_AXES.index(label)] += 1.0
        for label, sentences in prototypes.RELATIONAL.items():
            if text in sentences:  # a prototype points along its own label
                vector[_AXES.index(label)] += 1.0
        norm = math.sqrt(sum(v * v for v in vector))
        return [v / norm for v in vector]


def layer(encoder: CueEncoder, threshold: float = 0.5, margin: float = 0.05) -> SemanticLayer:
    bars = Calibration(threshold=threshold, margin=margin)
    return SemanticLayer(encoder, {"relational": bars, "outcome": bars, "user": bars, "filter": bars})


def conversation(*turns: tuple[MessageRole, str]) -> ConversationInput:
    return ConversationInput(
        messages=[PromptMessage(index=i, role=role, content=text) for i, (role, text) in enumerate(turns)]
    )


def test_a_sentence_takes_the_label_of_its_nearest_prototypes_when_it_clears_the_bar_and_the_margin() -> None:
    matches = layer(CueEncoder()).classify(
        "relational", ["Bullet points please.", "Nothing to see here.", "Thanks a lot!"]
    )

    assert matches[0].label == "format"
    assert matches[1].label is None  # near nothing: below the bar
    assert matches[2].label is None and matches[2].nearest == "none_chat"  # nearest a label that keeps nothing


def test_a_sentence_between_two_labels_takes_neither() -> None:
    # Given a sentence as close to a format preference as to a working style
    match = layer(CueEncoder(), threshold=0.3).classify("relational", ["A table, and a hint."])[0]

    # Then the margin over the runner-up is not there, and nothing is kept
    assert match.label is None and match.margin < 0.05


def test_prototypes_are_embedded_once_per_model_and_sentences_in_one_batch_each() -> None:
    encoder = CueEncoder(name="cue-encoder-batching")
    first, second = layer(encoder), layer(encoder)

    first.classify("relational", ["Bullet points please.", "A hint, please."])
    second.classify("relational", ["Bullet points please.", "Use tables."])

    prototype_calls = [c for c in encoder.calls if len(c) > 10]
    assert len(prototype_calls) == 1  # a second layer over the same model reuses the matrix
    assert [c for c in encoder.calls if len(c) <= 10] == [
        ["Bullet points please.", "A hint, please."],
        ["Bullet points please.", "Use tables."],  # the second layer has its own recent vectors
    ]
    first.classify("relational", ["A hint, please.", "Bullet points please."])
    assert len(encoder.calls) == 3  # both seen recently by this layer: no call


def test_the_semantic_layer_adds_a_lesson_the_patterns_miss_in_the_assistants_voice() -> None:
    chat = conversation((MessageRole.USER, "Honestly, a table beats your paragraphs for me."))

    patterns_alone = relational_rules(chat)
    with_meaning = relational_rules(chat, semantics=layer(CueEncoder()))

    assert patterns_alone.memories == []
    (memory,) = with_meaning.memories
    assert memory.type.value == "communication_preference"
    assert memory.content == "How to answer this user: a table beats my paragraphs for them"
    assert memory.evidence == [0]


@pytest.mark.parametrize(
    ("sentence", "note"),
    [
        ("I'm really into bouldering lately.", "User is really into bouldering lately"),
        ("I really love hiking in the mountains.", "User really loves hiking in the mountains"),
        ("I honestly only like dry cider.", "User honestly only likes dry cider"),
        ("I finally moved my savings to a new bank.", "User finally moved their savings to a new bank"),
        ("My exam is next Tuesday and I haven't started.", "User's exam is next Tuesday and they haven't started"),
        # a "we" of their own life is the user's; what they do together or to each other stays theirs
        ("We're moving house on the 30th.", "User is moving house on the 30th"),
        ("we were in Rome last week", "User was in Rome last week"),
        ("Our basement flooded last night", "User's basement flooded last night"),
        ("We've got two rescue greyhounds", "User has got two rescue greyhounds"),
        ("we both prefer aisle seats", "User says: they both prefer aisle seats"),
        ("We met at uni", "User says: they met at uni"),
        ("we tried the new Thai place together", "User says: they tried the new Thai place together"),
        ("I switched teams in March.", "User switched teams in March"),
        # a second verb after "but" shares the "I"; a chat's closing "btw" is no part of the note
        ("I'm from Porto but live in Leeds.", "User is from Porto but lives in Leeds"),
        ("I like to cook but hate washing up", "User likes to cook but hates washing up"),
        ("I have type 1 diabetes btw", "User has type 1 diabetes"),
        # and after "and", where an adverb before it or an object after it says it is a verb
        ("I'm vegan and never eat honey.", "User is vegan and never eats honey"),
        ("I have two kids and coach their team", "User has two kids and coaches their team"),
        ("I'm 34 and have never learned to swim", "User is 34 and has never learned to swim"),
        ("I'm vegan and don't drink", "User is vegan and doesn't drink"),
        ("I'm autistic and take things literally", "User is autistic and takes things literally"),
        ("I want to retire at 55 and live by the sea", "User wants to retire at 55 and live by the sea"),
        # two infinitives, a modal's two verbs, a noun: left as said
        ("I like to cook and travel", "User likes to cook and travel"),
        ("I can cook and drive", "User can cook and drive"),
        ("I love music and travel", "User loves music and travel"),
        # a present that ends as a past does
        ("I need a quieter flat", "User needs a quieter flat"),
        # what the sentence asks me is no part of the note, before or after what it tells; a relative clause is
        ("I'm at 8k now, what should my weekly plan look like", "User is at 8k now"),
        ("I'm planning a weekend in Porto, where should I stay", "User is planning a weekend in Porto"),
        ("what should I order — coriander tastes like soap to me", "User says: coriander tastes like soap to them"),
        ("I'm a carer for my dad, who has Parkinson's", "User is a carer for their dad, who has Parkinson's"),
        # the user and someone of theirs, one subject
        (
            "My husband and I are vegetarian and our son is allergic to nuts",
            "User and their husband are vegetarian and their son is allergic to nuts",
        ),
        ("me and my partner are moving to Leeds", "User and their partner are moving to Leeds"),
        # a verb of how they are after a comma shares the "I"; what they ask of me after one does not
        ("I'm 29, live in Manchester", "User is 29, lives in Manchester"),
        ("I have type 1 diabetes, keep that in mind", "User has type 1 diabetes, keep that in mind"),
        # after "and", a verb of where they work or live, followed by where
        ("I'm 34 and work in marketing", "User is 34 and works in marketing"),
        ("I like my job and work is fine", "User likes their job and work is fine"),
        ("I want to retire at 55 and work in Spain", "User wants to retire at 55 and work in Spain"),
        # an adverb before the verb is not the verb
        ("I already have pine nuts", "User already has pine nuts"),
        # a modal stays as it is
        ("I cannot tolerate lactose", "User cannot tolerate lactose"),
        ("I shall speak to the pharmacist tomorrow", "User shall speak to the pharmacist tomorrow"),
        ("I normally cycle to work", "User normally cycles to work"),
        # "US" in capitals is the country, not "us"
        ("I want to see every national park in the US", "User wants to see every national park in the US"),
    ],
)
def test_a_user_memory_is_about_the_user_in_the_third_person(sentence: str, note: str) -> None:
    assert about_user(sentence) == note


@pytest.mark.parametrize(
    ("sentence", "said"),
    [
        ("Give me a hint, I want to figure it out myself.", "Give them a hint, they want to figure it out themselves"),
        ("Your idea of adding logs helped me a lot.", "my idea of adding logs helped them a lot"),
        ("I'd rather you skip the pleasantries.", "they'd rather I skip the pleasantries"),
        ("Can you pull up the hotels we looked at?", "pull up the hotels we looked at"),
        ("Like you always tell me, start small.", "Like I always tell them, start small"),
        ("Picking up Atlas again.", "picking up Atlas again"),
        # "you" opening a clause is its subject whatever verb follows
        (
            "When you rewrote my intro I could see what you changed.",
            "when I rewrote their intro they could see what I changed",
        ),
        ("I find it easier when you number the steps.", "they find it easier when I number the steps"),
        ("Thanks, that helps you too.", "that helps me too"),  # the thanks are no part of the note
        # and after a comma, a colon or a dash, where a clause opens
        ("Here's the chapter, you flag anything unclear.", "here's the chapter, I flag anything unclear"),
        ("thank you, you put it well", "I put it well"),
        ("true, you put it well", "true, I put it well"),
        # thank-you notes are the user's to send
        ("I owe everyone thank you cards.", "they owe everyone thank you cards"),
        # the doer of a gerund is "me"
        ("You explaining it first worked for me.", "me explaining it first worked for them"),
        ("When you bring examples it helps.", "when I bring examples it helps"),
        ("I draft it, then you pull it apart.", "they draft it, then I pull it apart"),
        # a past tense makes "you" its subject wherever it stands, and a verb after it agrees with "I"
        ("The analogy you used made it click.", "the analogy I used made it click"),
        ("the roleplay where you were the landlord", "the roleplay where I was the landlord"),
        ("I kept the options for you listed below.", "they kept the options for me listed below"),
        # after a noun named with "the", "a", "that"…, "you" is the subject of the clause that names it
        ("The seed you need is in the packet.", "the seed I need is in the packet"),
        ("the step-by-step list you wrote was perfect", "the step-by-step list I wrote was perfect"),
        ("check whether you think it's ok", "check whether I think it's ok"),
        ("give the team you trust the easy parts", "give the team I trust the easy parts"),
        ("that timeline you set out worked", "that timeline I set out worked"),
        ("these notes you keep sending help", "these notes I keep sending help"),
        # ...but a demonstrative before a verb is its subject, and "you" the object
        ("that cost you a fortune", "that cost me a fortune"),
        ("that kept you busy", "that kept me busy"),
        # "you and I" are the assistant and the user
        ("the complaint that you and I drafted worked", "the complaint that we drafted worked"),
        ("between you and I, the plan you made was too much", "between us, the plan I made was too much"),
        ("the trip you and me planned", "the trip we planned"),
        # a clause that ends after "you" has no verb of its
        ("I'm blocking you, just kidding", "they are blocking me, just kidding"),
        # named in two or three words, as in one ("set", "put", "cut" are no past by their form)
        ("the packing list you set up for me", "the packing list I set up for them"),
        ("the spaced repetition deck you put together helped", "the spaced repetition deck I put together helped"),
        ("I will let you set it up", "they will let me set it up"),
        ("help you cut it down", "help me cut it down"),
        ("can I let you put the numbers in", "can they let me put the numbers in"),
        ("that video made you put it off", "that video made me put it off"),
        ("a thank you card", "a thank you card"),
        ("that made you laugh", "that made me laugh"),
        # "have you" before a verb's plain form has me do it; before a participle it asks me
        (
            "I write the tests myself and have you write the implementation",
            "they write the tests themselves and have me write the implementation",
        ),
        ("have you tried it?", "have I tried it"),
        # asked, "you" follows its verb, and the verb agrees with "I"
        ("Are you sure that helps?", "am I sure that helps"),
        ("ok but why were you so brief", "but why was I so brief"),
        ("did you get my notes", "did I get their notes"),
        ("I told you twice.", "they told me twice"),
        # news openers are the chat's, not the note's; "update" asked for is kept
        ("Quick update: the query we rewrote runs in 3 minutes.", "the query we rewrote runs in 3 minutes"),
        ("Good news: the letter we wrote got me an interview!", "the letter we wrote got them an interview"),
        ("update the docs with one example each please", "update the docs with one example each please"),
        ("hey again; so the trip we planned is booked", "the trip we planned is booked"),
        # a request put to me is kept as what it asks, not as the assistant asking ("can I lead with…")
        ("from now on can you lead with the steps", "from now on lead with the steps"),
        ("Like every week, could you help me sort my inbox?", "Like every week, help them sort their inbox"),
        ("could you, in general, write to me in plain English", "in general, write to them in plain English"),
        ("sorry, can u explain that last bit more simply?", "explain that last bit more simply"),
        ("pls stop with the emojis", "stop with the emojis"),
        ("what can you do about my slow laptop", "what can I do about their slow laptop"),
        # thanks said to me are no part of the note; what they were for is
        ("Thank you, knowing the steps calms me down", "knowing the steps calms them down"),
        ("Cheers for the practice paper you made", "the practice paper I made"),
        ("the choice kind of made itself, thanks for that", "the choice kind of made itself"),
        ("it finally made sense, so thank you for that!", "it finally made sense"),
    ],
)
def test_a_relational_note_speaks_as_the_assistant_of_the_user(sentence: str, said: str) -> None:
    assert assistant_voice(sentence) == said


def test_with_an_embedder_it_has_no_calibration_for_the_layer_is_off_and_the_patterns_answer() -> None:
    hashing = HashingEmbedder(64)

    assert semantic_layer(hashing) is None
    assert semantic_layer(None) is None
    model = build_rules_model(Settings(), hashing)
    assert model.semantics is None
    chat = conversation((MessageRole.USER, "Please use bullet points, long paragraphs are hard to scan."))
    answer = model.structured(
        system=extract_relational.SYSTEM,
        user=payload.render(extract_relational.TASK, chat),
        response_model=extract_relational.RelationalExtraction,
    )
    assert [m.content for m in answer.memories] == [m.content for m in relational_rules(chat).memories]


def test_the_layer_is_built_for_minilm_by_default_and_the_settings_turn_it_off() -> None:
    from rapport.adapters.local.minilm import MiniLmEmbedder

    minilm = MiniLmEmbedder()  # constructing it loads nothing
    assert minilm.name == MINILM
    assert build_rules_model(Settings(), minilm).semantics is not None
    assert build_rules_model(Settings(semantic_layer=False), minilm).semantics is None
    assert not minilm.loaded


def test_the_rules_model_keeps_its_name_with_the_layer() -> None:
    # Recorded with each memory and read by the signal detector's wiring: the layer is part of "rules".
    assert RulesLanguageModel(semantics=layer(CueEncoder())).name == "rules"


def test_the_language_models_fallback_is_the_rule_layer_with_its_semantic_layer() -> None:
    from rapport.adapters.local.minilm import MiniLmEmbedder
    from rapport.composition.adapters import build_fallback_model
    from rapport.domain.prompts import constructive_filter, examples, extract_user

    class SomeModel:
        name = "openai:gpt-4o-mini"

    fallback = build_fallback_model(Settings(semantic_layer=True), SomeModel(), MiniLmEmbedder())  # type: ignore[arg-type]
    assert isinstance(fallback, RulesLanguageModel) and fallback.semantics is not None
    # The model is shown the same scenarios as guidance.
    assert examples.RELATIONAL in extract_relational.SYSTEM and "where to start" in extract_relational.SYSTEM
    assert examples.USER in extract_user.SYSTEM and examples.FILTER in constructive_filter.SYSTEM


@pytest.mark.parametrize(
    ("said", "told"),
    [
        ("I got a mac for home back in august", "User got a mac for home back in august"),
        ("I ran a marathon", "User ran a marathon"),
        ("I run marathons", "User runs marathons"),
        # a verb whose past is its present is a past when the sentence says when
        ("I put my back out lifting boxes yesterday", "User put their back out lifting boxes yesterday"),
        ("I cut my hand cooking last night", "User cut their hand cooking last night"),
        ("I put the kettle on every morning", "User puts the kettle on every morning"),
    ],
)
def test_a_past_form_without_ed_takes_no_s(said: str, told: str) -> None:
    assert about_user(said) == told


def test_a_long_sentence_is_read_clause_by_clause_and_a_dropped_i_is_put_back() -> None:
    from rapport.domain.semantics.user import _readings, with_subject

    readings = _readings("quick q - been vegetarian for like 9 years now, what's a decent protein to eat after a run?")
    assert "been vegetarian for like 9 years now" in readings
    assert not any(r.endswith("?") for r in readings)  # the question is left out, whole and as a clause
    assert _readings("I'm left-handed, so no.") == ["I'm left-handed, so no."]  # a short sentence is read whole
    # From six words a fact said in passing in a request is read on its own too.
    # (Not a condition the patterns name, "I have type 1 diabetes btw": that clause is theirs to read.)
    assert "I have a bad back btw" in _readings("I have a bad back btw, so workouts need to be gentle")
    assert "I'm very short-sighted" in _readings("I'm very short-sighted, so large fonts please.")
    assert about_user(with_subject("been vegetarian for 9 years")) == "User has been vegetarian for 9 years"
    # "left" is a verb that dropped its "I", but not before a side of the body
    assert with_subject("left my job at the bank last week") == "I left my job at the bank last week"
    assert with_subject("Left ear has been deaf for years") == "Left ear has been deaf for years"
    assert with_subject("left-handed, so scissors are hard") == "left-handed, so scissors are hard"
    assert with_subject("used to live in Berlin") == "I used to live in Berlin"
    assert with_subject("applying for a visa next month") == "I'm applying for a visa next month"


class WideEncoder:
    """Unit vectors of a given width, drawn from each text, under a given model's name."""

    def __init__(self, name: str, width: int) -> None:
        self.name = name
        self._width = width

    def embed(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        found = []
        for text in texts:
            vector = np.random.default_rng(sum(map(ord, text))).standard_normal(self._width)
            found.append((vector / np.linalg.norm(vector)).tolist())
        return found


def test_the_probe_gives_each_relational_type_a_probability_over_the_vectors_it_was_trained_on() -> None:
    minilm = layer(WideEncoder(MINILM, 384))  # type: ignore[arg-type]

    odds = minilm.probabilities("relational", ["The timeline you drew made it clear.", "Nice weather today."])

    assert odds is not None and len(odds) == 2
    for row in odds:
        assert {"approach_effectiveness", "communication_preference", "none"} <= set(row)
        assert math.isclose(sum(row.values()), 1.0, rel_tol=1e-5)
        assert all(0.0 < p < 1.0 for p in row.values())
    assert odds[0] != odds[1]
    assert minilm.probabilities("relational", []) == []


def test_no_probe_speaks_for_another_model_another_width_or_a_classifier_it_was_not_trained_for() -> None:
    assert layer(WideEncoder("another-model", 384)).probabilities("relational", ["a b"]) is None  # type: ignore[arg-type]
    assert layer(WideEncoder(MINILM, 8)).probabilities("relational", ["a b"]) is None  # type: ignore[arg-type]
    assert layer(WideEncoder(MINILM, 384)).probabilities("outcome", ["a b"]) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "limit", "clip"),
    [
        ("the timeouts are gone now", 18, "the timeouts are…"),
        ("the timeouts are gone", 21, "the timeouts are gone"),
        ("pin it to the last version, then rebuild", 27, "pin it to the last version…"),
        ("unbroken", 5, "unbr…"),
    ],
)
def test_a_long_note_is_cut_after_a_word_and_marked(text: str, limit: int, clip: str) -> None:
    assert clipped(text, limit) == clip
    assert len(clipped(text, limit)) <= limit
