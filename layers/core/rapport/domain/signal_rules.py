"""The rule data of signal detection: emotion cues, crisis language, intent patterns, shouting thresholds.

Data, not code: `rapport.domain.signals` applies these tables and nothing else decides. Patterns are regular
expressions matched against lower-cased text with straight apostrophes; each is one cue, kept short and general
(a word or a common phrase), never a whole sentence from a test.
"""

from __future__ import annotations

from rapport.domain.people_rules import PRONOUNS

EMOTION_CUES: dict[str, tuple[str, ...]] = {
    "frustration": (
        r"frustrat\w*",
        r"annoy\w*",
        r"irritat\w*",
        r"ugh+",
        r"argh+",
        r"fed up",
        r"(sick|tired) of",
        r"waste of (my )?time",
        r"wast(e|es|ed|ing) my time",
        r"for (god's|gods|heaven's|christ's|fuck's|pete's) sake",
        r"(drives|driving|drove) me (up the wall|crazy|nuts|mad|insane|round the bend)",
        r"(i'm|i am|im) (so|just|officially) done",
        r"(is|are|it's|its) killing me",
        r"i (already )?told you (twice|already|before|\w+ times)",
        r"(second|third|fourth|fifth|\d+(st|nd|rd|th)) time (you|you've|i've|i have)",
        # my slip, told plainly: "you've mixed up Austria and Australia again", "the same broken SQL as before",
        # "are you even reading my messages", "shame it doesn't compile"
        r"you('ve| have)? (mixed up|muddled up|confused|messed up) [^.!?]{0,40}\b(again|wrong)\b",
        r"you('ve| have)? (got|gotten) [^.!?]{0,40}\bwrong\b",
        r"same (broken|wrong|buggy|bad|useless|failing) [\w ]{1,20} as (before|last time|earlier)",
        r"(are|were) you (even|actually) (reading|listening|looking)",
        r"shame (it|that|this) (doesn't|does not|didn't|won't|can't) (compile|work|run|build|load)",
        # An answer that missed what was asked: "way too long", "I asked for a recipe", "I asked yes or no".
        r"(way|far|much|so) too (long|short|wordy|verbose|vague|complicated|much)",
        r"i (only |just |literally )?asked (for|a|yes|you)",
        # exasperation in so many words: "thanks for nothing", "can you for once just…", "context I didn't ask for",
        # "how is anyone supposed to get seen"
        r"thanks for nothing",
        r"(can|could|would|will) you (just )?for once|for once,? (just )?(give|tell|answer|do|listen|read|say)",
        r"(i )?(didn't|did not|never) ask(ed)? for",
        r"how (is|are) (anyone|anybody|a person|people|one) (supposed|meant|expected) to",
    ),
    "anger": (
        r"angry",
        r"furious",
        r"pissed",
        r"livid",
        r"outrag\w*",
        r"mad at",
        r"hate(?! to\b)",  # "I hate to bother you" is politeness
        r"ridiculous",
        r"unacceptable",
        r"useless",
        # "I feel so stupid" is shame, not anger at anyone
        r"(?<!feel )(?<!feel so )(?<!i'm )(?<!i'm so )(?<!i am )(?<!i am so )(?<!was )(?<!was so )stupid",
        r"idiot\w*",
        r"wtf",
        r"what the (hell|fuck)",
        r"damn\w*",
        r"f+u+c+k\w*",
        r"screw (this|you|it)",
        r"shut up",
    ),
    "anxiety": (
        r"anxious\w*",
        r"anxiety",
        r"worr(y|ied|ies|ying|isome)",
        r"nervous\w*",
        r"scar(ed|y)",
        r"afraid",
        r"fear(s|ful|ing)?",
        r"terrif(ied|ying)",
        r"frighten\w*",
        r"panic\w*",
        r"stress(ed|ful)?",
        r"overwhelm\w*",
        r"freak(ing|ed)? out",
        r"dread\w*",
        r"on edge",
        r"uneasy",
        r"apprehensive",
        r"jitter(s|y)",
        r"(can't|cannot|couldn't|could not) (sleep|stop thinking)",
        r"sleepless",
        r"(haven't|have not|hadn't|hasn't|not) (slept|been sleeping)",
        r"imagin\w* (it|things|everything|the worst) (going|gone|go) wrong",
        r"(not|barely|hardly) sleeping",
        r"(lie|lying|lay|laying|was|am|been) awake",
        r"(up|awake) all night",
        # the worst feared, or the body's fear: "is this colic or something worse?", "my hands are already shaking"
        r"(or|is it|could it be) something (worse|serious|more serious)",
        r"(hands|voice|legs|knees) (are |is |keep |)(already |still )?(shaking|trembling)",
        r"freez(e|ing) up",
    ),
    "sadness": (
        r"sad(ly|ness)?",
        r"unhappy",
        r"depress\w*",
        r"(feel|feeling|felt) (so )?down",
        r"lonely",
        r"(feel|feeling|felt) (so )?(alone|empty|lost)",
        r"heartbr\w*",
        r"miss (him|her|them|you|my)",
        r"cry(ing)?",
        r"cried",
        r"griev\w*",
        r"grief",
        r"passed away",
        r"hopeless",
        r"miserable",
    ),
    "joy": (
        r"happy",
        r"glad",
        r"excit\w*",
        r"thrilled",
        r"delighted",
        r"awesome",
        r"amazing",
        r"wonderful",
        r"fantastic",
        r"great news",
        r"love (it|this|that)",
        r"yay+",
        r"can't wait",
        r"proud",
        # Good news the lexicon has no word for: a test passed, a child born, a job got, a long piece of work done.
        r"passed (my|the|our) (\w+ )?(test|exam|exams|interview|audit|review)",
        r"(was|were) born",
        r"got (the|a|my) (job|offer|promotion|place|visa|keys)",
        r"got (promoted|engaged|married|hired|accepted|in)",
        r"we did it",
        r"nailed it",
        # A problem that is gone is relief: what the person came with is solved.
        r"(is|are) (all )?gone",
        r"(works|working) (now|again)",
        r"that (was|did) it",
        r"(fixed|solved) it",
        r"problem solved",
    ),
    "gratitude": (
        r"thanks?(?! for nothing)",
        r"thank you",
        r"thx",
        r"appreciate\w*",
        r"grateful",
        # help praised: "that was super helpful", "you're a lifesaver"
        r"((that|this|it)('s| was| is| has been)|you('re|'ve been| are| have been)) "
        r"(so |super |really |very |incredibly |extremely |genuinely )?(helpful|useful|a (huge )?help|a life ?saver)",
    ),
}

# Repetition and failure are frustration only when nothing in the sentence says fear or sorrow: "it keeps failing
# again" is a complaint, "I keep waking up at 3am worrying about the operation" is worry that will not let go. These
# cues count for frustration in a sentence with no anxiety or sadness cue.
FRUSTRATION_UNLESS_WORRIED: tuple[str, ...] = (
    r"keeps \w+ing",
    r"(i|we|it|they|he|she|you) keep \w+ing",
    r"every single time",
    r"every time (i|you)\b",
    r"every (single )?(answer|reply|response)",
    # an imperative to stop ("stop apologising", "stop with the bullet points"), not "I can't stop thinking"
    r"(?<!can't )(?<!cannot )(?<!couldn't )(?<!won't )stop (\w+ing|with)",
    r"over and over",
    r"yet again",
    r"(still|again) (not|doesn't|isn't|won't|can't|didn't)\b",
    r"(not|doesn't|isn't|won't) work(ing)?",
    r"give up",
    r"(broken|broke|crash\w*|fail\w*) again",
)

# How an emotion colours the mood when the lexicon score is silent ("my boss keeps moving deadlines" has no
# lexicon word, yet it is a complaint).
EMOTION_VALENCE: dict[str, float] = {
    "frustration": -0.3,
    "anger": -0.5,
    "anxiety": -0.3,
    "sadness": -0.4,
    "joy": 0.4,
    "gratitude": 0.3,
}

# Below this absolute lexicon score a message counts as neutral, and the emotion valence above decides.
NEUTRAL_POLARITY = 0.05
# A question or a request in which no emotion is read carries no mood below this lexicon score: the words it likes
# there are politeness and the asking itself ("what's the best way to store basil?", "could you help me plan…"), not
# how the person feels. Chosen on the signal sets' odd lines (0.5: 246, 0.8: 250, 0.9: 249 of 280 sentiments right).
ASKED_POLARITY = 0.8

# An interaction's mood is where the person ended up: each user message moves it this share of the way toward its
# own mood (an exponential moving average), so a problem reported and then reported solved reads as good news, not
# as the average of the two. A reading of one interaction's messages, not the relational state's `mood_factor`: the
# brief steps sentiment once per interaction by that factor, toward the mood read here.
MOOD_RECENCY = 0.7

# Crisis language is never good news, whatever the lexicon makes of its words ("everyone would be better off
# without me" scores positive): its mood is at most this.
CRISIS_MOOD_CEILING = -0.6

# A cue preceded (within this many words) by one of these is negated: "not happy" is not joy.
NEGATORS = ("not", "no", "never", "don't", "dont", "didn't", "isn't", "wasn't", "aren't", "ain't", "hardly")
NEGATION_WINDOW = 3

# Self-harm and suicide language. Deliberately broad: a false alarm costs a careful reply, a miss costs more.
CRISIS_PATTERNS: tuple[str, ...] = (
    r"\b(kill(ing)?|hurt(ing)?|harm(ing)?|cut(ting)?) myself\b",
    r"\bsuicid\w*",
    r"\bend(ing)? (my|it) (life|all)\b",
    r"\bend it all\b",
    r"\b(want|wish|need) (it all|everything|all of it|it) to (end|be over)\b",
    r"\btake my (own )?life\b",
    r"\b(want|wanna|going|ready) to die\b",
    r"\bwish i (was|were) dead\b",
    r"\bwant to be dead\b",
    r"\bdon't want to (live|be alive|exist|wake up)\b",
    r"\bno (reason|point) (to|in) (live|living|go on|going on)\b",
    r"\bbetter off (dead|without me)\b",
    r"\bself[- ]?harm\w*",
    r"\boverdos\w*",
    r"\b(can't|cannot) go on (living|like this|anymore|any more)\b",
    r"\bnothing (left )?to live for\b",
    r"\b(life|living) (isn't|is not|doesn't feel|does not feel|no longer feels) worth (living|it)\b",
    r"\bnot worth living\b",
    r"\b(don't|do not) want to be (here|around|alive) (anymore|any more)\b",
    r"\bno reason to (stay|keep) (alive|going|living)\b",
    r"\btired of (living|life|being alive|existing)\b",
    r"\b(don't|do not|can't|cannot) see the point (anymore|any more|(of|in) (living|going on|anything))\b",
    r"\b(no ?one|nobody) would (even )?(notice|care|miss me)\b",
    r"\b(saving|saved|stockpil\w*|hoard\w*) (up )?(my |the )?(pills|meds|tablets)\b",
    r"\b(pills|meds|tablets|pill bottle)( are| is)? (in front of|next to|beside) me\b",
    r"\bi('ve)? (cut|burned|burnt) (myself )?again\b",
    r"\b(standing|sitting) on (the|a) (bridge|ledge|roof|edge)\b",
)

# Shouting: most letters are capitals (in a message long enough for that to mean something), or "!" repeated.
SHOUTING_MIN_LETTERS = 8
SHOUTING_CAPITALS_SHARE = 0.7
SHOUTING_REPEATED_EXCLAMATION = r"!\s*!"

# Intent: the first rule that matches wins, in this order. Emotional support is also chosen when a sad or anxious
# message speaks about the user themself (see EMOTIONAL_SUPPORT_EMOTIONS).
INTENT_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "emotional_support",
        (
            r"\b(need|want) (to talk|someone to talk|to vent)\b",
            r"\bvent(ing)?\b",
            r"\b(having|had) (a )?(hard|rough|tough|terrible|awful) (time|day|week)\b",
            r"\bi (don't|do not) know what to do\b",
            r"\bi feel (so )?(alone|lost|empty|worthless|hopeless)\b",
            r"\bcan't (cope|handle (it|this))\b",
        ),
    ),
    (
        "request",
        (
            r"^(please|pls|kindly)\b",
            r"^(can|could|would|will) you\b",
            r"\b(can|could|would) you (please )?(help|write|show|explain|fix|give|tell|make|check|find)\b",
            r"^(help me|i need you to|i want you to|i'd like you to|let's|lets)\b",
            r"^(write|show|explain|fix|give|tell|make|create|draft|summarize|summarise|list|find|check|send|add|"
            r"remind|translate|generate|review|compare|suggest|recommend|book|schedule|plan|rewrite|describe)\b",
        ),
    ),
    (
        "feedback",
        (
            r"\b(that|this|it) (worked|helped|fixed it|did the trick|makes sense)\b",
            r"\b(that|this|it) (didn't|doesn't|did not|does not) (work|help)\b",
            r"\b(you were|you're) (right|wrong)\b",
            r"\bnot what i (asked|meant|wanted)\b",
            r"^(perfect|great job|well done|nice work|exactly)\b",
        ),
    ),
    (
        "small_talk",
        (
            r"^(hi|hello|hey|hiya|yo|good (morning|afternoon|evening|night)|morning)\b[\s!.,?]*(there)?[\s!.,?]*$",
            r"^(how are you|how's it going|how are things|what's up|sup)\b",
            r"^(thanks|thank you|thx|cheers|bye|goodbye|see you|talk (to you )?later|have a (nice|good) \w+)"
            r"[\s!.,]*$",
            r"^(nice to (meet|see|talk to) you)\b",
        ),
    ),
    (
        "question",
        (
            r"\?",
            r"^(what|why|how|when|where|who|whom|whose|which|is|are|am|do|does|did|can|could|should|would|"
            r"will|have|has|was|were)\b",
        ),
    ),
)
# Who a grievance is about: a sentence that speaks to the assistant, and words for another person: the pronouns
# the people rules refer back by, and "whoever" (beside the roles and names they find).
SECOND_PERSON = r"\b(you|your|you're|youre|you've|you'd|yourself|u|ur)\b"
# What the person told the assistant, named without "you": "I said plain paragraphs", "read what I wrote", "that's not
# what I asked for". "I said" alone only where no one else is in the sentence: "I said no to my landlord and he keeps
# calling" tells of the landlord, as "I asked for a refund and the shop ignored me" tells of the shop.
TOLD_THE_ASSISTANT = (
    r"\bwhat i (?:said|asked(?: for)?|wrote|write|meant|typed|told)\b|"
    r"\bi (?:already |just |literally |clearly )?said\b(?! (?:no |yes )?to\b)"
    r"(?![^.!?]*\b(?:he|she|they|him|her|them|his|their)\b)"
)
THIRD_PERSON = rf"\b({'|'.join((*PRONOUNS, 'whoever'))})\b"
# A grievance whose sentence opens on a thing the person calls theirs or points at ("this bug is killing me", "our
# checkout service keeps timing out", "my code keeps crashing") is about that thing; one that points at what the
# assistant made or is ("this answer keeps missing the point") is the assistant's, and so is one on "the …" ("the
# build keeps failing", which may be the fix just tried) or with no subject.
THE_ASSISTANT = ("assistant", "bot", "ai", "chat(?:bot)?", "conversation")
ASSISTANT_WORK = (
    *THE_ASSISTANT,
    "answers?",
    "repl(?:y|ies)",
    "responses?",
    "suggestions?",
    "advice",
    "explanations?",
    "summar(?:y|ies)",
    "output",
    "recommendations?",
    "messages?",
    "drafts?",
    "code",
    "fix(?:es)?",
    "solutions?",
    "scripts?",
    "snippets?",
    "examples?",
    "lists?",
    "links?",
    "versions?",
    "translations?",
    "text",
    "format(?:ting)?",
    "tone",
    "thing",
)
# A sigh or an oath before the subject leaves it the subject: "ugh my train is late again", "omg our wifi…".
INTERJECTIONS = r"(?:u+gh+|a+r+g+h+|u+r+g+h+|sigh|omg|ffs|god|jeez|man|honestly|seriously|welp|great|wow|lol)"
THING_SUBJECT = (
    rf"^(?:{INTERJECTIONS}[\s,.!]+)*"
    rf"(?:(?:my|our)\s+(?!(?:{'|'.join(THE_ASSISTANT)})\b)"
    rf"|(?:this|these|their)\s+(?!(?:{'|'.join(ASSISTANT_WORK)})\b))([a-z][a-z'-]*)"
)
# The word after "this" is its verb, not a thing, when it is a stopword ("this is useless") or one of these.
NOT_A_THING = frozenset(
    {"keeps", "kept", "sucks", "stinks", "happens", "happened", "again", "still", "always", "never", "time"}
)
EMOTIONAL_SUPPORT_EMOTIONS = frozenset({"sadness", "anxiety"})
FIRST_PERSON = r"\b(i|i'm|im|i've|i'd|me|my|myself)\b"
DEFAULT_INTENT = "statement"
