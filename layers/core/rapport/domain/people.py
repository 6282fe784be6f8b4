"""People the user mentions: pure rules to find third parties in the user's words and update their records."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from functools import cache

from pydantic import BaseModel, Field

from rapport.domain import people_rules as rules
from rapport.domain.quarantine import instructions_in

# Role words, longest first, so "best friend" wins over "friend".
_ROLE_ALTERNATION = "|".join(re.escape(word) for word in sorted(rules.ROLE_WORDS, key=len, reverse=True))
_NAME_WORD = r"[A-Z][a-zA-Z\u00C0-\u017F'\-]*"


class SentimentLabel(StrEnum):
    POSITIVE = "positive"
    NEUTRAL = "neutral"
    NEGATIVE = "negative"


class PersonFact(BaseModel):
    """One thing the user said about the person: the sentence, when, and how it sounded (-1..1)."""

    text: str
    at: datetime
    sentiment: float


class Person(BaseModel):
    """A third party in the user's life, as the user talks about them."""

    slug: str
    name: str | None = None
    role: str | None = None
    sentiment: float = Field(0.0, ge=-1.0, le=1.0)  # the user's feeling toward them: -1 .. 1, 0 neutral
    mention_count: int = 0
    first_mentioned: datetime
    last_mentioned: datetime
    facts: list[PersonFact] = Field(default_factory=list)

    @property
    def sentiment_label(self) -> SentimentLabel:
        return sentiment_label(self.sentiment)


@dataclass(frozen=True)
class Mention:
    """One sentence in which the user speaks of one person."""

    slug: str
    name: str | None
    role: str | None
    sentence: str


def sentiment_label(value: float, neutral_band: float = 0.05) -> SentimentLabel:
    if value >= neutral_band:
        return SentimentLabel.POSITIVE
    if value <= -neutral_band:
        return SentimentLabel.NEGATIVE
    return SentimentLabel.NEUTRAL


def slugify(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or "person"


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    possessive = "|".join(rules.POSSESSIVES)
    name = rf"(?P<name>{_NAME_WORD}(?:\s{_NAME_WORD})?)"
    # "my boss Sarah", "my friend, Tom,"  (role matched case-insensitively, the name must be capitalised)
    role_then_name = re.compile(rf"\b(?i:{possessive})\s+(?P<role>(?i:{_ROLE_ALTERNATION}))(?:,)?\s+{name}")
    # "Sarah, my boss, said" / "Sarah (my boss)": an apposition, closed by a comma, a bracket or the sentence's
    # end, so "Anyway, my boss called" does not make "Anyway" a name.
    name_then_role = re.compile(
        rf"{name}(?:,\s*|\s+\()(?i:{possessive})\s+(?P<role>(?i:{_ROLE_ALTERNATION}))(?=\s*[,)]|[.!?]*$)"
    )
    # "my mom called", "our manager's plan"
    role_only = re.compile(rf"\b(?i:{possessive})\s+(?P<role>(?i:{_ROLE_ALTERNATION}))(?:'s)?\b")
    return role_then_name, name_then_role, role_only


def split_sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [p.strip() for p in parts if p.strip()]


def _clean_name(raw: str) -> str | None:
    """The name in the capitalised words, or None when they hold none: words that are never names are dropped
    at the front ("Tell Sarah") and end the name after it ("Sarah I think"); a possessive "'s" goes."""
    words = [w.removesuffix("'s").removesuffix("\u2019s") for w in raw.split()]
    if all(w.isupper() for w in words):
        words = words[:1]  # a shouted sentence is all capitals: only the word next to the role is the name
    kept: list[str] = []
    for word in words:
        lowered = word.lower()
        if not word or lowered in rules.NOT_NAMES or lowered in rules.ROLE_WORDS:
            if kept:
                break
            continue
        # A shouted name ("MY BOSS SARAH") is still Sarah.
        kept.append(word.capitalize() if len(word) > 1 and word.isupper() else word)
    return " ".join(kept) or None


def _canonical_role(word: str) -> str:
    return rules.ROLE_WORDS[word.lower()]


def find_mentions(text: str, known: Sequence[Person] = ()) -> list[Mention]:
    """Every person the text speaks of, one mention per person per sentence, in order of appearance.

    Found by rule: a role word after "my"/"our" (with a capitalised name beside it when there is one), or the
    name of someone already known. A capitalised word alone is not enough to make a stranger a person: it could
    be a place, a product or a weekday. A sentence that names nobody but says "he"/"she" speaks of the person of
    the sentence before it (within `PRONOUN_REACH` sentences) when exactly one fits the pronoun, so a feeling said
    in the next sentence ("…I can't stand him") is theirs.
    """
    mentions: list[Mention] = []
    previous: list[Mention] = []  # the people of the last sentence that spoke of anyone
    genders: dict[str, str] = {}  # what a pronoun already told about a person of unknown gender, in this text
    distance = 0
    for sentence in split_sentences(text):
        here = _mentions_in_sentence(sentence, known)
        if not here and distance < rules.PRONOUN_REACH:
            here = _referred_to(sentence, previous, genders)
        if here:
            mentions.extend(here)
            previous, distance = here, 0
        else:
            distance += 1
    return mentions


def _gender(mention: Mention, genders: dict[str, str]) -> str | None:
    return rules.ROLE_GENDER.get(mention.role or "") or genders.get(mention.slug)


def _referred_to(sentence: str, previous: list[Mention], genders: dict[str, str]) -> list[Mention]:
    """The people of the previous sentence this one speaks of by pronoun alone: for each pronoun's gender, the one
    person it fits. Two people it fits make it ambiguous, and then it is nobody's."""
    said = {rules.PRONOUNS[w] for w in re.findall(r"[a-z]+", sentence.lower()) if w in rules.PRONOUNS}
    referred: list[Mention] = []
    for gender in sorted(said):
        fits = [m for m in previous if _gender(m, genders) in (gender, None)]
        if len(fits) != 1:
            continue
        person = fits[0]
        genders.setdefault(person.slug, gender)
        if all(m.slug != person.slug for m in referred):
            referred.append(Mention(slug=person.slug, name=person.name, role=person.role, sentence=sentence))
    return referred


def _mentions_in_sentence(sentence: str, known: Sequence[Person]) -> list[Mention]:
    role_then_name, name_then_role, role_only = _patterns()
    found: dict[str, Mention] = {}
    named_spans: list[tuple[int, int]] = []
    for pattern in (role_then_name, name_then_role):
        for match in pattern.finditer(sentence):
            name = _clean_name(match.group("name"))
            if name is None:
                continue
            role = _canonical_role(match.group("role"))
            taken = [(p.slug, p.role) for p in known] + [(m.slug, m.role) for m in found.values()]
            slug = person_slug(name, role, taken)
            found.setdefault(slug, Mention(slug=slug, name=name, role=role, sentence=sentence))
            named_spans.append(match.span())
    for match in role_only.finditer(sentence):
        if any(start <= match.start() < end for start, end in named_spans):
            continue  # already taken with its name
        role = _canonical_role(match.group("role"))
        holder = _unique_role_holder(role, known, list(found.values()))
        slug = holder.slug if holder else slugify(role)
        name = holder.name if holder else None
        found.setdefault(slug, Mention(slug=slug, name=name, role=role, sentence=sentence))
    # Known people named without a role word; of two people with one name, the one spoken of last.
    named_here = {m.name for m in found.values() if m.name}
    by_name: dict[str, Person] = {}
    for person in known:
        if person.name and (person.name not in by_name or person.last_mentioned > by_name[person.name].last_mentioned):
            by_name[person.name] = person
    for name, person in by_name.items():
        if name in named_here or person.slug in found:
            continue
        if re.search(rf"(?<![\w-]){re.escape(name)}(?:'s)?(?![\w-])", sentence):
            found[person.slug] = Mention(slug=person.slug, name=name, role=person.role, sentence=sentence)
    return list(found.values())


def _unique_role_holder(role: str, known: Sequence[Person], found: Sequence[Mention]) -> Mention | Person | None:
    """Who an unnamed "my mom" refers to: the named person of that role, in this sentence or already known."""
    if role not in rules.UNIQUE_ROLES:
        return None
    for mention in found:
        if mention.role == role and mention.name:
            return mention
    named = [p for p in known if p.role == role and p.name]
    return max(named, key=lambda p: p.last_mentioned) if named else None


def person_slug(name: str, role: str | None, taken: Iterable[tuple[str, str | None]] = ()) -> str:
    """The name's slug, unless someone of another role holds it (two Sarahs: "sarah" and "sarah-sister")."""
    slug = slugify(name)
    for other_slug, other_role in taken:
        if other_slug == slug and other_role and role and other_role != role:
            return f"{slug}-{slugify(role)}"
    return slug


def record_mention(
    person: Person | None,
    mention: Mention,
    sentiment: float,
    at: datetime,
    *,
    weight: float,
    max_facts: int,
) -> Person:
    """The person after one more mention. An opinionated sentence moves the user's sentiment toward them by
    `weight` (an exponential moving average); a neutral one ("my mom called") leaves it where it was."""
    fact = PersonFact(text=mention.sentence[: rules.MAX_FACT_CHARS], at=at, sentiment=round(sentiment, 4))
    # A sentence that reads as instructions to the assistant still counts as a mention, but is not kept as what
    # they said of the person: facts are shown in a reply's prompt (rapport.domain.quarantine).
    said = [] if instructions_in(mention.sentence) is not None else [fact]
    if person is None:
        return Person(
            slug=mention.slug,
            name=mention.name,
            role=mention.role,
            sentiment=sentiment if sentiment_label(sentiment) is not SentimentLabel.NEUTRAL else 0.0,
            mention_count=1,
            first_mentioned=at,
            last_mentioned=at,
            facts=said,
        )
    moved = person.sentiment
    if sentiment_label(sentiment) is not SentimentLabel.NEUTRAL:
        moved = (1 - weight) * person.sentiment + weight * sentiment
    facts = [f for f in person.facts if f.text.lower() != fact.text.lower()] + said
    return person.model_copy(
        update={
            "name": person.name or mention.name,
            "role": person.role or mention.role,
            "sentiment": max(-1.0, min(1.0, moved)),
            "mention_count": person.mention_count + 1,
            "first_mentioned": min(person.first_mentioned, at),
            "last_mentioned": max(person.last_mentioned, at),
            "facts": facts[-max_facts:],
        }
    )


def absorb(named: Person, unnamed: Person, *, max_facts: int) -> Person:
    """Join an unnamed record ("my mom", before we knew her name) into the named one it turned out to be."""
    facts = sorted([*unnamed.facts, *named.facts], key=lambda f: f.at)
    total = named.mention_count + unnamed.mention_count
    sentiment = (
        (named.sentiment * named.mention_count + unnamed.sentiment * unnamed.mention_count) / total
        if total
        else named.sentiment
    )
    return named.model_copy(
        update={
            "sentiment": sentiment,
            "mention_count": total,
            "first_mentioned": min(named.first_mentioned, unnamed.first_mentioned),
            "last_mentioned": max(named.last_mentioned, unnamed.last_mentioned),
            "facts": facts[-max_facts:],
        }
    )
