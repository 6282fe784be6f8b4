"""Signals in a user's words (emotions, shouting, crisis language, intent, mood): pure rules over the rule tables."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rapport.domain import signal_rules as rules
from rapport.domain.people import find_mentions
from rapport.domain.people_rules import ROLE_WORDS
from rapport.domain.relational_state import InteractionEffect
from rapport.domain.text import STOPWORDS


class Emotion(StrEnum):
    FRUSTRATION = "frustration"
    ANGER = "anger"
    ANXIETY = "anxiety"
    SADNESS = "sadness"
    JOY = "joy"
    GRATITUDE = "gratitude"


class Intent(StrEnum):
    EMOTIONAL_SUPPORT = "emotional_support"
    REQUEST = "request"
    FEEDBACK = "feedback"
    SMALL_TALK = "small_talk"
    QUESTION = "question"
    STATEMENT = "statement"


class Signals(BaseModel):
    """What was detected in one message, or in all user messages of one interaction."""

    model_config = ConfigDict(frozen=True)

    emotions: tuple[Emotion, ...] = ()
    shouting: bool = False
    crisis: bool = False
    intent: Intent = Intent.STATEMENT
    mood_delta: float = Field(0.0, ge=-1.0, le=1.0)
    # The frustration and anger are about someone else (a boss, a colleague), not the assistant.
    aimed_elsewhere: bool = False
    detector: str = "rules"

    def effect(self) -> InteractionEffect:
        """The part the relational state reacts to: a grievance about someone else is felt, and sets the mood, but
        it is no grudge against the assistant."""
        return InteractionEffect(
            frustration=Emotion.FRUSTRATION in self.emotions and not self.aimed_elsewhere,
            anger=Emotion.ANGER in self.emotions and not self.aimed_elsewhere,
            shouting=self.shouting,
            crisis=self.crisis,
            mood_delta=self.mood_delta,
        )


@dataclass(frozen=True)
class _Compiled:
    emotions: tuple[tuple[Emotion, tuple[re.Pattern[str], ...]], ...]
    frustration_unless_worried: tuple[re.Pattern[str], ...]
    crisis: tuple[re.Pattern[str], ...]
    intents: tuple[tuple[Intent, tuple[re.Pattern[str], ...]], ...]
    first_person: re.Pattern[str]
    repeated_exclamation: re.Pattern[str]
    spoken_to: re.Pattern[str]  # speaks to the assistant: "you", or what it was told ("I said…")
    third_person: re.Pattern[str]
    thing_subject: re.Pattern[str]


@cache
def _compiled() -> _Compiled:
    return _Compiled(
        emotions=tuple(
            (Emotion(name), tuple(re.compile(rf"\b(?:{cue})\b") for cue in cues))
            for name, cues in rules.EMOTION_CUES.items()
        ),
        frustration_unless_worried=tuple(re.compile(rf"\b(?:{cue})\b") for cue in rules.FRUSTRATION_UNLESS_WORRIED),
        crisis=tuple(re.compile(p) for p in rules.CRISIS_PATTERNS),
        intents=tuple(
            (Intent(name), tuple(re.compile(p) for p in patterns)) for name, patterns in rules.INTENT_PATTERNS
        ),
        first_person=re.compile(rules.FIRST_PERSON),
        repeated_exclamation=re.compile(rules.SHOUTING_REPEATED_EXCLAMATION),
        spoken_to=re.compile(rf"{rules.SECOND_PERSON}|{rules.TOLD_THE_ASSISTANT}"),
        third_person=re.compile(rules.THIRD_PERSON),
        thing_subject=re.compile(rules.THING_SUBJECT),
    )


def normalise(text: str) -> str:
    """Lower case, straight apostrophes, single spaces: the form every pattern is written against."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").lower()
    return re.sub(r"\s+", " ", text).strip()


def _clause_before(text: str, start: int) -> str:
    """The words of its own clause before a cue at `start`: what negates or places a cue is said there ("still not
    sleeping, the dread…" negates the sleeping, not the dread)."""
    return re.split(r"[,;:]", text[:start])[-1]


def _negated(text: str, start: int) -> bool:
    before = re.findall(r"[a-z']+", _clause_before(text, start))[-rules.NEGATION_WINDOW :]
    return any(word in rules.NEGATORS or word.endswith("n't") for word in before)


_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORRY = frozenset({Emotion.ANXIETY, Emotion.SADNESS})


# A word quoted is mentioned, not felt: "is 'worried' an adjective in 'I am worried'?", "is "annoyed" followed by at or
# with?". Single quotes count only around words, not as an apostrophe within one.
_QUOTED = re.compile(r'"[^"]*"|(?<![a-z])\'[^\']{1,60}\'(?![a-z])')
# A feeling they had once and no longer, or one others expect of them, or the least of it: "I used to have terrible
# exam anxiety, but this year I'm fine", "people keep telling me I should be nervous", "the least anxious person".
_ONCE = re.compile(r"\b(?:used to|should be|supposed to be|expected to be|the least)\b")
# A character's feeling, in a sentence about a story that says nothing of the person's own: "a short story where the
# main character is terrified of the dark", "for a character in my screenplay: how would a nervous surgeon act".
_FICTION = re.compile(
    r"\b(?:stor(?:y|ies)|screenplay|script|novel|character|villain|hero|heroine|protagonist|antagonist|narrator|"
    r"scene|role-?play|fan ?fic\w*)\b"
)
_OWN = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|me|myself)\b")


# A feeling someone else has, said of them: "my mum is really stressed about her new job", "my colleague is panicking
# about the audit", "my roommate is livid", "what makes people so scared of flying". Theirs, not the person's. The
# people of a life are the people rules' role words, with the groups and animals a feeling is told of too.
_OTHERS_TOLD_OF = "parent kid child children student customer team character dog cat housemate grandad nan".split()
_THEIR_PEOPLE = "|".join(re.escape(word) for word in sorted({*ROLE_WORDS, *_OTHERS_TOLD_OF}, key=len, reverse=True))
_HELD_BY_OTHERS = re.compile(
    rf"(?:\b(?:my|our|his|her|their) (?:[\w'-]+ ){{0,2}}?(?:{_THEIR_PEOPLE})s?|"
    r"\b(?:he|she|people|everyone|everybody)\b)"
    r"(?:'s| is| are| was| were| gets?| got| seems?| seemed| feels?| felt| looks?| looked)"
    r" (?:(?:really|so|very|a bit|quite|super|absolutely|totally|completely|getting|being) )*$|"
    r"\bmakes? (?:people|everyone|someone|somebody|him|her) (?:so |really |very |more )?$"
)


def _cued(text: str, patterns: Iterable[re.Pattern[str]]) -> bool:
    quoted = [(m.start(), m.end()) for m in _QUOTED.finditer(text)]
    return any(
        not _negated(text, m.start())
        and not _said_of_once(text, m.start())
        and not _within(quoted, m.start())
        and not _HELD_BY_OTHERS.search(_clause_before(text, m.start()))
        for pattern in patterns
        for m in pattern.finditer(text)
    )


def _within(spans: list[tuple[int, int]], at: int) -> bool:
    return any(start <= at < end for start, end in spans)


def _said_of_once(text: str, start: int) -> bool:
    """Whether the cue at `start` is of a feeling they had once, in its clause ("I used to be scared of flying")."""
    return _ONCE.search(_clause_before(text, start)) is not None


_GRIEVANCE = frozenset({Emotion.FRUSTRATION, Emotion.ANGER})


def _sentence_emotions(text: str) -> list[tuple[str, set[Emotion]]]:
    """Each sentence of the normalised text with the emotions cued in it. Repetition and failure ("keeps …ing",
    "still not") are frustration only in a sentence that says no fear or sorrow. A sentence about a story that says
    nothing of the person (`_FICTION`) cues none: its feelings are a character's."""
    read: list[tuple[str, set[Emotion]]] = []
    for sentence in _SENTENCE_BREAK.split(normalise(text)):
        if _FICTION.search(sentence) and not _OWN.search(sentence):
            read.append((sentence, set()))
            continue
        here = {emotion for emotion, patterns in _compiled().emotions if _cued(sentence, patterns)}
        if not here & _WORRY and _cued(sentence, _compiled().frustration_unless_worried):
            here.add(Emotion.FRUSTRATION)
        read.append((sentence, here))
    return read


def _emotions_in(sentences: list[tuple[str, set[Emotion]]]) -> tuple[Emotion, ...]:
    """The emotions of all the sentences, in the rule table's order."""
    found = {emotion for _, here in sentences for emotion in here}
    return tuple(emotion for emotion, _ in _compiled().emotions if emotion in found)


def find_emotions(text: str) -> tuple[Emotion, ...]:
    """Emotions with at least one cue in the text that is not negated, in the rule table's order."""
    return _emotions_in(_sentence_emotions(text))


def _aimed_elsewhere(text: str, sentences: list[tuple[str, set[Emotion]]]) -> bool:
    """Whether the frustration and anger of a message are about someone or something else: no sentence carrying
    the grievance speaks to the assistant ("you keep…"), and the message speaks of someone (a role, a name beside it,
    he or she) or a grievance opens on a thing of the person's own world, not on the assistant's work
    (`rules.THING_SUBJECT`). "My boss moved the deadline again. I'm livid." is about the boss, "this bug is killing
    me" about the bug; "you keep ignoring what I said about my boss" and "the answer is wrong again" are not."""
    grieving = [sentence for sentence, here in sentences if here & _GRIEVANCE]
    compiled = _compiled()
    if not grieving or any(compiled.spoken_to.search(s) for s in grieving):
        return False
    if any(_opens_on_a_thing(s) or _OWN_STRUGGLE.match(s) for s in grieving):
        return True
    # "They keep asking who was driving", in a message that never speaks to me: they are someone else.
    if any(_OTHERS_OPEN.match(s) for s in grieving) and not compiled.spoken_to.search(normalise(text)):
        return True
    return bool(compiled.third_person.search(normalise(text)) or find_mentions(text))


# A grievance told of their own doing, to no one ("every time I fix one failing test two more break", "I've been at
# this since lunch"): their struggle with the thing, not with me.
_OTHERS_OPEN = re.compile(r"^(?:they|people|everyone|everybody|nobody|no one)\b")
_OWN_STRUGGLE = re.compile(r"^(?:(?:every ?time|whenever|each time) i|i(?:'ve| have) been)\b")


def _opens_on_a_thing(sentence: str) -> bool:
    opening = _compiled().thing_subject.match(sentence)
    return opening is not None and opening[1] not in STOPWORDS and opening[1] not in rules.NOT_A_THING


def is_shouting(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    if len(letters) >= rules.SHOUTING_MIN_LETTERS:
        capitals = sum(1 for c in letters if c.isupper())
        if capitals / len(letters) >= rules.SHOUTING_CAPITALS_SHARE:
            return True
    return bool(_compiled().repeated_exclamation.search(text))


def has_crisis_language(text: str) -> bool:
    lowered = normalise(text)
    return any(p.search(lowered) for p in _compiled().crisis)


def classify_intent(text: str, emotions: Iterable[Emotion] = (), crisis: bool = False) -> Intent:
    lowered = normalise(text)
    if crisis:
        return Intent.EMOTIONAL_SUPPORT
    felt = {e.value for e in emotions} & rules.EMOTIONAL_SUPPORT_EMOTIONS
    if felt and _compiled().first_person.search(lowered):
        return Intent.EMOTIONAL_SUPPORT
    for intent, patterns in _compiled().intents:
        if any(p.search(lowered) for p in patterns):
            return intent
    return Intent(rules.DEFAULT_INTENT)


def mood_delta(polarity: float, emotions: Iterable[Emotion]) -> float:
    """The lexicon score (-1..1) when it has an opinion and no unpleasant emotion contradicts it; otherwise the
    mean valence of the emotions. A complaint or a worry whose words the lexicon likes ("just write normal
    paragraphs like a person would", "for god's sake") is no good news: when every emotion found is unpleasant,
    a positive score gives way to them. The other way round the lexicon stands, since "glad" beside a bad day is
    as often relief as it is joy."""
    valences = [rules.EMOTION_VALENCE[e.value] for e in emotions]
    mean = sum(valences) / len(valences) if valences else 0.0
    contradicted = bool(valences) and all(v < 0 for v in valences) and polarity > 0
    if abs(polarity) >= rules.NEUTRAL_POLARITY and not contradicted:
        return max(-1.0, min(1.0, polarity))
    return mean


def with_crisis(mood: float, crisis: bool) -> float:
    """The mood of a message, held at or below the crisis ceiling when it carries crisis language: however its
    words score, it is never read as good news."""
    return min(mood, rules.CRISIS_MOOD_CEILING) if crisis else mood


def read_message(text: str, polarity: float, detector: str = "rules", felt: Emotion | None = None) -> Signals:
    """Every signal of one message, given the lexicon's polarity score of it (-1..1). `felt`: the emotion read by
    meaning: it is taken as the whole message's where no cue of the rules is in the words, and a worry where the rules
    read frustration alone (their cues of repetition, "I keep checking…", are a worry's too). A grievance read so is
    aimed at me only where the message speaks to me: a grudge needs more than a guess."""
    sentences = _sentence_emotions(text)
    emotions = _emotions_in(sentences)
    aimed_elsewhere = _aimed_elsewhere(text, sentences)
    if felt is not None and (not emotions or (felt is Emotion.ANXIETY and emotions == (Emotion.FRUSTRATION,))):
        emotions = (felt,)
        aimed_elsewhere = not _compiled().spoken_to.search(normalise(text))
    crisis = has_crisis_language(text)
    intent = classify_intent(text, emotions, crisis)
    if not emotions and intent in {Intent.QUESTION, Intent.REQUEST} and abs(polarity) < rules.ASKED_POLARITY:
        polarity = 0.0  # what the lexicon likes in asking is no mood (`rules.ASKED_POLARITY`)
    return Signals(
        emotions=emotions,
        aimed_elsewhere=aimed_elsewhere,
        shouting=is_shouting(text),
        crisis=crisis,
        intent=intent,
        mood_delta=with_crisis(mood_delta(polarity, emotions), crisis),
        detector=detector,
    )


def combine(readings: list[Signals]) -> Signals:
    """The signals of an interaction with several user messages: emotions and flags of any message, the mood the
    messages end on (`ended_mood`), and the intent of the last message (what the person wants now) — emotional
    support when any message carries crisis language, whose mood ceiling holds for the whole interaction."""
    if not readings:
        return Signals()
    if len(readings) == 1:
        return readings[0]
    emotions = tuple(dict.fromkeys(e for r in readings for e in r.emotions))
    crisis = any(r.crisis for r in readings)
    grieving = [r for r in readings if set(r.emotions) & _GRIEVANCE]
    return Signals(
        emotions=emotions,
        # a grievance at the assistant in any message is one, whatever the others were about
        aimed_elsewhere=bool(grieving) and all(r.aimed_elsewhere for r in grieving),
        shouting=any(r.shouting for r in readings),
        crisis=crisis,
        # a crisis in one message is not averaged away by a polite "thanks" in another
        intent=Intent.EMOTIONAL_SUPPORT if crisis else readings[-1].intent,
        mood_delta=with_crisis(ended_mood([r.mood_delta for r in readings]), crisis),
        detector=readings[-1].detector,
    )


def ended_mood(moods: list[float]) -> float:
    """The moods of messages in order, as an exponential moving average (`rules.MOOD_RECENCY` toward each): the
    later a message, the more it says how the interaction left the person. A message with no mood reading (0) is
    no evidence and moves nothing, as it moves no sentiment."""
    read = [mood for mood in moods if mood != 0.0]
    if not read:
        return 0.0
    mood = read[0]
    for later in read[1:]:
        mood += rules.MOOD_RECENCY * (later - mood)
    return mood


# Keys the enricher writes on an interaction's metadata (docs/relational-state.md): `detected_emotions` and `intent`
# under their public names, and `signals` the rest, so the relational state can be computed again from the history.
METADATA_EMOTIONS = "detected_emotions"
METADATA_INTENT = "intent"
METADATA_SIGNALS = "signals"


def to_metadata(signals: Signals) -> dict[str, Any]:
    return {
        METADATA_EMOTIONS: [e.value for e in signals.emotions],
        METADATA_INTENT: signals.intent.value,
        METADATA_SIGNALS: {
            "shouting": signals.shouting,
            "crisis": signals.crisis,
            "mood_delta": round(signals.mood_delta, 6),
            "aimed_elsewhere": signals.aimed_elsewhere,
            "detector": signals.detector,
        },
    }


def from_metadata(metadata: Mapping[str, Any]) -> Signals | None:
    """The signals an enricher stored, or None when the interaction carries none (or a malformed set)."""
    block = metadata.get(METADATA_SIGNALS)
    if not isinstance(block, Mapping):
        return None
    try:
        return Signals(
            emotions=tuple(Emotion(e) for e in metadata.get(METADATA_EMOTIONS) or ()),
            intent=Intent(metadata.get(METADATA_INTENT) or Intent.STATEMENT),
            shouting=bool(block.get("shouting")),
            crisis=bool(block.get("crisis")),
            mood_delta=float(block.get("mood_delta") or 0.0),
            aimed_elsewhere=bool(block.get("aimed_elsewhere")),
            detector=str(block.get("detector") or "rules"),
        )
    except (ValueError, TypeError, ValidationError):
        return None
