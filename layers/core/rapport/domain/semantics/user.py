"""User memories by meaning: the user's sentences no pattern read, matched to a kind, told in the third person."""

from __future__ import annotations

import re
from typing import NamedTuple

from rapport.domain.models import MessageRole
from rapport.domain.prompts.conversation import ConversationInput
from rapport.domain.prompts.extract_user import ExtractedUserMemory, UserMemoryKind
from rapport.domain.rules import patterns
from rapport.domain.rules.schema import FactRule
from rapport.domain.rules.wording import compiled, kept_values, sentences
from rapport.domain.semantics.matcher import Calibration, Match, SemanticLayer
from rapport.domain.semantics.prototypes import USER_KINDS
from rapport.domain.semantics.relational import continues_our_work
from rapport.domain.semantics.voice import about_user
from rapport.domain.signals import has_crisis_language
from rapport.domain.time_expressions import says_when

_IMPORTANCE = {"fact": 0.7, "preference": 0.6, "event": 0.5, "goal": 0.6}
# What a pattern reads loosely ("I want to …", "I like …"): its sentence must mean a wish or a taste of the user's,
# not a task for this conversation ("I want to write it down properly") or a feeling ("I want to die…").
_LOOSE_KINDS = frozenset({"goal", "preference"})
_PLAIN_KINDS = frozenset({"fact", "event"})  # said without a word of their own
# As near a kind as this, the meaning is the evidence: "I can't handle very spicy food" sits at 0.84 of a taste.
_SURE = 0.6
_MIN_WORDS = 3
# Two words can say who someone is ("I'm vegan.", "I'm teetotal", "I'm Deaf"): such a self-description is read
# though it is short, and kept only as a fact the probe is sure of (`_PROBE_SURE`), since "I'm fine", "I'm back" and
# "I'm busy" are just as short and say nothing to keep.
_SELF_DESCRIBED = re.compile(r"(?i)^\W*(?:I'?m|I’m)\s+[\w-]+\W*$")
# The user probe's probability from which its kind is taken over the prototypes' (`_probed_label`): on the sets' even
# lines 0.6 and 0.7 found a few kinds more than 0.8 and drew 4 and 1 more where nothing was due.
_PROBE_SURE = 0.8
_PROBED_KINDS = frozenset({"preference", "event", "goal"})
# The same probe over a whole message: its sentences alone are read less surely ("The aim for the next couple of years
# is reading Portuguese novels…" is 0.39 an aim, its message 0.96). On the sets' even lines 0.8 found two tastes more
# than 0.9 and nothing less; the test half, read with it at 0.8 and facts taken too, found one more false taste.
_MESSAGE_SURE = 0.9
# A taste or an aim is said with its word ("love", "can't stand", "my thing"; "want to", "aiming", "saving up"):
# "I speak Portuguese" sits near "I want to learn a language", and is a fact.
_KIND_EVIDENCE = {
    "preference": re.compile(
        r"(?i)\b(?:lov(?:e|ed|ing)|like|likes|enjoy\w*|prefer\w*|hate|hated|dislike\w*|can'?t stand|cannot stand|fan|"
        r"into|favou?rite|my thing|rather|always|never|adore|obsessed|passion\w*|big on|not big on|crazy about|"
        # "over" chooses ("a quiet beach over a city break"), but "over the holidays" only says when
        r"over(?! (?:the |this |last |next |a |my )?(?:holidays?|weekend|summer|winter|spring|autumn|fall|christmas|"
        r"easter|new year|break|years?|months?|weeks?|days?|night|past|phone|internet|there|here))|"
        r"no sugar|black|fond|keen|night owl|early bird|[\w-]+ person|sucker for|suits me|bores? me|"
        # a taste said as a kind of person or a narrow choice: "a tea snob, only oolong for me", "picky with music"
        r"snob|picky|fussy|only\b[^.,;!?]{1,40}\bfor me|"
        r"(?:is|are|isn'?t|aren'?t) for me|my cup of tea|can'?t get enough|"
        # a comparison or a judgment: "trains beat flying", "the hotter the better", "X over Y any day"
        r"better|best|worse|worst|beats?|happier|happiest|any ?(?:day|time)|every ?time|no contest)\b"
    ),
    "goal": re.compile(
        r"(?i)\b(?:want(?:s|ed)? to|wanna|hop(?:e|ing) to|goal|aim\w*|plan(?:ning)? to|my plan|trying to|try to|"
        r"saving (?:up )?(?:to|for)|training for|learning|would love to|'d love to|'d like to|would like to|dream\w*|"
        r"one day|some ?day|by (?:the end|next|summer|spring|winter|autumn|fall)|working towards?|resolution|"
        r"determined to|committed to|intend(?:ing)? to|set on|ambitions?|targets?|objectives?|mission|"
        # "got my eye on walking the Camino in 2028", "set my sights on a first-class degree"
        r"(?:my|an) eye on|my sights on)\b"
    ),
}
# A taste said outright, "I" and a verb of taste first ("I'm obsessed with Ethiopian food", "I can't stand cilantro"),
# is a taste however near a fact its topic puts it; not one of what is theirs ("I love my job"), which is the fact.
_TASTE_SAID = re.compile(
    r"(?i)^\W*(?:(?:honestly|tbh|really|and|but)\W+|[\w' ]{1,20},\s*)?I(?:['’]m| am|['’]ve| have)? "
    r"(?:really |absolutely |totally |just |always |never )?"
    r"(?:obsessed with|crazy about|in love with|(?:not |never )?(?:a |really a |much of a )?(?:huge |big |massive |"
    r"total |complete |real )?(?:fan of|sucker for)|love|adore|hate|loathe|"
    # a taste in the past only as one that has lasted: "I've always loved…", not "I liked pages 1-8"
    r"(?<=always )(?:loved|adored|liked|hated|disliked|enjoyed)|(?<=never )(?:loved|liked|enjoyed)|"
    r"can['’]?t stand|cannot stand|can['’]?t bear|cannot bear|detest|"
    # a judgment of their own: "I find anchovies way too fishy"
    r"find\b[^.,;!?]{1,40}?\b(?:way |far |much |a bit |a little |just )?too \w+)\b(?! my\b)"
    # or what they do, said with how the other way feels: "I never carry anything on one shoulder, it drives me mad"
    r"|^\W*I\b[^.;!?]*\b(?:drives?|driving) me (?:mad|crazy|nuts|bonkers|insane|up the wall|round the bend)\b"
)
# A taste shouted in capitals is as often irony ("oh yeah, I absolutely ADORE spending my sunday doing paperwork"):
# the words of a taste alone do not make it one where the prototypes are far.
_SHOUTED = re.compile(r"\b(?:LOVE|LOVED|ADORE|ADORED|LIKE|ENJOY)\b")
# A fact said outright, "I" or "we" and a verb of how they live: "we live on a narrowboat", "I own a 2014 Honda Jazz".
_FACT_SAID = re.compile(
    r"(?i)^\W*(?:I|we)(?:\s+|(?=['’]ve got))(?:(?:still|currently|now|both|all)\s+)?"
    r"(?:live|rent|own|grew up|was born|were born|speak|"
    # how they earn a living, not a task ("I work on my thesis") nor how they work with me ("I work best when…")
    r"work\b(?!\s+(?:out|on|through|best|better|well|badly|hard|harder|it|this|that|with|around|fine|quickly|"
    r"slowly|faster|in bursts|alone|together)\b)|"
    # a condition they live with: "I have coeliac disease", "I've got type 1 diabetes"
    r"(?:have|['’]ve got|suffer from|live with)\s+(?:(?:type [12]|mild|severe|chronic)\s+)?(?:[\w-]+\s+)?"
    r"(?:disease|syndrome|disorder|allergy|allergies|diabetes|asthma|epilepsy|adhd|autism|arthritis|migraines?|"
    r"tinnitus|dyslexia|anxiety|depression|ibs|endometriosis|lupus|psoriasis|eczema|sleep apnoea|sleep apnea)|"
    # what their body will not take: "I can't eat gluten", "we can't have nuts in the house"
    r"(?:can['’]?t|cannot|can not) (?:eat|have|drink|digest|tolerate|stomach)\s+(?!(?:it|this|that|anything|"
    r"any more|another|until|till|before|after)\b)\w+)\b"
)
# A state that has lasted is how things are, not news, whatever its topic puts it nearest: "I've had a herniated disc
# for years", "we've lived here since I was a kid".
_LASTING = re.compile(
    r"(?i)\b(?:I|we)(?:['’]ve| have) (?:had|been|lived|owned|worked|used|played|known|suffered|struggled)\b[^.;!?]*?"
    r"\b(?:for (?:years|decades|ages|a long time|most of my life|(?:\d+|two|three|four|five|six|seven|eight|nine|ten|"
    r"many|several|a few|a couple of) (?:years|decades))|since (?:I was|we were|childhood|birth|my teens|school))\b"
)
# A routine said outright: what they do, in the present, and how often ("I run every morning before work", "I go to
# the gym three times a week", "we eat out most Fridays"). How they live is a fact, whatever kind its topic sits
# nearest (a taste, an aim); not a wish, a taste or a habit given up ("I'd love to swim every day", "I used to…").
_ROUTINE = re.compile(
    r"(?i)^\W*(?:I|we)\s+(?:(?:usually|normally|always|generally|often|still|also|now)\s+)?"
    r"(?!(?:am|was|were|will|would|could|should|can|might|must|want|wanted|need|needed|hope|plan|wish|love|like|"
    r"hate|prefer|enjoy|think|feel|used|don['’]t|didn['’]t|never|try|"
    # told as done: a verb in the past is what happened then, not how they live
    r"\w+ed|made|went|got|took|did|had|came|ran|saw|gave|kept|left|felt|found|told|said|thought|bought|brought|"
    r"began|wrote|ate|drank|sat|stood|slept|spent|sent|met|paid|lost|won|taught|caught|held|swam|rode|drove|flew)\b)"
    r"[a-z]+\b[^.;!?]*?\b"
    r"(?:every(?: single)? (?:day|morning|afternoon|evening|night|week|weekend|month|weekday|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)|each (?:day|morning|evening|night|week)|daily|nightly|weekly|"
    r"(?:once|twice|three times|four times|five times|\d+ times|a few times|a couple of times) (?:a|per|each) "
    r"(?:day|week|month)|on (?:weekends|weekdays|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)|"
    r"most (?:days|mornings|evenings|nights|weekends))\b"
)
# What they are good or bad at, said of themselves: "I'm terrible at maths", "I'm pretty good with spreadsheets".
_SELF_ASSESSED = re.compile(
    r"(?i)^\W*(?:(?:honestly|tbh|and|but|well|also),?\s+)?I(?:['’]m| am)\s+(?:(?:really|pretty|quite|so|very|"
    r"absolutely|totally|just|kind of|kinda|not)\s+)?(?:terrible|awful|hopeless|useless|rubbish|bad|poor|good|great|"
    r"decent|brilliant|okay|ok|comfortable|confident|fluent|clueless|crap)\s+(?:at|with)\s+\w"
)
# An aim only wondered about ("maybe I'll learn guitar someday, who knows") is no goal yet.
_WONDERED = re.compile(r"(?i)\b(?:maybe|perhaps|might|who knows)\b")
# An aim said as one: "my plan is to…", "my goal for this year is…", "I'm saving up to…".
_AIM_STATED = re.compile(
    r"(?i)^\W*(?:(?:so|and|but|well|honestly|basically|[\w' ]{1,20},),?\s+)?"
    r"(?:(?:(?:my|the|our) (?:(?:big|main|real|biggest|one|only|ultimate|long-term|new)\s+)?)?"
    r"(?:plan|goal|aim|dream|resolution|ambition|target|objective|mission)s?(?: for [\w ]{1,20}?)? (?:is|are) "
    r"(?:to|that)\b|"
    r"I(?:['’]m| am) (?:aiming|planning|saving up|hoping|determined|committed|set on) to\b)"
)
# Told as done: a verb in the past at the start, with or without its "I" ("finished…", "I ran…", "we got…").
_DONE = re.compile(
    r"(?i)^\W*(?:(?:I|we)\s+)?(?:(?:just|finally|recently|also|already)\s+)?(?:(?!"
    + "|".join(
        # words in "-ed" that tell nothing done: "need this outline by tomorrow 9am" is a task of this chat
        ("need", "feed", "seed", "speed", "bleed", "breed", "heed", "proceed", "succeed", "exceed", "indeed", "embed")
    )
    + r")[a-z]+ed|got|had|ran|won|lost|went|came|flew|drove|met|found|sold|bought|broke|began|left|quit|took|made|"
    r"gave|saw|did)\b"
)
# Someone else's news is not the user's: "my sister's boyfriend failed his exam".
_SOMEONE_ELSE = re.compile(
    r"(?i)^\W*(?:my|our)\s+(?:[\w-]+\s+){0,2}?(?:friend|colleague|co-?worker|boss|manager|sister|brother|mum|mom|dad|"
    r"mother|father|wife|husband|partner|son|daughter|kid|girlfriend|boyfriend|neighbou?r|cousin|aunt|uncle|"
    r"grand\w+|parents?)(?:'s|’s)\s+"
    # unless what is theirs is a day of the user's life too: "my mum's hip surgery is on 3 March"
    r"(?!(?:[\w-]+\s+)?(?:surgery|operation|op|wedding|funeral|birthday|graduation|appointment|christening|"
    r"retirement|diagnosis|due date|hen|stag)\b)\w+"
)
# News whose subject is a colleague or a neighbour ("My colleague Priya just got promoted", "our neighbours just had a
# baby") is that person's, unless it comes back to the user ("…and I'm gutted", "…and she asked me to…"); a family's
# or a friend's news is the user's life too ("my dad passed away over Easter", "my oldest friend is moving to New
# Zealand"), and a boss's most often the user's work's. What is so of them stays a fact of the user's circle.
_OTHERS_NEWS = re.compile(
    r"(?i)^\W*(?:my|our)\s+(?:[\w-]+\s+){0,2}?(?:colleagues?|co-?workers?|neighbou?rs?|"
    r"classmates?|flatmates?|roommates?|housemates?|teammates?)\b(?!['’]s)(?![^.!?]*\b(?:me|us|I|we)\b)"
)
# A fact about the user starts from them ("I…", "my…"); "and here's one of the agencies they are looking into" or
# "[shares a photo: …]" is none. An event is often told without ("Tomorrow is the big day, my operation").
_NOT_OF_THEMSELVES = "User says:"
# Unless it starts from them with "we", "our" or a "my" as its subject's: "We have a three-year-old daughter",
# "Both my parents are retired teachers", "English is my second language".
_OF_THEMSELVES = re.compile(
    r"(?i)^\W*(?:(?:both|all|one|two|three|four|most|some|each|none|neither)\s+(?:of\s+)?)?(?:we|we're|our|us|my)\b|"
    r"^\W*[\w-]+(?:\s+[\w-]+)?\s+(?:is|are|was|were)\s+my\b"
)
# Or it holds them further on, and the probe reads it as a fact above every other kind: "Rent is 850 for a room in
# Bristol, and a chunk goes to my parents back in Manila", "Biscuit is about 4, we adopted him from Cats Protection",
# "English comes third for me after Tamil and Hindi". Not "me" alone, which is as often the object of someone else's
# doing ("she's the one who taught me how to cook") or of a request ("talk to me like a coworker would").
_HOLDS_THEM = re.compile(r"(?i)\b(?:I|my|mine|we|our|ours|for me)\b")  # "I'm", "we've" hold "I", "we"
# "As a nurse, I…" or "as a wheelchair user, which stations…?" says what they are before what they ask: that is read
# as its own clause, "I'm a nurse". Not what "as a" names that is no person ("as a result", "as a gift for my mum") or
# what they were once ("as a kid, I…").
_AS_A = re.compile(r"(?i)^\W*as\s+(?P<what>an?\s+[^,()]{3,60}?)\s*(?:\([^)]*\)\s*)?,\s*(?=\S)")
_NO_PERSON = re.compile(
    r"(?i)\b(?:result|matter|reminder|rule|whole|note|bonus|treat|gift|present|favou?r|example|joke|resort|step|"
    r"start|aside|surprise|heads[- ]up|follow[- ]up|side|kid|child|teen(?:ager)?|baby|boy|girl|youngster)\b"
)
# Words to me about this conversation ("the quiz you gave me helped") are relational, not about the user's life.
# A request opens with "can" ("can you…"); "can't stand cilantro" is a taste.
_TO_ME = re.compile(
    rf"{patterns.OF_ME}|^\W*(?:please|pls|just(?! (?:\w+ed|got|been|had|came|went|back|bought|saw|met|found|heard|"
    r"made|took|won|lost|left|broke|sold|ran|flew|drove)\b)|rather than|instead|don'?t|do not|stop|keep|give|tell|"
    r"show|make|let'?s|can(?!['’]t)|could|would)\b"
)
# A request that opens with what it asks me to do and says nothing more ("Suggest a few side dishes for roast
# chicken", "recommend a family car"). One that goes on past a comma or a dash may tell a taste there ("recommend a
# podcast for my commute, nothing true crime, I find it way too grim"), which the note keeps.
_ONLY_ASKS = re.compile(
    r"(?i)^\W*(?:suggest|recommend|list|write|draft|explain|summari[sz]e|translate|compare|find me)\b[^,;:—–]*$"
)


# A fact is often said in passing, as one clause of a long request ("I'm in Australia, so metric and day/month dates
# please, the American formats trip me up"; "been vegetarian for years now, what's a good protein…?"), where the
# sentence's meaning dilutes the clause's: a long sentence's clauses are read too, each on its own, and the sentence
# keeps the best reading of each kind (so one fact is not stored twice). Clauses end at a semicolon, a dash, a
# bracket or an emoji (people end a clause with one as with a full stop: "we got married over the weekend 🙂 how do
# I…"), at a comma before a conjunction or a question word, and before "so my…", "so I…" without its comma; not at a
# colon, which introduces what it names ("Goal for this year: senior engineer"). A clause that asks something is
# left out, as a question is, and one that opens with "so" is what follows from the one before.
_EMOJI = "[\u2600-\u27bf\U0001f300-\U0001faff]+"
_QUESTION_WORDS = (
    "what|how|why|where|when|who|which|whether|any|anything|can|could|would|should|will|am|is|are|do|does|did"
)
_CLAUSE_BREAK = re.compile(
    r"\s*(?:[;\u2014\u2013()]|\s-\s|" + _EMOJI + r")\s*|,\s*(?=(?:so|but|and|now|because|since|though|although|"
    rf"while|{_QUESTION_WORDS})\b)|\s+(?=so (?:my|our|I|we|it|that|this|the)\b)|"
    # a short question after a comma closes a sentence that first says something: "…by June, avalanche or snowball?"
    r",\s+(?=[^,.;!?]{1,40}\?\s*$)|"
    # how they live, said after what they ask: "whats a good app for tracking shifts, I work rotating 12s at…"
    r",\s*(?=I\s+(?:work|live|own|rent|speak)\b)",
    re.IGNORECASE,
)
_CONSEQUENCE = re.compile(r"(?i)so\b")  # a clause that opens with "so" follows from the one before
# A clause the break left opening with a question word asks something, with its question mark or without ("…, will
# they be ok alone for a weekend").
_ASKING = re.compile(rf"(?i)(?:{_QUESTION_WORDS})\b")
# Or asks it after what it is about, its mark left for the clause after: "with the train strike on Thursday how am I
# meant to get into London, are the replacement buses any good?"
_ASKS_WITHIN = re.compile(
    r"(?i)\b(?:how|what|where|when|which|who|why)\s+(?:am|do|does|did|can|could|should|shall|would|will|is|are)\s+"
    r"(?:I|we)\b"
)
_LONG_SENTENCE = 6  # words: "I'm partially sighted, so large fonts please" is seven
# People drop the "I" in a hurry ("been vegetarian for 9 years now", "just got back from a wedding", "hoping to get
# my Japanese to N3", "want to ride up Alpe d'Huez next summer"; not "want to rework the subject line?", which asks
# me), type it without its apostrophe ("Im from Porto") or lead in with a word ("work-wise I do payroll"): the clause
# is still about them, and said with its subject it is told as theirs, not as "User says: …".
_LEAD_IN = re.compile(
    r"(?i)^(?:(?:honestly|btw|also|well|so|oh|ok|okay|anyway|actually|basically|personally|fyi|yeah|and|but|"
    r"[a-z]+-wise),?\s+)+(?=(?:I|my)\b)"
)
_NO_APOSTROPHE = re.compile(r"^(?:Im|im|Ive|ive)\b")
_IMPLIED_I = re.compile(
    r"(?i)^(?:(?:just|finally|recently|also|still|already|actually|literally|officially|only)\s+)?"
    r"(?:(?P<been>been)|(?P<doing>hoping|trying|planning|thinking|looking|going|working|living|learning|saving|"
    r"training|applying)|(?:really\s+)?want(?=\s+to\b)(?![^,;?]*\?)|used to|got|have|had|started|moved|switched|joined|"
    r"left(?![\s-]+(?:ear|eye|hand(?:ed)?|arm|leg|foot|knee|hip|shoulder|"
    r"side|wrist|ankle|lung|kidney|overs?)\b)|quit|bought|finished|began|signed up|took up|broke|"
    r"passed|handed|went|came|flew|drove|lost|won|met|found|sold|booked|adopted|applied|graduated|turned)\b"
)


# How a change is led in: "these days, I…", and "since I switched to X, I…", whose change is the clause itself.
_NOWADAYS = re.compile(r"(?i)^\W*(?:these days|nowadays)\b[\s,]*(?=I\b)")
_SINCE_CHANGE = re.compile(rf"(?i)^\W*since\s+(?P<change>{patterns.CHANGED}.*?)(?=\s*,|\s+I\b|\s*$)")


def with_subject(text: str) -> str:
    """The text with the "I" a hurried writer dropped or typed without its apostrophe (`_IMPLIED_I`), and without its
    lead-in word: "moved to Calgary three weeks ago" is "I moved to Calgary three weeks ago"."""
    text = _LEAD_IN.sub("", text, count=1)
    text = _NO_APOSTROPHE.sub(lambda typed: "I'm" if typed.group(0).lower() == "im" else "I've", text, count=1)
    implied = _IMPLIED_I.match(text)
    if implied is None:
        return text
    subject = "I've " if implied.group("been") else "I'm " if implied.group("doing") else "I "
    return subject + text[0].lower() + text[1:]


def patterns_text(rule: FactRule, sentence: str) -> str:
    """The sentence (`typed_in_full`) as a pattern reads it: an aim with its dropped "I" (`with_subject`: "hoping to
    get my Japanese to N3 by spring", "trying to run a sub-25 5k"). Not news, which meaning keeps in its own words and
    with its time where the pattern's template would not ("got promoted to team lead at Vireo last Friday", not
    "recently got promoted"), nor a move, whose fact would take the place of the news meaning reads ("moved to Porto
    last autumn")."""
    return with_subject(sentence) if rule.type == "goal" else sentence


def typed_in_full(sentence: str) -> str:
    """The sentence with "im" typed for "I'm" written out (`_IM_TYPED`: "so im heading to Lisbon tomorrow"), as the
    patterns read it: once per sentence, before any rule or offset is read of it."""
    return _IM_TYPED.sub("I'm", sentence)


# "im" without its apostrophe, where what follows says it is "I'm" (an article, a place's preposition, a verb in -ing,
# a word of what someone is): not the German "im Zentrum".
_IM_TYPED = re.compile(
    r"\b[Ii]m(?=\s+(?:a|an|the|from|in|at|on|not|so|really|just|still|also|now|allergic|vegan|vegetarian|"
    r"[a-z]+ing)\b)"
)


def _readings(sentence: str) -> list[str]:
    """The sentence (unless it asks something or is too short), and a long one's clauses. The caller has checked
    that no pattern reads the sentence; a clause is checked on its own."""
    whole = [] if _short_or_asks(sentence) or compiled(patterns.SUPPOSED).match(sentence) else [sentence]
    said_as = _AS_A.match(sentence)
    if said_as is not None and not _NO_PERSON.search(said_as.group("what")):
        whole.append(f"I'm {said_as.group('what')}")
    if len(sentence.split()) < _LONG_SENTENCE:
        return whole
    clauses = [part.strip() for part in _CLAUSE_BREAK.split(sentence) if part and part.strip()]
    return whole + [c for c in clauses if not _left_out(c)] if len(clauses) > 1 else whole


class _Reading(NamedTuple):
    """A text read for a memory: a sentence or one of its clauses (`_readings`)."""

    message: int  # its message's index
    text: str
    correction: bool  # its message corrects something said before
    number: int  # its sentence's, among the sentences read
    read: frozenset[str]  # the kinds the patterns read its sentence as


def user_memories(conversation: ConversationInput, layer: SemanticLayer) -> list[ExtractedUserMemory]:
    """Only what the patterns leave alone: a pattern that read a sentence (a name, an employer, a date) is surer than
    a neighbour by meaning, of the kinds it read, and a problem report is the debugging situation's to describe."""
    picked: list[_Reading] = []
    in_our_work: set[int] = set()  # the messages that pick shared work up again
    for message in conversation.messages:
        if message.role is not MessageRole.USER:
            continue
        if continues_our_work(message.content):
            in_our_work.add(message.index)
        correction = any(compiled(cue).search(message.content) for cue in patterns.CORRECTION_CUES)
        for sentence in sentences(message.content):
            if has_crisis_language(sentence):
                continue  # "I've been saving up my pills" is for the crisis signal and the reply, not a fact to keep
            read = _kinds_read_by_patterns(sentence)
            if read is not None:  # else the patterns read all of it
                number = len(picked)
                picked += [_Reading(message.index, text, correction, number, read) for text in _readings(sentence)]
    texts = [pick.text for pick in picked]
    bar = layer.calibration("user")
    best: dict[tuple[int, str], tuple[float, ExtractedUserMemory]] = {}
    matches = layer.classify("user", texts)
    odds_of = layer.probabilities("user", texts)
    probed: list[dict[str, float] | None] = list(odds_of) if odds_of is not None else [None] * len(texts)

    def consider(pick: _Reading, match: Match, label: str | None, odds: dict[str, float] | None) -> None:
        index, text, correction, number, read = pick
        label = _short_fact(text, label, odds)
        said = with_subject(text)
        if label is None or _TO_ME.search(text) or _ONLY_ASKS.match(text) or _SOMEONE_ELSE.search(said):
            return
        kind = USER_KINDS[label]
        if kind in ("goal", "fact") and _WONDERED.search(text):
            return  # "I'm thinking about maybe getting a standing desk" is no aim yet, nor how things are
        if kind == "event" and _OTHERS_NEWS.search(said):
            return
        if kind in _PLAIN_KINDS and index in in_our_work and continues_our_work(text):
            return  # "back to the moving checklist" picks our work up again: it tells no news of them
        if kind in read:
            return  # the patterns read it as that kind already, and surer
        content = about_user(said)
        if not content or (
            kind == "fact" and content.startswith(_NOT_OF_THEMSELVES) and not _of_themselves(said, odds)
        ):
            return
        kept = best.get((number, kind))
        if kept is None or match.score > kept[0]:
            memory = ExtractedUserMemory(
                content=content,
                type=UserMemoryKind(kind),
                importance=_IMPORTANCE[kind],
                confidence=round(min(max(match.score, 0.0), 1.0), 3),
                correction=correction,
                evidence=[index],
            )
            best[(number, kind)] = (match.score, memory)

    for pick, match, odds in zip(picked, matches, probed, strict=True):
        news = pick.message not in in_our_work
        label, change = _evidenced_label(match, pick.text, bar, news=news), _change(match, pick.text)
        if change is not None:
            label, pick = label or "fact", pick._replace(text=change)
        elif odds is not None:
            label = _probed_label(label, odds, news=news)
            # A taste said outright that the probe reads as a taste above every other kind, however far the
            # prototypes sit ("I'm a total sucker for 70s soul"): its words and the probe agree.
            if (
                label is None
                and _read_first(odds) == "preference"
                and _TASTE_SAID.match(pick.text)
                and not _SHOUTED.search(pick.text)
            ):
                label = "preference"
        if label == "event" and _LASTING.search(with_subject(pick.text)):
            label = "fact"
        consider(pick, match, label, odds)
    # A message the probe reads whole as a kind none of its sentences was kept as: that kind, from its sentence the
    # probe puts nearest it (docs/pipeline.md, "The probe over the whole message").
    readings_of: dict[int, list[int]] = {}
    for n, pick in enumerate(picked):
        readings_of.setdefault(pick.message, []).append(n)
    content_of = {m.index: m.content for m in conversation.messages}
    whole = layer.probabilities("user", [content_of[i] for i in readings_of]) if readings_of else None
    for (index, numbers), odds in zip(readings_of.items(), whole, strict=True) if whole is not None else ():
        sure = _read_first(odds)
        if sure not in _PROBED_KINDS or odds[sure] < _MESSAGE_SURE or (sure == "event" and index in in_our_work):
            continue
        sentences_of = {picked[n].number for n in numbers}
        if any(kind == sure and number in sentences_of for number, kind in best) or any(
            sure in picked[n].read for n in numbers
        ):
            continue  # kept as that kind already, by meaning or by the patterns
        nearest = max(numbers, key=lambda n: (probed[n] or {}).get(sure, 0.0))
        consider(picked[nearest], matches[nearest], sure, probed[nearest])
    return [memory for _, memory in best.values()]


def _of_themselves(said: str, odds: dict[str, float] | None) -> bool:
    """Whether a fact the voice cannot restate from the user (`_NOT_OF_THEMSELVES`) is of them still: it starts from
    them (`_OF_THEMSELVES`), or holds them and the probe puts it at a fact above every other kind (`_HOLDS_THEM`)."""
    if _OF_THEMSELVES.search(said):
        return True
    return odds is not None and _read_first(odds) == "fact" and _HOLDS_THEM.search(said) is not None


def _read_first(odds: dict[str, float]) -> str:
    """The kind the probe puts above every other."""
    return max(odds, key=odds.__getitem__)


def _probed_label(label: str | None, odds: dict[str, float], *, news: bool = True) -> str | None:
    """The kind the probe is sure of (`_PROBE_SURE`, docs/pipeline.md, "A probe for the user's kinds") where the
    prototypes and their rules read none or another kind: a taste, an aim or a piece of news said in words no
    prototype is near ("cruises are my idea of hell", "jury duty starts for me next Monday"). Never a fact: the
    broadest kind, which the patterns read surest, and where the probe's reads were wrong as often as right. Where it
    is sure of keeping nothing, the rules' kind stands (vetoing them lost more than it saved on the sets).
    `news`: False in a message that picks shared work up again, whose progress the probe cannot tell from news."""
    sure = _read_first(odds)
    if sure in _PROBED_KINDS and sure != label and odds[sure] >= _PROBE_SURE and (news or sure != "event"):
        return sure
    return label


def _change(match: Match, sentence: str) -> str | None:
    """A sentence that tells a change in the user's life (`patterns.CHANGE_OF_LIFE`: "these days I run in the mornings
    instead of evenings", "since I switched to night shifts I can't train") and means something to keep about them,
    whatever kind it sits nearest, as the change itself told from the user ("I run in the mornings…", "I switched to
    night shifts"); None for any other. Its wording need carry no taste or aim ("instead of" is no "prefer"): what it
    says is how things are now, a fact."""
    if match.nearest.startswith("none") or compiled(patterns.CHANGE_OF_LIFE).search(sentence) is None:
        return None
    since = _SINCE_CHANGE.match(sentence)
    if since is not None:
        return since.group("change")
    return _NOWADAYS.sub("", sentence, count=1)


def _evidenced_label(match: Match, sentence: str, calibration: Calibration, *, news: bool = True) -> str | None:
    """The match's kind when its words carry it; else the next kind that does and still clears its bar by the margin
    over every `none_*` label ("I speak Portuguese" nearest a goal, and a fact). A taste or an aim whose own words
    are there needs its margin over keeping nothing only, not over a fact it is near ("I'd love to be fluent").
    `news`: False in a message that picks shared work up again, where what is told as done is the work's progress."""
    by_label = match.by_label
    best_none = max((v for k, v in by_label.items() if k.startswith("none")), default=0.0)
    nearest = match.nearest

    def clears(label: str) -> bool:
        """Its bar, and the margin over keeping nothing."""
        score = by_label.get(label, 0.0)
        return score >= calibration.bar(label) and score - best_none >= calibration.margin

    def comes_near(label: str) -> bool:
        """Within the margin of its bar, and above keeping nothing: what a kind said in its own words needs."""
        return by_label.get(label, 0.0) >= max(calibration.bar(label) - calibration.margin, best_none)

    # An aim said outright ("my plan is to visit every national park before I turn 50") is an aim, however near a
    # piece of news or a fact its topic puts it; its words say it is something to keep, so it needs its bar only,
    # not the margin over keeping nothing.
    if (
        match.label in _PLAIN_KINDS | {None}
        and _AIM_STATED.search(sentence)
        and by_label.get("goal", 0.0) >= calibration.bar("goal")
    ):
        return "goal"
    # A taste said outright is a taste however near a fact its topic puts it, and said in its own words it needs to
    # come within the margin of its bar, as news told with when does below.
    if match.label in ("fact", None) and _TASTE_SAID.match(sentence) and comes_near("preference"):
        return "preference"
    if match.label is None:
        # A fact said outright, or a state that has lasted, nearest a fact or news, on the same terms.
        said = with_subject(sentence)
        if nearest in _PLAIN_KINDS and (_FACT_SAID.match(said) or _LASTING.search(said)) and comes_near("fact"):
            return "fact"
        # A routine or what they are good or bad at, on the same terms, whatever kind it sits nearest.
        if (_ROUTINE.match(said) or _SELF_ASSESSED.match(said)) and comes_near("fact"):
            return "fact"
        # No kind won by the margin. News told as done and said with when ("we lost the match on Sunday, 3-1", "just
        # got back from two weeks away yesterday") sits nearest an event, under its bar or its margin over keeping
        # nothing: its words say that it happened to them, and when, so it needs to come within the margin of the bar.
        if (
            news
            and nearest == "event"
            and _DONE.search(with_subject(sentence))
            and says_when(sentence)
            and match.score >= calibration.bar("event") - calibration.margin
        ):
            return "event"
        # Else one whose own words are there may take it, the nearest first, then the runner-up ("Jazz is my thing"
        # sits as near a fact as a taste, and says it is a taste), then a taste or an aim as near as the margin ("I'm
        # not into sweet breakfasts, always savoury for me": a fact, an aim, then the taste it says).
        near = [label for label in _LOOSE_KINDS if by_label.get(label, 0.0) >= match.score - calibration.margin]
        for label in (nearest, match.runner_up, *sorted(near, key=by_label.__getitem__, reverse=True)):
            words = _KIND_EVIDENCE.get(label)
            if words is not None and words.search(sentence) is not None and clears(label):
                return label
        # A near tie between a fact and a taste or an aim without its own words, whichever is nearer, is the fact:
        # "I speak Portuguese and a bit of German" sits near "I want to learn a language", "I'm on blood thinners"
        # near an aim of health. Not an event: one near a taste by as little is most often a feeling of the moment
        # ("Love how my landlord 'fixed'…").
        tie = {nearest, match.runner_up}
        loose = next(iter(tie - {"fact"}))
        if "fact" in tie and loose in _LOOSE_KINDS and not _KIND_EVIDENCE[loose].search(sentence):
            return "fact" if clears("fact") else None
        # A near tie between an aim and an event, told as done with no word of an aim ("finished my first marathon
        # last weekend" sits nearest a goal by its topic): the event it tells, on the same terms.
        if tie == {"goal", "event"} and _DONE.search(sentence) and not _KIND_EVIDENCE["goal"].search(sentence):
            return "event" if clears("event") else None
        # A fact and an event are said without a word of their own: a near tie between the two is a doubt about
        # the kind, not about keeping it. Said with when it happens, the event takes it ("My best friend is moving to
        # Australia next month"); else the nearest ("I left the agency for an in-house job"), each when it clears
        # its bar and keeps the margin over keeping nothing.
        if tie == _PLAIN_KINDS and says_when(sentence):
            return "event" if clears("event") else None
        return nearest if tie <= _PLAIN_KINDS and clears(nearest) else None
    needed = _KIND_EVIDENCE.get(match.label)
    if needed is None or needed.search(sentence) or match.score >= _SURE:
        return match.label
    # Nearest an aim by its topic, with no word of one, and said with when ("I'm running the Chicago half marathon
    # on Sunday"): the news it tells, when the event clears its bar (the aim kept its margin over keeping nothing).
    if match.label == "goal" and says_when(sentence) and by_label.get("event", 0.0) >= calibration.bar("event"):
        return "event"
    for label, _ in sorted(by_label.items(), key=lambda item: item[1], reverse=True):
        if label.startswith("none") or label == match.label:
            continue
        evidence = _KIND_EVIDENCE.get(label)
        if not clears(label):
            return None
        if evidence is None or evidence.search(sentence):
            return label
    return None


def vetted(
    conversation: ConversationInput, found: list[ExtractedUserMemory], layer: SemanticLayer
) -> list[ExtractedUserMemory]:
    """The patterns' memories without the loose ones whose sentence means nothing to keep about the user."""
    by_index = {m.index: m for m in conversation.messages}
    checked: list[tuple[ExtractedUserMemory, str]] = []
    for memory in found:
        if memory.type.value in _LOOSE_KINDS and memory.evidence and memory.evidence[0] in by_index:
            source = _source(memory.content, sentences(by_index[memory.evidence[0]].content))
            if source is not None:
                checked.append((memory, source))
    # Read as the patterns read it, "im" written out: "im learning to code" sits nearer small talk than the aim it is.
    matches = layer.classify("user", [typed_in_full(source) for _, source in checked])
    dropped = {
        id(memory) for (memory, _), match in zip(checked, matches, strict=True) if match.nearest.startswith("none")
    }
    return [memory for memory in found if id(memory) not in dropped]


def _source(content: str, candidates: list[str]) -> str | None:
    """The sentence a memory was read from: the one sharing most words with it."""
    words = set(content.lower().split())
    scored = [(len(words & set(s.lower().split())), s) for s in candidates]
    best = max(scored, default=(0, ""))
    return best[1] if best[0] else None


def _left_out(clause: str) -> bool:
    """Too short to mean a memory, a question (with its mark, opening with a question word, or asking "how am I…",
    "what should we…" after what it is about), the patterns' to
    read, what follows from the clause before ("…, so we mostly sign at home"), which says nothing without it, or a
    condition ("if I were to get a dog someday, …"), which says what is not so."""
    return (
        _short_or_asks(clause)
        or _read_by_patterns(clause)
        or _CONSEQUENCE.match(clause) is not None
        or _ASKING.match(clause) is not None
        or _ASKS_WITHIN.search(clause) is not None
        or compiled(patterns.SUPPOSED).match(clause) is not None
    )


def _short_or_asks(text: str) -> bool:
    stripped = text.strip()
    if stripped.endswith("?"):
        return True
    return len(stripped.split()) < _MIN_WORDS and not _SELF_DESCRIBED.match(stripped)


def _short_fact(text: str, label: str | None, odds: dict[str, float] | None) -> str | None:
    """The kind a short self-description (`_SELF_DESCRIBED`) is kept as: a fact, where the rules read one and the
    probe is sure of it; else nothing. Any other text keeps its `label`."""
    if len(text.split()) >= _MIN_WORDS:
        return label
    sure = odds is not None and odds.get("fact", 0.0) >= _PROBE_SURE
    return "fact" if label == "fact" and sure else None


def _read_by_patterns(text: str) -> bool:
    return _kinds_read_by_patterns(text) is None


def _kinds_read_by_patterns(text: str) -> frozenset[str] | None:
    """The kinds the patterns read the sentence as in passing (`FactRule.whole`: a person named), which meaning
    leaves to them; None where meaning reads nothing of it: a pattern read all it says (an employer, a move), or it
    reports a problem, the debugging situation's to describe."""
    stripped = typed_in_full(text.strip())
    if any(compiled(trigger).search(stripped) for s in patterns.SITUATIONS for trigger in s.triggers):
        return None
    read = [rule for rule in patterns.USER_FACTS if _reads(rule, patterns_text(rule, stripped))]
    if any(rule.whole for rule in read):
        return None
    return frozenset(rule.type for rule in read)


def _reads(rule: FactRule, text: str) -> bool:
    """Whether the rule reads a memory in the text: a match whose values it does not reject ("I want to know how many
    days it takes" is no aim, so the rule leaves the sentence, and the ambition said before it, to meaning)."""
    return any(kept_values(rule, match) is not None for match in compiled(rule.pattern).finditer(text))
