"""The shapes of the rule data in `patterns.py`: each rule is a value, the engines that apply them live beside it."""

from __future__ import annotations

from dataclasses import dataclass, field

# Patterns are compiled case-sensitively so a capitalised group can demand a proper name ("I work at Acme");
# the parts that should ignore case say so inline with (?i:...).


@dataclass(frozen=True)
class FactRule:
    """A sentence of a user message that states something about the user."""

    pattern: str
    template: str  # formatted with the named groups (in the third person)
    type: str  # a user memory type
    importance: float
    slot: str | None = None  # a single-valued attribute: a later different value replaces this one
    reject: tuple[str, ...] = ()  # a captured value starting with one of these is not a memory ("I like it")
    # What the sentence says of the user, the rule reads all of (an employer, a move): meaning reads nothing more of
    # it. False for a rule that reads one thing in passing ("my colleague Priya is taking over while I'm on leave"
    # names Priya, and meaning still reads the leave), which leaves the sentence's other kinds to meaning.
    whole: bool = True


@dataclass(frozen=True)
class Situation:
    """What the user is in the middle of, read from the whole conversation ("User is debugging an API at work")."""

    template: str  # formatted with {object} and {setting}
    triggers: tuple[str, ...]  # any of them in a user message
    # (pattern, phrase): the first that matches names the object. None matching and none named (`named`), no memory:
    # "User is debugging a technical problem" told nothing a later conversation could use.
    objects: tuple[tuple[str, str], ...]
    settings: tuple[tuple[str, str], ...] = ()  # (pattern, phrase): where it happens, empty when none matches
    # The object in the user's own words, its `thing` group ("our checkout service keeps timing out"): before `objects`,
    # which name only its kind.
    named: str | None = None
    type: str = "event"
    importance: float = 0.5


@dataclass(frozen=True)
class Feature:
    """A cue in the conversation. Relational templates combine features; a feature's value fills a template."""

    name: str
    pattern: str
    roles: tuple[str, ...] = ("user",)
    value: str | None = None  # a fixed value; otherwise the `value` group, or the whole match
    prefer: str = "first"  # which occurrence fills a template: "first" (how it started) or "last" (how it ended)
    # How a captured value is worded in a memory: "plain" (tidied, third person), "approach" (also without a leading
    # article, and never a generic word like "advice"), "gerund" ("add logging" -> "adding logging"), "phrase"
    # (looked up in the lexicon's canonical phrases).
    shape: str = "plain"
    # A reaction to an answer of mine ("I'm lost", "you're not listening"): read in a user message only once one of
    # mine came before it. Before any answer, "I'm so confused by these insurance terms" is about the world.
    answers: bool = False
    # A standing preference ("keep it brief", "bullet points are easier"): not read in a message that asks it for this
    # once ("keep it brief this time": patterns.FOR_NOW) unless it says it as a rule (patterns.STANDING).
    lasting: bool = False
    # Of my answers: not read where the sentence gives them to someone else before it ("his explanations are too
    # long", "the gym app's workout explanations are way too long"): patterns.SOMEONE_ELSES.
    mine: bool = False


@dataclass(frozen=True)
class RelationalTemplate:
    type: str  # a relational memory type
    requires: tuple[str, ...]  # features that must all be present
    template: str  # formatted with the features' values
    importance: float
    excludes: tuple[str, ...] = ()  # features that must be absent
    group: str | None = None  # of the templates sharing a group, only the first that applies is used
    each: bool = False  # one memory per distinct value of the first required feature


@dataclass(frozen=True)
class FilterRule:
    """A pattern over a candidate memory and the reason the filter gives when it matches."""

    pattern: str
    reason: str
    replacement: str | None = None  # for a reframe: the constructive memory stored instead


@dataclass(frozen=True)
class Lexicon:
    """Word lists the engines use to tidy captured values."""

    cut_before: tuple[str, ...] = field(default_factory=tuple)  # a value ends before these words
    trailing: tuple[str, ...] = field(default_factory=tuple)  # dropped from the end of a value
    leading: tuple[str, ...] = field(default_factory=tuple)  # dropped from the start of a feature value
    pronouns: frozenset[str] = field(default_factory=frozenset)  # a value that is only one of these means nothing
    generic: frozenset[str] = field(default_factory=frozenset)  # too generic to name an approach
    third_person: dict[str, str] = field(default_factory=dict)  # the user's first person -> third person
    second_person: dict[str, str] = field(default_factory=dict)  # the assistant's "you" -> third person
    gerunds: dict[str, str] = field(default_factory=dict)  # imperative verb -> -ing form
    phrases: dict[str, str] = field(default_factory=dict)  # a captured value -> its canonical wording
