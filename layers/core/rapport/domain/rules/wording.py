"""Tidying captured text into memory wording: clause ends, filler, person, and the first letter."""

from __future__ import annotations

import functools
import re

from rapport.domain.rules import patterns
from rapport.domain.rules.schema import FactRule, Lexicon

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z’']+")
_SPACES = re.compile(r"\s+")
# "i" typed in lower case is the user as much as "I" is ("since i was a kid").
_I_AM = re.compile(r"\b[Ii](?: am|'m|’m)\b")
_I_WAS = re.compile(r"\b[Ii] was\b")
_I_WAS_NOT = re.compile(r"\b[Ii] wasn(?P<apostrophe>['’])t\b")
_EDGE_PUNCTUATION = " \t'\"“”‘’-—–:,;"


@functools.cache
def compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def sentences(text: str) -> list[str]:
    return [part for part in _SENTENCE_END.split(text) if part.strip()]


# A text the person is writing, translating or checking for someone else, quoted in their message ("Draft an
# out-of-office: "…keep it short and call Dana."", "translate for my host family: "I prefer short explanations…"",
# "here's my draft to my co-founder, does it sound ok? "…""): its words are that text's, not theirs to me. Told by
# what the message asks of the quote, outside it; a quote of something said ("you said "think of it as a phonebook"
# and it clicked") stays.
# In single quotes too ('let's go back to our routine…'), opened after a space, a colon or a bracket and closed before
# one or a stop, an apostrophe inside a word ("let's") not taken for its end.
_QUOTED = re.compile(
    r'"[^"\n]{12,}"|“[^”\n]{12,}”|‘[^’\n]{12,}’|'
    r"(?:(?<=\s)|^|(?<=[:(]))'(?=\S)(?:[^'\n]|(?<=\w)'(?=\w)){12,}?(?<=\S)'(?=[\s.,!?;:)]|$)"
)
_TEXT_FOR_OTHERS = re.compile(
    r"(?i)\b(?:draft\w*|translat\w*|proofread\w*|rewrit\w*|reword\w*|polish\w*|edit|tweak|"
    r"(?:does|will|would) (?:it|this|that) (?:sound|read|come across)|how does (?:it|this|that) (?:sound|read)|"
    r"sound (?:ok|okay|right|good|fine|professional|rude|weird)|caption|tweet|toast|speech|out[- ]of[- ]office|"
    r"e-?mail|(?:message|text|note|letter|reply|card|bio|post|announcement) (?:to|for)|cover letter|"
    r"reply to|respond to|for my (?:[\w'-]+ ){0,2}(?:host|boss|team|manager|landlord|teacher|client|customer)s?|"
    # what a character of theirs says: "in my novel the robot says to the girl '…'"
    r"(?:my|the|a|this) (?:novel|story|short story|screenplay|poem|song|lyrics|comic)|"
    r"characters?)\b"
)


# Someone else's words the person asks about: a review to summarise, a line whose source they want, a saying to
# explain ("summarize this review: "As a lifelong coffee snob, I found…"", ""I hate Mondays" — is that a Garfield
# line?"). Their "I" is not the person's.
_ASKED_ABOUT = re.compile(
    r"(?i)\b(?:summari[sz]e|paraphrase|explain|analy[sz]e|critique|fact-check|interpret|who (?:said|wrote)|"
    r"is (?:that|this|it) (?:originally |really |actually )?(?:from|an? (?:[\w-]+ )?(?:quote|line|lyric|saying)|by)|"
    r"where (?:is|does) (?:that|this|it) (?:from|come from)|what does (?:that|this|it) mean|"
    r"(?:this|the|that) (?:review|article|post|comment|tweet|quote|passage|paragraph|line|lyric|poem|headline))\b"
)


def without_quotes_asked_about(text: str) -> str:
    """The message without the quotes it asks about (`_ASKED_ABOUT`), each as an empty quote: someone else's words.
    A text the person writes (a draft, a translation of their own words) stays: its facts may be theirs."""
    return _QUOTED.sub('""', text) if _asks_of_its_quotes(text, _ASKED_ABOUT) else text


# Words said to be someone else's: "a friend forwarded me this: "…"", "here's what my editor wrote: "…"". Their "you"
# is not me.
_SAID_BY_OTHERS = re.compile(
    r"(?i)\b(?:(?:forwarded|sent) (?:me|us) (?:this|that)|(?:he|she|they|(?:my|his|her|their|our|a|the) [\w'’-]+"
    r"(?: [\w'’-]+)?) (?:wrote|writes|said|says|texted|emailed|posted|commented|replied))\b"
)


def without_others_words(text: str) -> str:
    """The message without the words of others it holds, for reading how to answer the person: the texts it quotes
    for someone else, each with the sentence that holds it (`without_texts_for_others`), and the quotes it asks about
    or gives to someone else, each as an empty quote that still ends its sentence where the quote's words did."""
    text = without_texts_for_others(text)
    if _asks_of_its_quotes(text, _ASKED_ABOUT) or _asks_of_its_quotes(text, _SAID_BY_OTHERS):
        return _QUOTED.sub(lambda quote: '""' + _sentence_end(quote), text)
    return text


def without_texts_for_others(text: str) -> str:
    """The message with the texts it quotes for someone else (`_TEXT_FOR_OTHERS`) left out, and with each the
    sentence that holds it: what it asks of that text ("reply to this customer in their language: "…"") is a task
    of this chat, no way to answer the person."""
    if not _asks_of_its_quotes(text, _TEXT_FOR_OTHERS):
        return text
    return "\n".join(part for part in sentences(_QUOTED.sub(_left_out, text)) if _LEFT_OUT not in part)


_LEFT_OUT = "\x00"


def _asks_of_its_quotes(text: str, asks: re.Pattern[str]) -> bool:
    """Whether the text quotes something and, outside its quotes, asks of it what `asks` names."""
    return bool(_QUOTED.search(text)) and asks.search(_QUOTED.sub(" ", text)) is not None


def _left_out(quote: re.Match[str]) -> str:
    """A quote's mark, ending its sentence where the quote's own words did ("…thanks.' Also, keep it short")."""
    return _LEFT_OUT + _sentence_end(quote)


def _sentence_end(quote: re.Match[str]) -> str:
    """A full stop where the quote's own words ended a sentence, so what follows it is read as a sentence of its own."""
    return "." if quote.group()[-2] in ".!?" else ""


def for_this_once(text: str) -> bool:
    """Whether the text asks how to answer this once (patterns.FOR_NOW), not as a standing rule."""
    return bool(compiled(patterns.FOR_NOW).search(text)) and not compiled(patterns.STANDING).search(text)


def squeeze(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def tidy(value: str, lexicon: Lexicon) -> str | None:
    """The value up to the end of its clause, without trailing filler or a question put to me after it
    (`unasked_after`); None when nothing meaningful is left."""
    value = unasked_after(squeeze(value)).strip(_EDGE_PUNCTUATION)
    lowered = value.lower()
    for word in lexicon.cut_before:
        position = lowered.find(word)
        if position > 0:
            value, lowered = value[:position], lowered[:position]
    trimmed = True
    while trimmed:
        trimmed = False
        for tail in lexicon.trailing:
            if lowered.endswith(tail) and len(lowered) > len(tail):
                value, lowered = value[: -len(tail)], lowered[: -len(tail)]
                trimmed = True
    value = value.strip(_EDGE_PUNCTUATION)
    if not value or value.lower() in lexicon.pronouns:
        return None
    return value


# A question put to me after what the user tells of themselves, in a sentence a chat does not always end with "?":
# "I'm at 8k now, what should my weekly plan look like", "got my braces off today, what can I eat now", "…by next
# year — can you suggest a weekly plan". A question word with the verb that asks, not a relative clause ("my dad,
# who has Parkinson's", "left-handed, which makes scissors a nightmare").
_ASKED_AFTER = re.compile(
    r"(?i)\s*[,;:—–]\s*(?:(?:what|how|where|which|who|why|when)\s+(?:should|can|could|would|will|do|does|did|is|are|"
    r"am|to)\b|what['’]?s\b|how['’]?s\b|(?:can|could|would|should|will|do|does|did|is|are)\s+(?:you|u|I|that|it|there|"
    r"this|we)\b|any\s+(?:ideas?|tips?|advice|suggestions?|recommendations?|thoughts)\b)"
)


def unasked_after(text: str) -> str:
    """The text up to a question put to me after what it tells (`_ASKED_AFTER`)."""
    return _ASKED_AFTER.split(text, maxsplit=1)[0]


def without_leading(value: str, lexicon: Lexicon) -> str:
    lowered = value.lower()
    for lead in lexicon.leading:
        if lowered.startswith(lead):
            return value[len(lead) :]
    return value


def third_person(value: str, lexicon: Lexicon) -> str:
    """The user's words about themselves, as the memory says them ("my thesis" -> "their thesis")."""
    value = _I_AM.sub("they are", value)
    value = _I_WAS.sub("they were", value)
    value = _I_WAS_NOT.sub(lambda m: f"they weren{m.group('apostrophe')}t", value)
    return _WORD.sub(lambda m: _swap(m.group(0), lexicon.third_person), value)


def from_assistant(value: str, lexicon: Lexicon) -> str:
    """The assistant's words about the user ("your handler" -> "their handler"); "you" as an object is "them" ("let me
    quiz you instead", "2am there may not be 2am for you"), else "they"."""
    value = _YOU_OBJECT.sub("them", value)
    return _WORD.sub(lambda m: _swap(m.group(0), lexicon.second_person), value)


# "you" before what an object is followed by: the end of a clause, an adverb of the verb's ("instead", "again"), a
# preposition or a second object ("send you the file"). Not "and"/"or", which as often join a subject ("you and your
# partner should"), nor after a verb that asks ("are you in the office?": a subject).
_YOU_OBJECT = re.compile(
    r"(?<!\bare )(?<!\bwere )(?<!\bdo )(?<!\bdid )(?<!\bcan )(?<!\bwill )(?<!\bhave )"
    r"\byou\b(?=\s*(?:[.,;:!?)]|$)|\s+(?:instead|too|again|back|now|later|first|all|both|to|for|with|about|in|on|"
    r"how|what|the|a|an|this|that|some|any|so)\b)"
)


# Written in capitals, "US" is the country ("every national park in the US"), not "us".
_NOT_PRONOUNS = frozenset({"US"})


def _swap(word: str, table: dict[str, str]) -> str:
    if word in _NOT_PRONOUNS:
        return word
    replacement = table.get(word.lower())
    if replacement is None:
        return word
    return replacement


def gerund(value: str, lexicon: Lexicon) -> str:
    first, _, rest = value.partition(" ")
    verb = lexicon.gerunds.get(first.lower())
    return f"{verb} {rest}".strip() if verb else value


def sentence_case(text: str) -> str:
    text = squeeze(text)
    return text[:1].upper() + text[1:]


def kept_values(rule: FactRule, match: re.Match[str]) -> dict[str, str] | None:
    """Each named group of a rule's match, tidied ("" where the group took nothing); None when one is empty once tidied
    or starts with what the rule rejects ("I want to know…"): the rule reads no memory there."""
    values: dict[str, str] = {}
    for name, raw in match.groupdict().items():
        if raw is None:
            values[name] = ""
            continue
        value = tidy(raw, patterns.LEXICON)
        if value is None or starts_with_any(value, rule.reject):
            return None
        values[name] = value
    return values


def starts_with_any(value: str, prefixes: tuple[str, ...]) -> bool:
    """Word-wise: 'it' rejects "it" and "it works", not "items"; a prefix ending in a space matches as written."""
    lowered = value.lower()
    for prefix in prefixes:
        if prefix.endswith(" "):
            if lowered.startswith(prefix):
                return True
        elif lowered == prefix or lowered.startswith(prefix + " "):
            return True
    return False
