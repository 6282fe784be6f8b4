"""The lesson in a note of something I did that went badly for the user: "User was annoyed I gave three options when
she wanted one recommendation" keeps "With this user, avoid giving three options when they wanted one
recommendation", and drops the feeling. Only where the wording is sure: a bad reaction (of the user, by role,
pronoun or name), then what I did as a verb whose -ing form is known, what my answer was ("complained that my
summary left out the deadlines") or what it did to them ("my answer overwhelmed her with ten options"); anything else
is left to the other rules."""

from __future__ import annotations

import re

_REACTION = (
    r"(?:annoyed|upset|frustrated|irritated|confused|lost|unhappy|thrown|put off|bothered|overwhelmed|impatient|"
    r"angry|mad|cross|fed up|bored|exasperated|discouraged|defensive|rushed|dismissed|stuck|embarrassed|hurt|"
    r"patronised|patronized|talked down to|tuned out|gave up|switched off|shut down|glazed over|"
    r"(?:snapped|got short|was short|got curt) (?:at|with) me)"
)
# Losing one's temper or patience is a reaction too: "She lost her patience when I restarted the explanation".
_TEMPER = r"(?:lost (?:(?:her|his|their|the user's) )?(?:temper|patience|cool))"
# Who reacted: the user by role, by pronoun, or by a name (capitalised, whatever the pattern's case).
_WHO = r"(?:(?:the )?user|he|she|they|(?-i:[A-Z][a-z]+))"
# How strongly: "a bit annoyed", "completely lost".
_INTENSITY = r"(?:(?:a bit|very|really|quite|so|completely|totally|visibly) )?"
# The reaction itself, after "was", "got" or nothing: a feeling, a lost temper, or not keeping up.
_REACTED = rf"(?:{_TEMPER}|{_REACTION}|(?:couldn't|could not|didn't|did not) (?:follow|keep up))"
# "User was annoyed (that|when|because) I gave…", "He lost his temper when I asked…", "User couldn't follow when I
# jumped…", "Frustrated because I kept suggesting…": what I did is the clause after "I".
_I_DID = re.compile(
    rf"(?i)^(?:{_WHO} )?(?:(?:was|were|got|seemed|felt|became|is|are) )?{_INTENSITY}{_REACTED}"
    r"(?: (?:that|when|because|as|after))? I (?P<did>[a-z]+(?: [a-z]+ing)?)\b(?P<rest>[^.;!?]*)"
)
# "I over-explained a one-line fix and the user lost patience", "I explained the clause in legal terms and she was
# completely lost": what I did comes first, the reaction after "and".
_I_DID_THEN = re.compile(
    rf"(?i)^I (?P<did>[a-z]+(?:-[a-z]+)?(?: [a-z]+ing)?)\b(?P<rest>[^.;!?]*?),? and (?:then )?{_WHO} "
    rf"(?:(?:was|were|got|seemed|felt|became) )?{_INTENSITY}{_REACTED}\W*$"
)
# "She said my summaries were vague", "User found my tone too formal", "complained the emails I drafted sounded stiff".
# The verbs that link a thing to what it was ("were vague", "sounded stiff", "came across as cold").
_LINKING_VERB = r"(?:was|were|is|are|sounded|felt|seemed|came across|read)"
_LINKED = re.compile(rf"(?i){_LINKING_VERB}\b")
_NOT_LINKING = r"(?!(?:was|were|is|are|sounded|felt|seemed|came|read|too|far|a|very|so)\b)"
_FOUND_MY = re.compile(
    rf"(?i)^(?:{_WHO} )?(?:said|told me|felt|found|thought)(?: that)? my "
    rf"(?P<thing>[a-z]+(?: {_NOT_LINKING}[a-z]+){{0,2}}) "
    rf"(?P<rest>{_LINKING_VERB} [^.;!?]*|(?:too|far too|a bit|very|so) "
    r"[^.;!?]*|(?:jarring|confusing|patronising|patronizing|cold|vague|stiff|preachy|wordy|robotic|condescending)"
    r"\b[^.;!?]*)"
)
_COMPLAINED_OF_WHAT_I_DID = re.compile(
    rf"(?i)^(?:{_WHO} )?(?:complained|said|told me|felt|found|thought)(?: that)? (?:the )?(?P<thing>[a-z]+) I "
    r"(?:drafted|wrote|made|sent|gave|suggested|picked|chose|put together|proposed)(?: (?:for|to) (?:them|her|him))? "
    rf"(?P<rest>{_LINKING_VERB} [^.;!?]*)"
)
# "My explanation of compound interest went over the user's head".
_OVER_HEAD = re.compile(
    r"(?i)^my (?P<thing>[a-z]+(?: [a-z]+){0,4}?) went (?:way |right |straight )?over "
    r"(?:the user's|her|his|their) head\W*$"
)
# "Confused her by mixing metric and imperial units": what I did is the -ing clause after "by".
_BY_DOING = re.compile(
    rf"(?i)^(?:I )?{_REACTION}(?: (?:her|him|them|the user))? by (?P<did>[a-z]+ing)\b(?P<rest>[^.;!?]*)"
)
# "User complained that my summary left out the deadlines": what went wrong is what my answer was or did.
_COMPLAINED = re.compile(
    rf"(?i)^(?:{_WHO} )?(?:(?:was|were|got|seemed|felt) {_REACTION}|complained|grumbled|moaned|objected|protested)"
    r"(?: (?:that|because))? my (?P<thing>[a-z]+(?: [a-z]+)?) (?P<rest>(?:was|were|had|left|missed|used|took|"
    r"skipped|ignored|buried|lacked|forgot|didn't|did not|went|ran|came)\b[^.;!?]*)"
)
# "My answer overwhelmed her with ten options": my answer did the harm, and how it did is the rest.
_MY_HARM = re.compile(
    r"(?i)^my (?P<thing>[a-z]+(?: [a-z]+){0,4}?) (?P<did>overwhelmed|confused|lost|frustrated|annoyed|irritated|"
    r"bored|upset|bothered) (?:her|him|them|the user)\b(?P<rest>[^.;!?]*)"
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
    "lost": "losing",
    "upset": "upsetting",
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
    complained = _COMPLAINED.match(text)
    if complained is not None:
        thing = complained["thing"].lower()
        return f"With this user, avoid {_a(thing)}{thing} that {_their(complained['rest'].rstrip(' ,'))}"
    for form in (_FOUND_MY, _COMPLAINED_OF_WHAT_I_DID):
        said = form.match(text)
        if said is not None:
            thing, rest = said["thing"].lower(), _their(said["rest"].rstrip(" ,"))
            verb = "" if _LINKED.match(rest) else ("are " if _a(thing) == "" else "is ")
            return f"With this user, avoid {_a(thing)}{thing} that {verb}{rest}"
    over = _OVER_HEAD.match(text)
    if over is not None:
        thing = over["thing"].lower()
        return f"With this user, avoid {_a(thing)}{thing} that {'go' if _a(thing) == '' else 'goes'} over their head"
    harm = _MY_HARM.match(text)
    if harm is not None:
        doing = _doing(harm["did"])
        rest = _their(harm["rest"].rstrip(" ,"))
        if doing is None:
            return None
        if rest.startswith((" with ", " by ")):
            return f"With this user, avoid {doing} them{rest}"
        return f"With this user, avoid {doing} them with my {harm['thing'].lower()}{rest}"
    by_doing = _BY_DOING.match(text)
    found = by_doing or _I_DID.match(text) or _I_DID_THEN.match(text)
    if found is None:
        return None
    doing = found["did"].lower() if by_doing else _doing(found["did"])
    if doing is None:
        return None
    rest = _their(found["rest"].rstrip(" ,"))
    return f"With this user, avoid {doing}{rest}"


def _a(thing: str) -> str:
    """The article a thing takes in a lesson: none for a plural ("replies that were…"), else "a" or "an". Its number
    is its head noun's, the last word before any "of" ("a breakdown of the tax rules")."""
    head = thing.split(" of ")[0].split()[-1]
    if head.endswith("s") and not head.endswith("ss"):
        return ""
    return "an " if thing[0] in "aeiou" else "a "


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
