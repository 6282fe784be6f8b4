"""A user's sentence as a memory says it: about the user in the third person, or in the assistant's own voice."""

from __future__ import annotations

import re
from dataclasses import replace

from rapport.domain.rules import patterns
from rapport.domain.rules.wording import sentence_case, squeeze, third_person, unasked_after
from rapport.domain.text import STOPWORDS
from rapport.domain.time_expressions import tells_of_past

MAX_QUOTED_CHARS = 220

_OPENERS = re.compile(
    r"^(?:(?:ok(?:ay)?|so|well|honestly|(?:hey|hi|hello)(?: again)?|oh|um|ugh|yeah|yes|yep|big news|fun fact|btw|"
    r"by the way|quick one|quick question|(?:quick|small|little) update|update(?=\s*[:—–-])|good news|bad news|"
    r"anyway|alright|right|morning|good morning|ha|haha|lol|exactly|sorry|oops)\b[\s,:;!.—–-]*)+",
    re.IGNORECASE,
)
_POLITE = re.compile(
    r"^(?:(?:please|pls|plz)\s+|(?:could|can|would|will) (?:you|u)(?: please| pls)?\s+|i(?:'d| would) like you to\s+)",
    re.IGNORECASE,
)
_TRAILING = re.compile(r"[\s?!.,;:—–-]+$")
# Thanks said to me open or close a line and are no part of its note: "Thank you, knowing the steps calms me down" is
# noted "knowing the steps calms them down", not "Thank me, knowing…"; "Cheers for the practice paper you made" keeps
# what the thanks were for; "…made itself, thanks for that" and "…, so thank you for that" end before them.
_THANKS = r"(?:thank you|thanks|thank u|thx|ty|cheers)"
_THANKS_FIRST = re.compile(rf"(?i)^{_THANKS}(?: so much| a lot| again)?(?:\s*[,!.:;—–-]+\s*|\s+for\s+)(?=\S)")
_THANKS_LAST = re.compile(
    rf"(?i)[\s,;.!—–-]+(?:so\s+|and\s+)?{_THANKS}(?:\s+(?:so much|a lot|a ton|again|for that|for this|for everything|"
    r"for the help|for your help|mate))*\s*[.!]*$"
)
# What closes a chat line and no note: "I have type 1 diabetes btw", "I moved to Berlin lol".
_CLOSERS = re.compile(r"(?:[\s,]+(?:btw|lol|haha|tbh|fyi|imo|imho|lmao|xd|:\)|:D))+$", re.IGNORECASE)
# A second verb after "but", "and" or a comma shares the sentence's "I": "I work nights but sleep fine" -> "… but
# sleeps fine", "I'm vegan and never eat honey" -> "… and never eats honey". After "and" only where it is surely a
# verb: an adverb before it, an object after it ("and coach their team"), or a verb that is never a noun ("and take
# things literally"); and not where an infinitive or a modal comes before it in its clause ("I want to retire at 55
# and live by the sea", "I can cook and drive" coordinate two plain verbs): "I love music and travel" keeps its noun.
# After a comma only a verb of how they are (`_HOW_THEY_ARE`).
_SECOND_VERB = re.compile(
    r"(?:\b(?P<joint>but|and)|(?P<listed>,)) (?P<adverbs>(?:(?:never|still|also|always|usually|often|mainly|mostly|"
    r"sometimes|rarely|really|just|now|only|actually|generally|even) )*)(?P<verb>[a-z]+n['’]t|[a-z]+)\b"
    r"(?P<object> (?:the|a|an|my|his|her|their|our|its|it|them|him|this|that|these|those|every|some|most|all)\b)?"
)
# Never a noun: "I'm 34 and have never learned to swim".
_AUXILIARIES = frozenset("have haven't haven’t do don't don’t".split())
_INFINITIVE_BEFORE = re.compile(r"(?i)\b(?:to|can|can't|can’t|could|will|would|should|must|might|may) \w+")
_CLAUSE_MARK = re.compile(r"[,;:—–]")
_NEVER_NOUNS = frozenset(
    "live hate want need prefer enjoy speak teach write know think eat take get find keep spend stay struggle manage "
    "wear buy grow make go".split()
)
# After "and", a verb of where someone works or lives, and where: "and work in marketing", "and study at Leeds".
_WHERE_THEY_ARE = frozenset("work live study teach".split())
_PLACED = re.compile(r" (?:in|at|for|from|as|near|on|with|part-time|full-time|nights|remotely)\b")
_HOW_THEY_ARE = frozenset("live hate want need prefer enjoy speak love own struggle".split())
_COMMON_VERBS = frozenset(
    "live work love like hate want need have go study play run use prefer plan hope try enjoy own speak teach write "
    "read cook travel visit feel think know miss do sleep eat drink drive walk ride swim make take get find keep "
    "spend stay struggle manage coach support help volunteer commute cycle paint sing dance bake climb hike knit "
    "watch listen look care follow avoid wear buy grow".split()
)
# "I", or a "we" of the user's own life (their household, their couple): "we adopted a greyhound" is the user's news,
# "our basement flooded" the user's basement.
_I_START = re.compile(
    r"^(?P<who>[Ii]|[Ww]e)(?P<contraction>'m|’m|'re|’re|'ve|’ve|'d|’d|'ll|’ll)?\s+(?P<rest>.*)$", re.DOTALL
)
_MY_START = re.compile(r"^(?:[Mm]y|[Oo]ur)\s+(?P<rest>.*)$", re.DOTALL)
# A "we" that is more than the user: what they did together or to each other ("we met at 11", "we both prefer aisle
# seats", "we tried the new Thai place together") is said of "they", not of the user alone.
_TOGETHER = re.compile(
    r"(?i)^(?:both|all|each)\b|\b(?:together|each other|one another)\b|"
    r"^(?:\w+ly\s+)?(?:met|meet|talk|talked|fight|fought|argue|argued|agree|agreed|disagree|disagreed|share|shared|"
    r"split|broke up|kissed|hugged)\b"
)
# What a "we" says in the plural, the user alone says so: "we were" -> "User was".
_PLURAL = {"are": "is", "were": "was", "aren't": "isn't", "weren't": "wasn't", "aren’t": "isn’t", "weren’t": "wasn’t"}
# The user and someone of theirs as one subject: "My husband and I are vegetarian", "me and my sister run a bakery".
_WE_START = re.compile(
    r"^(?:[Mm]y\s+(?P<who>[\w'’-]+(?:\s+[\w'’-]+)?)\s+and\s+(?:I|me)|(?:[Mm]e|I)\s+and\s+my\s+"
    r"(?P<with>[\w'’-]+(?:\s+[\w'’-]+)?))\s+(?P<rest>\S.*)$",
    re.DOTALL,
)
_ADVERBS = frozenset(
    {
        "really",
        "just",
        "always",
        "usually",
        "also",
        "never",
        "still",
        "recently",
        "generally",
        "often",
        "mostly",
        "mainly",
        "sometimes",
        "rarely",
        "now",
        "only",
        "actually",
        "honestly",
        "totally",
        "absolutely",
        "definitely",
        "finally",
        "already",
        "barely",
        "hardly",
        "seriously",
        "literally",
        "probably",
        "occasionally",
        "normally",
        "typically",
        "currently",
        "basically",
        "obviously",
        "apparently",
        "desperately",
    }
)
_CONTRACTED = {
    "'m": "is",
    "’m": "is",
    "'re": "is",
    "’re": "is",
    "'ve": "has",
    "’ve": "has",
    "'d": "would",
    "’d": "would",
    "'ll": "will",
}
_CONTRACTED["’ll"] = "will"
_MODAL_CONTRACTIONS = frozenset({"'d", "’d", "'ll", "’ll"})
_IRREGULAR = {
    "am": "is",
    "was": "was",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "don’t": "doesn’t",
    "go": "goes",
    "can't": "can't",
    "can’t": "can’t",
    "can": "can",
    "cannot": "cannot",
    "may": "may",
    "shall": "shall",
    "shouldn't": "shouldn't",
    "couldn't": "couldn't",
    "wouldn't": "wouldn't",
    "could": "could",
    "would": "would",
    "will": "will",
    "should": "should",
    "must": "must",
    "might": "might",
    "did": "did",
    "didn't": "didn't",
    "didn’t": "didn’t",
    "haven't": "hasn't",
    "haven’t": "hasn’t",
    "won't": "won't",
    "wasn't": "wasn't",
}
# Past forms that do not end in -ed, which take no -s ("I got a mac" -> "User got a mac").
_IRREGULAR_PAST = frozenset(
    "got had went made took left came gave found kept felt began bought brought thought told said ran met saw knew "
    "grew wrote spent lost sold sent built became chose drove flew forgot held paid taught won woke broke fell sat "
    "stood swam threw understood laid drew spoke".split()
)
_WORD = re.compile(r"[A-Za-z’']+")
# The assistant's voice: the user's "you" is the assistant. Before a verb it is "I", otherwise "me".
_YOU_SUBJECT_BEFORE = frozenset(
    {
        "are",
        "were",
        "will",
        "can",
        "could",
        "should",
        "would",
        "do",
        "did",
        "don't",
        "don’t",
        "didn't",
        "keep",
        "kept",
        "gave",
        "give",
        "made",
        "make",
        "suggest",
        "suggested",
        "said",
        "told",
        "tell",
        "showed",
        "show",
        "always",
        "never",
        "just",
        "know",
        "explained",
        "explain",
        "push",
        "pushed",
        "compare",
        "recommend",
        "propose",
        "answer",
        "end",
        "start",
        "write",
        "use",
        "put",
        "had",
        "have",
        "got",
        "pick",
        "asked",
        "ask",
        "help",
        "helped",
        "found",
        "walked",
    }
)
# Words after which "you" opens a clause, and so is its subject whatever verb follows: "when you rewrote my paragraph",
# "if you number the steps". After a verb or a preposition it is the object ("thank you", "with you").
_YOU_SUBJECT_AFTER = frozenset(
    "when whenever if whether because since as after before until once while so and but that how what where why who "
    "unless "
    "though although than rather then".split()
)
# "you and I" (or "you and me") are the assistant and the user, so "we", or "us" after a preposition.
_YOU_AND_I = re.compile(r"(?i)\b(?P<after>(?:between|with|for|to|of|about|from|by|like)\s+)?you and (?:I|me)\b(?!['’])")
# Words that follow an object "you" rather than a subject's verb: "you too", "you all", "for you and me".
_NOT_A_VERB = frozenset("too all both guys so very again for to with and or in on at of from".split())
_ASSISTANT_SWAPS = {
    "you're": "I'm",
    "you’re": "I’m",
    "you've": "I've",
    "you’ve": "I’ve",
    "you'd": "I'd",
    "you’d": "I’d",
    "you'll": "I'll",
    "you’ll": "I’ll",
    "your": "my",
    "yours": "mine",
    "yourself": "myself",
}


def clause(sentence: str) -> str:
    """The sentence without what opens a chat ("ok so", "honestly") or asks politely ("could you"), and without its
    closing punctuation."""
    text = squeeze(sentence).lstrip(" :;,.—–-'\"")
    text = _OPENERS.sub("", text)
    text = _POLITE.sub("", text)
    text = _THANKS_FIRST.sub("", text, count=1)
    text = _TRAILING.sub("", _CLOSERS.sub("", _TRAILING.sub("", text)))
    text = _TRAILING.sub("", _THANKS_LAST.sub("", text, count=1))
    return clipped(text, MAX_QUOTED_CHARS)


def clipped(text: str, limit: int) -> str:
    """The text in at most `limit` characters: cut at the last word that fits and marked "…", not in a word's middle
    ("…the timeouts are go")."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if text[limit - 1].isalnum() and cut[-1:].isalnum() and " " in cut:  # the cut falls inside a word
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:—–-") + "…"


def about_user(sentence: str) -> str:
    """ "I'm really into bouldering lately" -> "User is really into bouldering lately"; "My exam is next week" ->
    "User's exam is next week"; a "we" or an "our" of their own life likewise ("we adopted a greyhound" -> "User
    adopted a greyhound"), unless it is more than the user (`_TOGETHER`); anything else -> "User says: …" in the third
    person. What the sentence asks me, before or after what it tells of them, is no part of the note (`unasked_after`,
    `_ASKED_BEFORE`)."""
    text = clause(sentence)
    text = unasked_after(text)
    text = _ASKED_BEFORE.sub("", text, count=1)
    if not text:
        return ""
    together = _WE_START.match(text)
    if together is not None:
        who = together.group("who") or together.group("with")
        return f"User and their {who} {_third(together.group('rest'), ours=False)}"
    started = _I_START.match(text)
    we = started is not None and started.group("who").lower() == "we"
    if started is not None and we and _TOGETHER.search(started.group("rest")):
        started = None
    if started is not None:
        rest = started.group("rest")
        contraction = started.group("contraction")
        if contraction:
            said = _third(rest, ours=False)
            if contraction not in _MODAL_CONTRACTIONS:  # "I'd cook and clean" shares "would"
                said = _SECOND_VERB.sub(_second_conjugated, said)
            return sentence_case(f"User {_CONTRACTED[contraction]} {said}")
        words = rest.split(" ")
        leading: list[str] = []
        while words and words[0].lower() in _ADVERBS:
            leading.append(words.pop(0))
        if not words:
            return ""
        plural = _PLURAL.get(words[0].lower()) if we else None
        if plural is not None:
            verb = plural
        elif words[0].lower() in _SAME_IN_PAST and tells_of_past(rest):
            verb = words[0]
        else:
            verb = _conjugated(words[0])
        rest = _SECOND_VERB.sub(_second_conjugated, _third(" ".join(words[1:]), ours=False))
        return sentence_case(squeeze(" ".join(["User", *leading, verb, rest])))
    mine = _MY_START.match(text)
    if mine is not None:
        return sentence_case(f"User's {_third(mine.group('rest'), ours=False)}")
    return f"User says: {lower_first(_third(text, ours=False))}"


# A question first, then what the user tells of themselves after a dash or a semicolon: "what should I order at a
# thai place — coriander tastes like soap to me".
_ASKED_BEFORE = re.compile(
    r"(?i)^(?:what|how|where|which|who|why|when|can|could|should|would|is|are|do|does|any)\b[^—–;?]*[—–;]\s*(?=\S)"
)


def assistant_voice(sentence: str) -> str:
    """The user's words as the assistant writes them down: the user is "they", the assistant "I" or "me", and "we"
    stays ours ("give me a hint, I want to figure it out myself" -> "give them a hint, they want to figure it out
    themselves")."""
    # "the letter you and I drafted" is "the letter we drafted", "between you and I" "between us".
    text = _YOU_AND_I.sub(lambda m: f"{m['after']}us" if m["after"] else "we", _unasked(clause(sentence)))
    words = _WORD.split(text)
    found = _WORD.findall(text)
    out: list[str] = [words[0]]
    for position, word in enumerate(found):
        # A clause that ends after the word has nothing following it ("I'm blocking you, just kidding").
        ends = _CLAUSE_OPENS.search(words[position + 1]) or _SENTENCE_ENDS.search(words[position + 1])
        following = found[position + 1].lower() if position + 1 < len(found) and not ends else ""
        # After a comma, a colon or a dash a clause opens, as at the start ("here's the chapter, you flag the rest").
        before = found[position - 1].lower() if position > 0 and not _CLAUSE_OPENS.search(words[position]) else ""
        named = found[position - 2].lower() if position > 1 and before else ""
        if named and named not in _NAMING_NEAR:
            named = _article_naming(found, words, position) or named
        out.append(_assistant_word(word, following, before, named))
        out.append(words[position + 1])
    return lower_first(_third("".join(out)))


# A request put to me inside the sentence, after what leads it in: "from now on can you lead with the steps", "like
# every month, could you help me reconcile it", "could you, in general, write to me in plain English". The note keeps
# what is asked ("from now on lead with the steps"): "can I lead with the steps" would be the assistant asking.
_ASKED_INSIDE = re.compile(
    r"(?i)(?P<lead>^|[,;:—–]\s*|\b(?:so|then|and|now on|forward|general|favou?r|thing|me|us|it)\s+)"
    r"(?:can|could|would|will) (?:you|u)(?: please| pls)?(?:,\s*(?P<aside>[^,]{1,30}),)?\s+(?=[a-z])"
)


def _unasked(text: str) -> str:
    """The text without the request put to me inside it (`_ASKED_INSIDE`), what it asks kept."""
    return _ASKED_INSIDE.sub(lambda m: m["lead"] + (f"{m['aside']}, " if m["aside"] else ""), text)


def _article_naming(found: list[str], words: list[str], position: int) -> str:
    """The article three or four words before the "you" at `position` when the words after it name a thing ("the
    pomodoro schedule you set up", "the lesson plan template you set up"): none of them ends a clause, opens one, or
    takes an object; "" otherwise."""
    for back in (3, 4):
        if position < back:
            return ""
        between = [w.lower() for w in found[position - back + 1 : position]]
        if any(_CLAUSE_OPENS.search(words[n]) for n in range(position - back + 1, position + 1)) or any(
            w in _OBJECT_AFTER or w in _YOU_SUBJECT_AFTER or w in _ASKING or w in _NAMING for w in between
        ):
            return ""
        if found[position - back].lower() in _NAMING:
            return found[position - back].lower()
    return ""


_GERUND = re.compile(r"[a-z]{2,}ing")
# A past tense makes "you" its subject wherever it stands: "the analogy you used", "the plan you drew up" ("need" and
# "feed" are no past; nor, here, "set" or "put", which may be a present after an object: "let you set it").
_PAST = re.compile(r"[a-z]{2,}(?<!e)ed")
# Words after which "you" is an object, whatever follows ("the options for you listed below").
_OBJECT_AFTER = frozenset("for to with at of from on in about by".split())
# The verb after a subject "you", as it agrees with "I".
_AGREEING_WITH_I = {"are": "am", "were": "was", "weren't": "wasn't", "weren’t": "wasn’t", "aren't": "am not"}
# The verb before "you" in a question ("are you sure", "why were you so brief"), as it agrees with "I".
_ASKED_OF_I = {"are": "am", "were": "was", "weren't": "wasn't", "weren’t": "wasn’t"}
# The verbs a question puts before its subject: after one, "you" is the subject ("did you get it", "can you see").
_ASKING = frozenset(
    "are were aren't weren't do did don't didn't does can could can't couldn't will would won't wouldn't should "
    "shouldn't have haven't had hadn't shall".split()
)
# Articles: after one, a noun and then "you" opens a clause naming it ("the seed you need", "a place you like").
# Not "that" or "this", which are as often a subject before a verb ("that made you laugh", "that cost you a
# fortune"): right before "you" and its noun, they name it only when a verb whose past is its present follows ("that
# timeline you set out"; other pasts make "you" a subject wherever it stands), and further back not at all ("that
# means blog draft → you → trim it").
_NAMING = frozenset("the a an every another".split())
_DEMONSTRATIVES = frozenset("this that these those".split())
_NAMING_NEAR = _NAMING | _DEMONSTRATIVES
# Verbs whose object does what follows ("let you set it up", "made you put it off", "help you cut it down"): "you"
# after one is that object, whatever verb follows.
_OBJECT_BEFORE_INFINITIVE = frozenset(
    "let lets letting made make makes making help helps helped helping watch watched see saw hear heard".split()
)
_HAVE = frozenset("have has had having".split())
# A verb's plain form, never its participle: after "have you" it is what I am to do.
_BASE_AFTER_HAVE = (
    _COMMON_VERBS
    | frozenset(
        "write check review draft explain edit fix test handle build draw sort summarise summarize translate "
        "proofread pick plan look walk quiz suggest show tell give ask answer start remind".split()
    )
) - frozenset("read put set cut hit let quit shut run come become".split())
_THANK_YOU_THINGS = frozenset("note notes card cards letter letters email emails gift gifts message messages".split())
_NOT_A_GERUND = frozenset("bring sing ring swing sting cling fling spring wring string".split())
_CLAUSE_OPENS = re.compile(r"[,;:—–]|\s-\s")
_SENTENCE_ENDS = re.compile(r"[.!?]")


def _assistant_word(word: str, following: str, before: str, named: str = "") -> str:
    """`before`: the word before it, "" at the clause's start, where "you" is a subject too ("You rewrote it");
    `named`: the word before that."""
    lowered = word.lower()
    if following == "you" and lowered in _ASKED_OF_I:
        return _ASKED_OF_I[lowered]  # "are you sure" is noted "am I sure"
    if lowered == "you":
        if before == "thank" and following in _THANK_YOU_THINGS:
            return word  # "thank you notes" are the user's to send
        if _GERUND.fullmatch(following) and following not in _NOT_A_GERUND:
            return "\x00me"  # the doer of a gerund: "you playing the landlord helped" is "me playing the landlord"
        if before in _OBJECT_BEFORE_INFINITIVE or (before in _HAVE and following in _BASE_AFTER_HAVE):
            # "let you set it up", "made you put it off", "have you write the implementation": the object of the
            # verb before it ("have you tried" and "have you got" ask me instead)
            return "\x00me"
        opens = (
            before in _YOU_SUBJECT_AFTER
            or not before
            or (
                (named in _NAMING or (named in _DEMONSTRATIVES and following in _SAME_IN_PAST))
                and before not in _OBJECT_AFTER
                and before not in _NAMING
            )
        )
        subject = (
            following in _YOU_SUBJECT_BEFORE
            or before in _ASKING
            or ((bool(_PAST.fullmatch(following)) or following in _IRREGULAR_PAST) and before not in _OBJECT_AFTER)
            or (opens and following and following not in _NOT_A_VERB)
        )
        return "\x00I" if subject else "\x00me"
    if before == "you" and lowered in _AGREEING_WITH_I:
        return _AGREEING_WITH_I[lowered]  # "you were the waiter" is noted "I was the waiter"
    swapped = _ASSISTANT_SWAPS.get(lowered)
    if swapped is None:
        return word
    # Marked so the third-person pass that follows leaves the assistant's own "I"/"my" alone.
    return f"\x00{swapped}"


_OURS = frozenset({"we", "our", "ours", "us"})
_ABOUT_THE_USER = replace(
    patterns.LEXICON,
    third_person={
        **patterns.LEXICON.third_person,
        "we're": "they're",
        "we’re": "they’re",
        "we've": "they've",
        "we’ve": "they’ve",
        "we'll": "they'll",
        "we’ll": "they’ll",
    },
)
_IN_OUR_VOICE = replace(
    patterns.LEXICON,
    # "I'd rather you skip the pleasantries" is noted "they'd rather I skip the pleasantries".
    third_person={
        **{k: v for k, v in patterns.LEXICON.third_person.items() if k not in _OURS},
        "i'd": "they'd",
        "i’d": "they’d",
    },
)


def _third(text: str, *, ours: bool = True) -> str:
    """First person to third, leaving the assistant's marked words alone; "we/our/us" stay ours in the assistant's
    voice (`ours`), and become "they" in a memory about the user."""
    lexicon = _IN_OUR_VOICE if ours else _ABOUT_THE_USER
    parts = text.split("\x00")
    converted = [third_person(parts[0], lexicon)]
    for part in parts[1:]:
        # The space after a marked word stays, before the next one too ("thank me, I put it well").
        marked, space, tail = part.partition(" ")
        converted.append(marked + space + (third_person(tail, lexicon) if tail else ""))
    return "".join(converted)


def _second_conjugated(found: re.Match[str]) -> str:
    verb = found.group("verb")
    if verb not in _COMMON_VERBS and verb not in _AUXILIARIES:
        return found.group(0)
    after_infinitive = _INFINITIVE_BEFORE.search(_CLAUSE_MARK.split(found.string[: found.start()])[-1])
    if found.group("listed"):
        # After a comma only a verb of how they are, which no one asks of me: "I'm 29, live in Manchester" ->
        # "…, lives in Manchester", but "I have type 1 diabetes, keep that in mind" asks it of me.
        if verb not in _HOW_THEY_ARE or after_infinitive:
            return found.group(0)
        return f", {found.group('adverbs')}{_conjugated(verb)}{found.group('object') or ''}"
    # where they are after a verb of working or living says it is one: "and work in marketing"
    placed = verb in _WHERE_THEY_ARE and _PLACED.match(found.string, found.end())
    surely_a_verb = found.group("adverbs") or found.group("object") or verb in _AUXILIARIES or verb in _NEVER_NOUNS
    if found.group("joint") == "and" and (not (surely_a_verb or placed) or after_infinitive):
        return found.group(0)
    return f"{found.group('joint')} {found.group('adverbs')}{_conjugated(verb)}{found.group('object') or ''}"


# Verbs whose past is their present: "I put my back out yesterday" is noted "User put…", not "User puts…", when the
# sentence places it before now (`tells_of_past`).
_SAME_IN_PAST = frozenset("put set cut hit hurt let quit shut split spread cost bet burst read".split())


# Verbs whose present ends as a past does: "I need a break" -> "User needs a break".
_PRESENT_IN_ED = frozenset("need feed bleed breed speed heed succeed proceed exceed weed".split())


def _conjugated(verb: str) -> str:
    lowered = verb.lower()
    if lowered in _IRREGULAR:
        return _IRREGULAR[lowered]
    past = lowered.endswith("ed") and lowered not in _PRESENT_IN_ED
    if not lowered.isalpha() or past or lowered in _IRREGULAR_PAST:  # not a verb, or past already
        return verb
    if lowered.endswith("y") and len(lowered) > 2 and lowered[-2] not in "aeiou":
        return verb[:-1] + "ies"
    if lowered.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    return verb + "s"


def lower_first(text: str) -> str:
    """A sentence's first word in lower case when it continues a note: only a word that is never a name (an
    article, a pronoun, a verb's -ing form); "Atlas", "CI" and "I" keep their capitals."""
    if not text:
        return text
    first = text.split(" ", 1)[0]
    lowered = first.lower()
    if first[1:] != lowered[1:] or not (lowered in STOPWORDS or lowered.endswith("ing")) or first == "I":
        return text
    return text[:1].lower() + text[1:]
