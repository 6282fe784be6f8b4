"""The lesson in a note of something I did that went badly for the user: "User was annoyed I gave three options when
she wanted one recommendation" keeps "With this user, avoid giving three options when they wanted one
recommendation", and drops the feeling. Only where the wording is sure: a bad reaction (of the user, by role,
pronoun or name), then what I did as a verb whose -ing form is known, what my answer was ("complained that my
summary left out the deadlines") or what it did to them ("my answer overwhelmed her with ten options"); anything else
is left to the other rules."""

from __future__ import annotations

import re

from rapport.domain.rules import patterns
from rapport.domain.rules.wording import compiled

_REACTION = (
    r"(?:annoyed|upset|frustrated|irritated|confused|lost|unhappy|thrown|put off|bothered|overwhelmed|impatient|"
    r"angry|mad|cross|fed up|bored|exasperated|discouraged|defensive|rushed|dismissed|stuck|embarrassed|hurt|"
    r"patronised|patronized|talked down to|tuned out|gave up|switched off|shut down|glazed over|lost interest|"
    r"grumbled|complained|moaned|objected|protested|"
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
    rf"(?i)^(?:{_WHO} )?(?:(?P<now>gets|get|is|are)|(?:was|were|got|seemed|felt|became))? ?{_INTENSITY}{_REACTED}"
    r"(?: (?:that|when|whenever|because|as|after))? I (?P<did>[a-z]+(?: [a-z]+ing)?)\b(?P<rest>[^.;!?]*)"
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
    rf"(?P<thing>[a-z]+(?: {_NOT_LINKING}[a-z]+){{0,3}}) "
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
# "User was irritated by my long preambles before getting to the point": what of mine put them off, in more than a
# word ("put off by my tone" says too little of what to avoid).
_BY_MY = re.compile(
    rf"(?i)^(?:{_WHO} )?(?:(?:was|were|got|seemed|felt|became) )?{_INTENSITY}{_REACTION} by my "
    r"(?P<thing>[a-z'-]+(?: [a-z'-]+)+)\W*$"
)
# "User said I was condescending when I explained basic git commands they already knew": how I came across, and
# what I did that made it so.
_CAME_ACROSS = re.compile(
    rf"(?i)^(?:{_WHO} )?(?:said|felt|thought|told me|found)(?: that)? I (?:was|came across as|sounded|seemed) "
    rf"(?:being )?{_INTENSITY}(?:condescending|patronising|patronizing|preachy|pushy|dismissive|robotic|cold|"
    r"rude|vague|repetitive|too [a-z]+) (?:when|because|as) I (?P<did>[a-z]+)\b(?P<rest>[^.;!?]*)"
)
# What my work was or did, then what came of it for them: "My step-by-step guide skipped a step and the user got
# stuck", "The itinerary I made had impossible train connections and the user had to redo it", "The code I wrote
# depended on a library they don't have, so it failed on their machine".
_MY_WORK = (
    r"(?:my (?P<mine>[\w'-]+(?: [\w'-]+){0,4}?)|the (?P<made>[\w'-]+(?: [\w'-]+){0,4}?) I (?:made|wrote|"
    r"drafted|gave(?: (?:them|her|him))?|suggested|picked|chose|put together|proposed|built|planned|sent))"
)
_WHAT_IT_DID = (
    r"(?:was|were|had|left|missed|used|took|skipped|ignored|buried|lacked|forgot|went|ran|came|broke|blew|threw|"
    r"gave|made|got|fell|tore|sent|cost|hit|put|set|cut|told|wrote|led|meant|kept|lost|overshot|overran|"
    r"(?:didn't|did not|never) [a-z]+|[a-z]+ed)\b"
)
_CAME_OF_IT = (
    rf"(?:{_WHO} (?:(?:was|were|got|seemed|felt|became) )?{_INTENSITY}{_REACTED}|"
    rf"{_WHO} had to (?:redo|fix|rewrite|correct|undo|start over|do it again|go back)|"
    r"it (?:failed|broke|crashed|errored|didn't work|did not work|wouldn't run|would not run))"
)
# How my work went wrong for them, in its words: a failure, a miss, too much of something.
_WENT_BADLY = re.compile(
    r"(?i)\b(?:fail\w*|flop\w*|fell flat|timed out|broke|broken|crash\w*|blew (?:through|past|up)|spoil\w*|"
    r"ruin\w*|burn\w*|burnt|missed|skipped|left out|overlook\w*|forgot|outdated|too \w+|never|"
    r"didn't|did not|couldn't|could not|wasn't|was not|weren't|were not|gave up|melted down|confus\w+|"
    r"overwhelm\w+|discourag\w+|harsh)\b"
)
# What worked instead, told beside the slip: "…confused the user; the medical-test example worked much better".
_BETTER_SINCE = re.compile(
    r"(?i)\b(?:worked|works|went|landed|helped) (?:much |far |a lot |way )?(?:better|more)\b|"
    rf"\b(?:did the trick|clicked|what (?:worked|helped))\b|{patterns.LEARNT}"
)
# A failure and nothing of how ("my fix failed", "my answer was wrong about where they work"): no way to avoid.
_ONLY_FAILED = re.compile(
    r"(?i)(?:completely |totally |just )?(?:failed|was useless|were useless|was wrong|were wrong|didn't work|"
    r"did not work|didn't help|did not help)\b(?! (?:on|for|with) )"
)
# What I did that only says it went badly ("complained that I wasted their time"): a grievance, no way of helping.
_ONLY_BADLY = frozenset({"wasted", "failed", "messed", "screwed", "botched", "ruined", "let", "disappointed", "blew"})
# "My first three regex attempts": which of them, or how many, is no part of what to avoid.
_WHICH_OF_THEM = re.compile(
    r"(?i)^(?:(?:first|second|third|initial|earlier|last|latest|previous|original|two|three|four|five|several|few|"
    r"many|couple of)\s+)+"
)
# "My generic workout plan was too hard for the user", "after studying from my summaries, which skipped the worked
# examples", "because the budget I made was too strict": my work and how it went wrong, at the note's start or as
# its cause.
_MY_WORK_WENT = re.compile(
    rf"(?i)(?:^|\b(?:because|since|as|after \w+ing(?: from| with)?|from|with) ){_MY_WORK}(?:,? which)? "
    rf"(?P<rest>{_WHAT_IT_DID}[^.;!?,]*)"
)
# "User's kid melted down during the 45-minute maths session I planned": the work itself is what to avoid.
_DURING_MY_WORK = re.compile(
    r"(?i)\b(?:during|after|with|from|because of|over) the (?P<made>[a-z0-9'-]+(?: [a-z0-9'-]+){0,3}?) I "
    r"(?:made|wrote|drafted|suggested|picked|chose|put together|proposed|built|planned|set|gave (?:them|her|him))"
    r"\W*$"
)
# "My refactor broke the user's tests because I renamed public functions": what I did that caused it.
_WHAT_I_DID_CAUSED = re.compile(r"(?i)\bbecause I (?P<did>[a-z]+)\b(?P<rest>[^.;!?,]*)")
_MY_WORK_THEN = re.compile(
    rf"(?i)^{_MY_WORK} (?P<rest>{_WHAT_IT_DID}[^.;!?]*?),? (?:and|so) (?:then )?{_CAME_OF_IT}\b[^.;!?]*\W*$"
)
# A slip of mine with its cause, what I left undone: "My shell command deleted the wrong folder because I never
# checked their directory layout", "…and I never asked for the logs". The lesson is to do it first.
_LEFT_UNDONE = re.compile(
    r"(?i)\b(?:because|since|as|and) I (?:(?P<never>never|hadn't|had not) (?P<past>[a-z]+)|"
    r"(?:didn't|did not|forgot to|failed to|neglected to) (?P<base>[a-z]+))\b(?P<rest>[^.;!?,]*)"
)
# What the lesson takes no further: "…and I never asked for the logs and guessed" is to ask for the logs.
_CLAUSE_ENDS = re.compile(r"(?i)\s+(?:and|so|but|then|until|before)\b.*$")
# "…because I forgot to use metric units again": the lesson is every time, not again.
_ONCE_MORE = re.compile(r"(?i)\s+(?:again|this time|either|once more)$")
# Where a thing's words go on past its head ("long preambles before getting to the point"): its number is the head's.
_QUALIFIED = re.compile(r"(?i)\s+(?:before|after|of|to|with|about|for|in|on|at|when|that|which|whenever)\b")
# Not a step one could take first: "because I didn't know they were on Windows" says nothing to start by.
_NO_STEP = frozenset(
    {
        "know",
        "knew",
        "known",
        "realise",
        "realised",
        "realize",
        "realized",
        "notice",
        "noticed",
        "understand",
        "understood",
        "see",
        "saw",
        "seen",
        "think",
        "thought",
        "have",
        "had",
        "mean",
        "meant",
        "want",
        "wanted",
        "like",
        "liked",
        "need",
        "needed",
        "expect",
        "expected",
        "get",
        "got",
        "do",
        "did",
        "be",
        "been",
        "care",
        "cared",
        "bother",
        "bothered",
        "mind",
        "minded",
        "feel",
        "felt",
        "remember",
        "remembered",
        "manage",
        "managed",
        "succeed",
        "succeeded",
        "work",
        "worked",
        "help",
        "helped",
    }
)
# A verb's -ing form where its base does not make it by rule: the last consonant doubled.
_DOUBLED = frozenset(
    {
        "run",
        "get",
        "set",
        "put",
        "plan",
        "stop",
        "cut",
        "shut",
        "begin",
        "swap",
        "drop",
        "skip",
        "step",
        "sit",
        "chat",
        "map",
        "tap",
        "wrap",
        "pin",
        "tag",
        "log",
        "ship",
        "commit",
        "submit",
        "admit",
        "prep",
        "scan",
        "trim",
        "jot",
    }
)
_UNCOUNTED = frozenset(
    {
        "code",
        "advice",
        "information",
        "feedback",
        "help",
        "software",
        "homework",
        "research",
        "music",
        "equipment",
        "guidance",
        "stuff",
        "data",
        "content",
        "copy",
        "work",
        "writing",
    }
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
    "rewrote": "rewriting",
    "overwrote": "overwriting",
    "did": "doing",
    "got": "getting",
    "found": "finding",
    "held": "holding",
    "led": "leading",
    "paid": "paying",
    "built": "building",
    "bought": "buying",
    "broke": "breaking",
    "spoke": "speaking",
    "set": "setting",
    "cut": "cutting",
    "hid": "hiding",
    "misread": "misreading",
    "mistook": "mistaking",
    "overdid": "overdoing",
    "undid": "undoing",
    "shut": "shutting",
    "read": "reading",
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
    if _BETTER_SINCE.search(text):
        return None  # it says what worked instead: that is its lesson already, in its own words
    return _of_what_they_said(text) or _of_my_work(text) or _of_what_i_did(text) or _of_what_is_so_of_them(text)


# A slip whose cause is something so of them: "Budget suggestions in dollars confused things, since they're paid in
# Kenyan shillings", "My reminder was an hour off, since they live in Arizona", "User groaned at the cruise idea; they
# get badly seasick", "…didn't help after they mentioned their data is capped at 1 GB". The lesson is that fact, kept
# in mind; the slip and the feeling go.
_SLIPPED = re.compile(
    rf"(?i)\b(?:{_REACTION}|groan\w*|sigh\w*|bristl\w*|winc\w*|balk\w*|recoil\w*|went quiet|"
    r"(?:was|were) (?:\w+ ){0,2}(?:off|wrong|useless|no use|no good|unworkable|impossible|out of (?:reach|budget))|"
    r"(?:wasn't|was not|weren't|were not) (?:workable|possible|an option|usable|doable|suitable|affordable)|"
    r"(?:turned|sent) (?:down|back)|didn't (?:help|work|fit|suit|land)|did not (?:help|work|fit|suit)|"
    r"confused things|backfired|fell flat|flopped|failed|never fired|put (?:them|her|him) off)\b"
)
_THEM = r"(?:they|she|he|the user|their|his|her)"
# The slip is of my doing: what I did, suggested or made ("User got lost driving because their GPS maps were outdated"
# is their day, no slip of mine).
_OF_MY_DOING = re.compile(
    r"(?i)\b(?:I|I['’]d|my|me|suggest\w*|recommend\w*|propos\w*|ideas?|advice|tips?|plans?|drafts?|reminders?|"
    r"tutorials?|answers?|repl(?:y|ies)|sending|offering|explain\w*)\b"
)
_SO_OF_THEM = re.compile(
    rf"(?i)(?:,|;|\s)\s*(?:since|because|as|given that|seeing as|now that) (?P<fact>{_THEM}\b[^.;!?]*)|"
    rf";\s*(?P<told>(?:they|she|he)(?:['’]re|['’]s| are| is| get| gets| have| has| live| lives| use| uses| work| "
    rf"works| only| can['’]t| cannot| don['’]t| doesn['’]t| never)\b[^.;!?]*)|"
    rf"\bafter {_THEM} (?:mentioned|said|told me|explained|pointed out)(?: that)? (?P<said>[^.;!?]*)|"
    rf"\b(?:and|but) {_THEM} pointed out(?: that)? (?P<pointed>[^.;!?]*)|"
    rf"\bbecause of (?P<because>(?:their|his|her) [^.;!?]*)"
)


def _of_what_is_so_of_them(text: str) -> str | None:
    """A slip (`_SLIPPED`) told with what is so of them that caused it (`_SO_OF_THEM`), that fact as the lesson."""
    cause = _SO_OF_THEM.search(text)
    if cause is None:
        return None
    before = text[: cause.start()]
    # what they pointed out against something of mine is the slip itself: "I recommended ibuprofen and they pointed
    # out their kidney condition rules out NSAIDs"
    if not (cause["pointed"] or _SLIPPED.search(before)) or not _OF_MY_DOING.search(before):
        return None
    fact = _their(next(part for part in cause.groups() if part).rstrip(" ,"))
    if any(compiled(rule.pattern).search(fact) for rule in patterns.FILTER_BLOCKS):
        return None  # a judgement of them given as the cause is no fact to keep
    return f"With this user, keep in mind: {fact}"


def _of_what_they_said(text: str) -> str | None:
    """What they said or found of my work: "complained that my summary left out the deadlines", "found my tone too
    formal", "my breakdown went over her head", "my answer overwhelmed her with ten options"."""
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
    if harm is None:
        return None
    doing = _doing(harm["did"])
    rest = _their(harm["rest"].rstrip(" ,"))
    if doing is None:
        return None
    if rest.startswith((" with ", " by ")):
        return f"With this user, avoid {doing} them{rest}"
    return f"With this user, avoid {doing} them with my {harm['thing'].lower()}{rest}"


def _of_my_work(text: str) -> str | None:
    """What my work did that went wrong for them, or what of mine put them off: "my step-by-step guide skipped a step
    and the user got stuck", "because the budget I made was too strict", "irritated by my long preambles"."""
    work = _MY_WORK_THEN.match(text)
    if work is not None:
        thing = (work["mine"] or work["made"]).lower()
        return f"With this user, avoid {_a(thing)}{thing} that {_their(work['rest'].rstrip(' ,'))}"
    caused = _WHAT_I_DID_CAUSED.search(text)
    if caused is not None and _WENT_BADLY.search(text[: caused.start()]):
        verb = caused["did"].lower()
        doing = None if verb in _NO_STEP else _doing(verb)
        if doing is not None:
            return f"With this user, avoid {doing}{_their(caused['rest'].rstrip(' ,'))}"
    went = _MY_WORK_WENT.search(text)
    if went is not None and _WENT_BADLY.search(went["rest"]) and not _ONLY_FAILED.match(went["rest"]):
        thing = _WHICH_OF_THEM.sub("", went["mine"] or went["made"])
        return f"With this user, avoid {_a(thing)}{thing} that {_their(went['rest'].rstrip(' ,'))}"
    during = _DURING_MY_WORK.search(text)
    if during is not None and _WENT_BADLY.search(text[: during.start()]):
        thing = during["made"]
        return f"With this user, avoid {_a(thing)}{thing}"
    by_my = _BY_MY.match(text)
    if by_my is not None:
        thing = _their(by_my["thing"].rstrip(" ,"))
        return f"With this user, avoid {_a(thing)}{thing}"
    return None


def _of_what_i_did(text: str) -> str | None:
    """What I did, or left undone, that went badly: "annoyed that I gave three options", "because I never checked
    their directory layout", "said I was condescending when I explained…", "confused her by mixing units"."""
    undone = _LEFT_UNDONE.search(text)
    if undone is not None:
        verb = (undone["past"] or undone["base"]).lower()
        doing = None if verb in _NO_STEP else _doing(verb) if undone["past"] else _doing_of_base(verb)
        rest = _ONCE_MORE.sub("", _CLAUSE_ENDS.sub("", _their(undone["rest"].rstrip(" ,"))))
        if doing is not None:
            return f"With this user, start by {doing}{rest}"
    came_across = _CAME_ACROSS.match(text)
    if came_across is not None:
        doing = _doing(came_across["did"])
        if doing is not None:
            return f"With this user, avoid {doing}{_their(came_across['rest'].rstrip(' ,'))}"
    by_doing = _BY_DOING.match(text)
    found = by_doing or _I_DID.match(text) or _I_DID_THEN.match(text)
    if found is None:
        return None
    if found["did"].lower().partition(" ")[0] in _ONLY_BADLY:
        return None
    if by_doing:
        doing = found["did"].lower()
    elif found.re is _I_DID and found["now"] and found["did"].lower() not in _NO_STEP:
        # Told as what happens ("gets annoyed when I suggest…"): what I do is its base.
        verb, _, then = found["did"].lower().partition(" ")
        doing = _doing(verb) or _doing_of_base(verb) + (f" {then}" if then else "")
    else:
        doing = _doing(found["did"])
    if doing is None:
        return None
    return f"With this user, avoid {doing}{_their(found['rest'].rstrip(' ,'))}"


def _a(thing: str) -> str:
    """The article a thing takes in a lesson: none for a plural ("replies that were…") or a thing not counted ("code
    that…"), else "a" or "an". Its number is its head noun's, the last word before what qualifies it ("a breakdown
    of the tax rules", "hints for the puzzle level")."""
    head = _QUALIFIED.split(thing)[0].split()[-1]
    if (head.endswith("s") and not head.endswith("ss")) or head in _UNCOUNTED:
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


def _doing_of_base(verb: str) -> str:
    """A verb's -ing form from its base: "check" checking, "use" using, "tie" tying, "run" running (`_DOUBLED`)."""
    if verb in _DOUBLED:
        return verb + verb[-1] + "ing"
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "oe", "ye")) and len(verb) > 2:
        return verb[:-1] + "ing"
    return verb + "ing"


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
