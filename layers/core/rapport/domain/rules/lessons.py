"""The lesson in a note of something I did that went badly for the user: "User was annoyed I gave three options when
she wanted one recommendation" keeps "With this user, avoid giving three options when they wanted one
recommendation", and drops the feeling. Only where the wording is sure: a bad reaction, then what I did as a verb
whose -ing form is known; anything else is left to the other rules."""

from __future__ import annotations

import re

_REACTION = r"(?:annoyed|upset|frustrated|irritated|confused|lost|unhappy|thrown|put off|bothered|overwhelmed)"
# "User was annoyed (that|when|because) I gave…", "User couldn't follow when I jumped…", "Frustrated because I kept
# suggesting…": what I did is the clause after "I".
_I_DID = re.compile(
    rf"(?i)^(?:the )?(?:user )?(?:(?:was|got|seemed|felt|became|is) )?(?:(?:a bit|very|really|quite|so) )?"
    rf"(?:{_REACTION}|(?:couldn't|could not|didn't|did not) (?:follow|keep up))"
    r"(?: (?:that|when|because|as|after))? I (?P<did>[a-z]+(?: [a-z]+ing)?)\b(?P<rest>[^.;!?]*)"
)
# "Confused her by mixing metric and imperial units": what I did is the -ing clause after "by".
_BY_DOING = re.compile(
    rf"(?i)^(?:I )?{_REACTION}(?: (?:her|him|them|the user))? by (?P<did>[a-z]+ing)\b(?P<rest>[^.;!?]*)"
)
_IRREGULAR = {
    "gave": "giving",
    "wrote": "writing",
    "sent": "sending",
    "made": "making",
    "put": "putting",
    "went": "going",
    "took": "taking",
    "left": "leaving",
    "forgot": "forgetting",
    "told": "telling",
    "chose": "choosing",
    "ran": "running",
    "said": "saying",
    "brought": "bringing",
    "spent": "spending",
    "began": "beginning",
    "threw": "throwing",
    "drew": "drawing",
}
# A past that keeps going ("kept suggesting") is its -ing verb.
_ONGOING = frozenset({"kept", "started", "began"})
_PRONOUNS = {
    "she": "they",
    "he": "they",
    "her": "their",
    "his": "their",
    "him": "them",
    "herself": "themselves",
    "himself": "themselves",
    "hers": "theirs",
}
# After "he" or "she" became "they", the verb agrees.
_AGREEMENT = {
    "is": "are",
    "isn't": "aren't",
    "was": "were",
    "wasn't": "weren't",
    "has": "have",
    "hasn't": "haven't",
    "does": "do",
    "doesn't": "don't",
}
_WORD = re.compile(r"[A-Za-z']+")


def lesson_of(note: str) -> str | None:
    """The lesson the note carries, in the assistant's voice, or None when its wording is not one of these."""
    text = note.strip()
    by_doing = _BY_DOING.match(text)
    found = by_doing or _I_DID.match(text)
    if found is None:
        return None
    doing = found["did"].lower() if by_doing else _doing(found["did"])
    if doing is None:
        return None
    rest = _their(found["rest"].rstrip(" ,"))
    return f"With this user, avoid {doing}{rest}"


def _doing(did: str) -> str | None:
    """What I did as its -ing form: "gave" giving, "jumped" jumping, "used" using (the stem loses its "e" as the
    -ing form does), "replied" replying, "kept suggesting" suggesting; None for a word that is no past of a verb."""
    first, _, then = did.lower().partition(" ")
    if first in _ONGOING and then:
        return then
    rest = f" {then}" if then else ""
    if first in _IRREGULAR:
        return _IRREGULAR[first] + rest
    if first.endswith("ied") and len(first) > 4:
        return first[:-3] + "ying" + rest
    if first.endswith("ed") and len(first) > 3 and not first.endswith("eed"):
        return first[:-2] + "ing" + rest
    return None


def _their(text: str) -> str:
    """The user's pronouns as a lesson says them ("she wanted" -> "they wanted", "he isn't" -> "they aren't")."""
    out = _WORD.sub(lambda m: _PRONOUNS.get(m[0].lower(), m[0]), text)
    for verb, agreed in _AGREEMENT.items():
        out = re.sub(rf"\bthey {re.escape(verb)}\b", f"they {agreed}", out)
    return _THEY_VERB.sub(lambda m: f"they {_plural(m[1])}", out)


# A present verb after a "they" that was "he" or "she": "lives" live, "studies" study, "teaches" teach.
_THEY_VERB = re.compile(r"\bthey ([a-z]+s)\b")
_NOT_VERBS = frozenset({"always", "sometimes", "perhaps", "across", "towards", "afterwards", "thus", "plus"})


def _plural(verb: str) -> str:
    if verb in _NOT_VERBS or verb.endswith(("ss", "us")) or len(verb) < 3:
        return verb
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if verb.endswith(("shes", "ches", "xes", "oes")):
        return verb[:-2]
    return verb[:-1]
