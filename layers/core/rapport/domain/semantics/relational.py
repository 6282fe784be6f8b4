"""Relational memories by meaning: the user's sentences matched to lessons, written in the assistant's voice with
the conversation's own specifics (the project, what is done and pending, the cause found)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import NamedTuple

from rapport.domain.models import MessageRole
from rapport.domain.prompts.conversation import ConversationInput, PromptMessage
from rapport.domain.prompts.extract_relational import ExtractedRelationalMemory, RelationalMemoryKind
from rapport.domain.rules import patterns
from rapport.domain.rules.wording import (
    compiled,
    for_this_once,
    from_assistant,
    sentence_case,
    sentences,
    squeeze,
    tidy,
)
from rapport.domain.semantics.matcher import Match, SemanticLayer
from rapport.domain.semantics.prototypes import RELATIONAL_TYPES
from rapport.domain.semantics.voice import MAX_QUOTED_CHARS, assistant_voice, clause, clipped, lower_first
from rapport.domain.text import term_set

# How each lesson is introduced: the note is the assistant's, the user's words after it are put in its voice.
_LEAD_INS = {
    "format": "How to answer this user: {said}",
    "suggestions": "How to suggest things to this user: {said}",
    "working_style": "How this user likes to work: {said}",
    "approach_worked": "What worked with this user: {said}",
    "habit": "A habit of ours: {said}",
    "shared_research": "Research we did together: {said}",
    "our_outcome": "What came of our work together: {said}",
}
_IMPORTANCE = {
    "communication_preference": 0.7,
    "working_style": 0.6,
    "approach_effectiveness": 0.7,
    "interaction_pattern": 0.5,
    "shared_context": 0.6,
    "collaboration_outcome": 0.8,
}
# Picking a shared piece of work up again is said in few ways, and the name is what matters: a pattern is surer.
_CONTINUED = re.compile(
    # "Back to the moving checklist", opening the message: "back to work after the holidays" names no work of ours.
    r"(?i:^\W*(?:(?:ok(?:ay)?|right|so|alright|anyway)[,\s]+)?back to(?=\s+(?:the|our)\b)|"
    # Asked of us both: "can we continue the fantasy story from last time?", "let's go on with the scraper".
    r"\b(?:let['’]?s|can we|could we|shall we)\s+(?:continue(?: with| on)?|carry on with|go on with|get going on)|"
    r"\b(?:pick(?:ing)? up where we (?:stopped|left off|were) (?:on|with)|further to our (?:last|previous) "
    r"(?:conversation|chat|session|talk) (?:about|on)|"
    r"picking up|back on|get back to|getting back to|continuing(?: with| on)?|continue with|"
    r"resuming(?: work on)?|still working on|where were we with|follow(?:ing)? up on|circling back to|"
    # Work named as ours again: "remember the flights we compared", "about the speech we started", "re the plan we…"
    r"(?:remember|recall|about|regarding|re:?)(?=\s+(?:the|our|that)\s+[^.,:;!?—–\n]{0,40}\bwe\s+(?:\w+\s+)?"
    r"(?:compared|discussed|started|planned|looked at|researched|made|wrote|built|designed|drafted|did|went through|"
    r"put together|picked|chose|worked on|talked about|sketched|outlined|chased|fixed|debugged|edited|set up)\b)|"
    # or by what we made of it: "remember our shortlist of beaches in Crete?"
    r"(?:remember|recall)(?=\s+our\s+(?:[\w'’-]+\s+)?(?:shortlist|list|plan|draft|outline|itinerary|spreadsheet|"
    r"budget|notes|comparison|research|schedule|checklist|timeline|brainstorm)\b)))\s+"
    r"(?P<name>(?:the |my |our )?[^.,:;!?—–\n]{1,59}\w)(?!\w)"  # up to 60 characters, ending with a word
)
# What we said last time, named by that alone: "like we discussed yesterday, I'm going with Postgres"; or where our
# work stopped: "we left off at the part about indexes", "last time we got as far as chapter two".
_LAST_TIME = re.compile(
    r"(?i)\b(?:(?:like|as) we (?:discussed|agreed|planned|decided)|we left off|we got as far as)\b|"
    # or recalled as ours: "remember we decided to use Postgres for the project", "recall that we agreed on…"
    r"\b(?:remember|recall)(?: that| when| how)? we (?:decided|agreed|said|chose|picked|went with|settled on)\b|"
    # Where our work stands: "ok so where we are: …", "recap: we picked the layout", "what's left from our list",
    # "ready to carry on with the plan?"
    r"\bwhere we are\s*:|\brecap\s*:|\b(?:what['’]?s|what is) (?:still )?left (?:from|on|of) our\b|"
    r"\bstill on our (?:list|plate)\b|\b(?:ready to|can we|shall we|could we) carry on\b|"
    # What we worked on, come back: "the bug we chased on Monday is back, same stack trace"
    r"\b(?:the|that|our)\s+(?:[\w'’-]+\s+){1,3}?we\s+(?:chased|fixed|debugged|solved|found|tracked down|worked on)\b"
    r"[^.!?]*?\b(?:is|are|it's|it’s)\s+back\b|"
    # or named as work going on between us: "the expense tracker app we've been building"
    r"\b(?:the|that|our)\s+(?:[\w'’-]+\s+){1,3}?we(?:['’]ve| have)\s+been\s+(?:building|writing|working on|"
    r"making|planning|drafting|putting together|designing)\b"
)
_THANKS = re.compile(
    r"(?i)^\W*(?:thanks?|thank you|thx|cheers|great|perfect|awesome|amazing|wow|nice|good call|you're a lifesaver|"
    r"you’re a lifesaver|yes|yep|agreed|finally something new)\b[\w\s,!.']{0,30}$"
)
_MIN_WORDS = 2
# Work of ours named as ours: a thing of the kinds an assistant makes with someone (code, a document, a plan), then
# "we" and how it was made: "the caching layer we designed", "that email we wrote", "the itinerary we put together"
# (not "our API", which is the user's company's). MiniLM reads such a sentence by its topic first (page loads, a
# landlord), so a result told of it is read by these words where its meaning is nearer the topic than any outcome
# (`_told_outcome`). A "we" of the user's own life (the house we built, the cake we made, the plan we made with my
# brother) names nothing we made, or someone else.
_ARTIFACT = (
    r"(?:code|script|query|queries|sql|regex|function|fix|patch|tests?|config\w*|dockerfile|pipeline|schema|migration|job|"
    # practice of ours: "all those practice rounds we did paid off"
    r"(?:practice|mock|revision) (?:rounds?|sessions?|tests?|exams?|interviews?|questions)|"
    r"rehearsals?|role-?plays?|run-throughs?|"
    r"import(?:er)?|parser|macro|automation|integration|module|component|feature|plugin|"
    r"index|cache|caching layer|layer|endpoints?|api|design|architecture|refactor\w*|prototype|tool|bot|app|"
    r"plan|schedule|itinerary|timeline|roadmap|budget|spreadsheet|formula|model|strategy|checklist|template|"
    r"email|e-mail|letter|cover letter|message|reply|cv|resume|résumé|essay|speech|talk|presentation|slides|deck|"
    r"proposal|report|doc|document|docs|outline|draft|post|article|chapter|pitch|bio|summary|notes|guide|"
    r"workout|routine|meal plan|diet|study plan|list|prompt|setup|solution|approach|answer|"
    r"page|pages|site|website|descriptions?|listings?|profile|menu|newsletter|captions?|wording|book|story|cards?|"
    r"system|process|workflow|sheet|cleanup|clean-up|restructur\w*|rewrite|appeal|complaint|claim|application|"
    r"tracker|chart|estimate|quote|poem|translation|questions|shortlist|comparison|calendar|playlist|rota|roster|"
    r"layout|tweaks?|changes|adjustments|recipe|workaround|sequence|lesson|setlist|agenda|timetable|invite|toast|"
    r"prices|pricing|price list|rates|offer|discount|bid|options|copy)"
)
_OUR_WORK = re.compile(
    r"(?i)\b(?:(?:the|that|this|those|these|our|(?:last|yesterday|this)\s*\w*['’]s)\s+(?:[\w'’-]+\s+){0,3}?"
    + _ARTIFACT
    # what it was for, between the work and its makers: "the complaint letter to the airline we wrote"
    + r"\s+(?:(?:to|for|about|on|from|of|with)\s+(?:\S+\s+){1,3}?)?(?:that\s+)?"
    # or going on: "the portfolio site copy we're writing"
    r"(?:we(?:['’]re| are)\s+(?:still\s+)?(?:writing|building|drafting|planning|making|designing|putting together|"
    r"working on|working through|doing)|"
    r"(?:we|you and I)\s+(?:[a-z]+\s+)?(?:designed|built|wrote|drafted|planned|put together|came up with|set up|"
    r"prepared|worked out|figured out|rewrote|reworked|polished|trimmed|tuned|optimi[sz]ed|refactored|sketched|"
    r"outlined|edited|debugged|fixed|made|added|picked|chose|created|did|worked on|drew up|laid out|mapped out|"
    r"prepped|composed|translated|shortlisted|compared|sorted|organi[sz]ed|landed on|settled on|hashed out|"
    r"(?:were|was) (?:\w+ing))))\b"
)
# Work of ours named by when it was made: "the scraper script from last time", "the keto meal plan from two weeks
# ago", "the tiling estimate from Sunday".
_OUR_WORK_FROM = re.compile(
    r"(?i)\b(?:the|that|our)\s+(?:[\w'’-]+\s+){0,2}?"
    + _ARTIFACT
    + r"\s+from\s+(?:last (?:time|week|month|night)|yesterday|the other day|earlier|(?:a|one|two|three|a few|\d+) "
    r"(?:days?|weeks?|months?) ago|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b"
)
# A decision we took, built on now: "since we went with the cheaper van, …", "the three achievements we picked for the
# cover letter", "that point we left hanging", "went with option B from our printer comparison", "keep the sentences
# we settled on".
_OUR_DECISION = re.compile(
    r"(?i)\b(?:since|now that|as|so) we (?:went with|settled on|agreed on|picked|chose|decided on)\b|"
    r"\b(?:the|that|those)\s+(?:[\w'’\"-]+\s+){1,4}?we\s+(?:picked|chose|settled on|agreed on|went with|"
    r"compared|left hanging|shortlisted|ranked|scored|ruled out)\b|"
    r"\bfrom our (?:[\w-]+ )?(?:comparison|shortlist|research|list|ranking)\b|\bour draft\b"
)
# What I made for them, used now: "the SQL you gave me for the churn report", "that spreadsheet with the three tabs
# you laid out for me" (not credited: "the checklist you gave me really helped" is a way of helping).
_YOU_MADE_FOR_ME = re.compile(
    r"(?i)\b(?:the|that|your)\s+(?:[\w'’-]+\s+){0,6}?"
    + _ARTIFACT
    + r"\b[^.!?]{0,40}?\byou (?:also )?(?:gave me|laid out|sketched|wrote|drew up|made|put together|set up|built|"
    r"drafted)\b"
)
# What I made, built on now: asked about or asked to change ("…doesn't work — can you rework the sequence?"), not
# only told of ("the schedule you made kept it from getting chaotic", which is what came of it).
_BUILT_ON = re.compile(
    r"\?|(?i:\b(?:can|could|would) you\b|\bhelp me\b|\b(?:rework|redo|update|change|fix|adjust)\b|"
    # or said to need more: "it also needs to skip node_modules folders" (not "I need a pattern for postcodes now")
    r"\b(?:it|this|that|they) (?:also |still |now )?needs? (?:to|a|an|another)\b)"
)
# Research or work of ours told as done at a time: "We compared those three laptops last week and I ended up…".
_WE_DID_THEN = re.compile(
    r"(?i)^\W*(?:so\s+)?(?:you and I|we)\s+(?:compared|looked at|researched|went through|shortlisted|planned|drafted|"
    r"wrote|mapped out|laid out|worked out|picked|chose)\b[^.!?]{1,80}?\b(?:last (?:time|week|month|night)|"
    r"yesterday|the other day|(?:on |last )?(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b"
)
# Read by its words, a told outcome is as sure as a pattern's reading (`relational_rules.RULE_CONFIDENCE`), whatever
# it is nearest by meaning.
_TOLD_CONFIDENCE = 0.6
# The user's own people, named as theirs or as whom they work with or speak to: "my students", "with clients I always
# lead with the recommendation", "my notes to the day staff", "when I present to the board".
_WITH_THEIR_PEOPLE = re.compile(
    r"(?i)\b(?:(?:my|our)|(?:with|to|for) (?:the|my|our)?) ?(?:[\w'’-]+ )?(?:students?|pupils?|"
    r"class(?:es)?|clients?|patients?|customers?|team|staff|reports|interns?|kids|children|players?|trainees?|"
    r"readers?|audience|followers|board|colleagues|managers?|boss|parents|families|employees|residents|"
    r"volunteers|members|tenants|guests)\b|"
    # or to a child: "other ways to explain fractions to an 8 year old", "for a toddler"
    r"\b(?:to|for|with) (?:an?|my|our|the) (?:(?:\d+|[a-z]+)[- ]years?[- ]olds?|child|toddler|teen(?:ager)?)\b"
)
# Someone else in the work: "we made with my brother", "my wife and I", "as a family", "at work".
_WITH_OTHERS = re.compile(
    # not a phrasal verb's "with": "we left off with the scraper dying", "we came up with the plan"
    r"(?i)\b(?:we\s+(?!(?:went|go|going|gone) with\b)(?:[\w'’-]+\s+){1,3}?(?<!\boff )(?<!\bup )(?<!\bon )"
    r"with (?:my|our|the|his|her|their|a) "
    r"[\w'’-]+|(?:my|our) [\w'’-]+ and I|"
    r"(?-i:[A-Z][a-z]+) and I\b|"  # a name, capitalised: not "went live monday and I sold six"
    r"as a (?:family|team|class|group)|at (?:work|school|the office)|our team|my team|in (?:high )?school)\b"
)
# A lesson needs its evidence in the sentence, whatever its neighbours by meaning: nearness alone made "they failed
# their driving test" an approach that worked and "no thanks, I'll keep my own script" a way of working. What each
# label needs: an approach that worked, an outcome credited to it; a preference about answers, a request or a
# comparison; a way of working, the user speaking of themselves or of us; a habit, a recurrence; research, "we".
# "New week, new batch of job postings", "another DIY weekend, another … chat": a recurrence said by the calendar.
_TURN_OF_THE_CALENDAR = r"(?:new|another) [^,.!?]{1,30}, (?:new|another)"
# A custom of the user's people is theirs, not ours: "as is our family custom", "my team's ritual".
_NOT_OF_THEIR_PEOPLE = r"(?!(?:family|household|village|office|team|church|school|club|team['’]s|family['’]s)\b)"
# A routine of ours named by its slot or its turn: "it's our Korean slot", "our 7am thesis hour", "that's how I like
# our Sunday ones", "the part of every dispatch night I hand over to you", "the one I do with you each April", "the
# way you sort my Mondays", "the shape she expects from your bedtime ones", "what you've seen from me on other
# Saturdays".
_WEEKDAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_ROUTINE_NAMED = (
    r"\bour (?:[\w-]+ ){0,2}?(?:slot|session|hour|ones|check-?in|catch-?up|ritual|(?:" + _WEEKDAYS + r"|weekly|"
    r"monthly|nightly|morning|evening) thing)\b|"
    r"\b(?:every|each) (?:[\w-]+ ){0,3}?(?:night|day|morning|evening|week|month|year|" + _WEEKDAYS + r")\b"
    r"[^.!?]{0,40}?\b(?:to|with) you\b|\bwith you (?:every|each)\b|"
    r"\bthe way you (?:always |usually )?\w+ my (?:" + _WEEKDAYS + r"|week|morning|evening|weekend)s\b|"
    r"\byour (?:[\w-]+ )?ones\b|\bother (?:" + _WEEKDAYS + r"|week|month)s\b"
)
# How people say a way of helping failed them (the words of the lesson, and of its note: `_DID_NOT_WORK`).
_FAILED = r"too (?:much|hard|fast|slow|complicated|confusing|overwhelming|intense|rigid)|flop|backfired"
_EVIDENCE = {
    "approach_worked": re.compile(
        r"(?i)\b(?:work(?:ed|s)|help(?:ed|s|ful)?|click(?:ed)?|made (?:it|this|that|things|all|me|the|sense)|"
        r"sense|clear(?:er)?|easier|better|faster|saved|calm(?:ed|er)?|confident|useful|difference|fixed|solved|"
        r"found|unstuck|paid off|did the trick|wonders|right (?:move|call|approach|way)|game[- ]changer|stick|obvious|"
        r"life[- ]?saver|godsend|exactly what I needed|"
        # "was what I needed", "gave me the nerve I needed", "I finally understood", "the russian dolls thing actually
        # stuck" (not "stuck on")
        r"(?:what|the \w+) I needed|finally (?:understood|understand|get|got|see|saw)|"
        r"(?:actually|finally|really|totally|just|it|that|this) stuck(?! (?:on|with|in|at)\b)|"
        # "is the only reason I passed", "I never understood recursion until you drew it", "that picture did it",
        # "saves us a lot of time"
        r"reason (?:why )?I|until you|did it|saves|"
        # "is honestly why I didn't freeze", "that's what got me to decide", "what made Ohm's law land"
        r"why I|what (?:got|made|finally|helped|saved|stopped|keeps|kept|gets)|made itself|"
        # "is honestly why linked lists stopped scaring me", "is how we found it"
        r"(?<!which )(?<!that )(?<!this )(?<!it )is (?:honestly |really |exactly |literally |the reason )?why|"
        r"is how (?:I|we) (?:finally )?(?:found|got|"
        r"cracked|fixed|solved|learn(?:ed|t))|"
        r"less (?:scary|overwhelming)|best (?:part|bit)|" + _FAILED + r")\b"
        # or did not: "were too much for my knee", "total flop", "backfired"
    ),
    "format": re.compile(
        r"(?i)\b(?:please|pls|prefer|rather|instead|better|easier|clearer|keep|always|never|don'?t|do not|stop|just|"
        r"only|more|less|fewer|like it when|works for me|from (?:now|here) on|going forward|in (?:the )?future|"
        r"next time|every ?time|each time|whenever|too|shorter|simpler|plain|"
        r"short|brief|straight|skip|use|write|explain|show|give|put|answer(?:ed|s)?|"
        r"repl(?:y|ies)|appreciate|would help|helps me|enough|"
        # how they take things in: "I learn best with examples, not theory"
        r"(?:learn|understand|absorb|follow|take (?:it|things) in) (?:best|better|most easily)|"
        # what comes first in an answer: "lead with the risks", "want the downside first"
        r"lead with|open with|start with|begin with|(?<!at )first|up front|(?:at|to) the top)\b"
    ),
    # How the user works is said in the present, of themselves or of us ("I like to…", "I work best…", "give me…"):
    # "I took the first step and applied" is something that happened.
    "working_style": re.compile(
        r"(?i)\b(?:I(?:'m| am)? (?:usually |always |often |really )?(?:like|love|prefer|tend|want|need|learn|work|"
        r"find|get|can'?t|cannot|do better|focus|think better|usually|always|often)|"
        r"I(?:'d|’d| would) (?:rather|like|prefer)|works? (?:better|best)|let'?s|let’s|let us|give me|show me|"
        r"don'?t|do not|rather than|instead of|myself|mine|at a time|my way|on my own|let me (?!know\b))\b"
    ),
    "habit": re.compile(
        r"(?i)\b(?:usual(?:ly)?|always|every|each|again|routine|whenever|weekly|monthly|daily|nightly|ritual|same|"
        r"go-to|back for|as ever|regular|customary|as per (?:usual|tradition|custom)|end up|the drill|"
        + _ROUTINE_NAMED
        + r"|"
        r"(?:our|my) "
        + _NOT_OF_THEIR_PEOPLE
        + r"(?:[\w-]+ )?(?:custom|tradition)|"
        # "new week, new batch … for you": a turn of the calendar brings it to me, not "another Monday, another pile
        # of laundry"
        + _TURN_OF_THE_CALENDAR
        + r"(?=[^.!?]*\b(?:you|u|please|for me)\b))\b"
    ),
    "shared_research": re.compile(
        r"(?i)\b(?:together|we|our|us|remember|last time|before|earlier|you and I|you and me)\b"
    ),
}
_EVIDENCE["suggestions"] = _EVIDENCE["format"]
# What a sentence quotes (an error message, a title): its words are not the person's about our talk ("my script says
# "list index out of range"" names no list of mine).
_QUOTE = re.compile(r'"[^"\n]*"|“[^”\n]*”')
# A preference about answers speaks of our talk: of me, of them as I answer them ("helps me", "with me", "please"),
# of answers, or of a form an answer takes. "I love long novels, the longer the better" is a taste in books.
_OF_OUR_TALK = re.compile(
    rf"{patterns.OF_ME}|"  # its flags stand for the whole
    r"\b(?:me|please|pls|answers?|repl(?:y|ies)|responses?|respond\w*|explain\w*|explanations?|messages?|bullets?|"
    r"bullet points?|tables?|lists?|examples?|diagrams?|steps?|summar\w+|code|snippets?|units?|metric|"
    r"imperial|english|language|emojis?|tone|headers?|headings?|paragraphs?|sentences?|words?|text|details?|"
    r"version|options?|recommendations?|jargon|theory|questions?|short|shorter|brief|concise|plain|ask\w*|"
    r"propose|suggest\w*|tell|show|give|talk|walk)\b"
)
# A sentence about a thing of the user's own, its subject ("my speech is 200 words too long for the slot", "my essay
# needs an example for each paragraph"), speaks of their work, not of my answers, unless it names me or them.
_OF_THEIR_OWN_THING = re.compile(
    r"(?i)^\W*my\s+(?:[\w'’-]+\s+){1,2}?(?:is|was|are|were|needs?|has|have|feels?|seems?)\b"
)
_ANSWERS_NAMED = re.compile(
    rf"{patterns.OF_ME}|\b(?:me|please|pls|answers?|repl(?:y|ies)|responses?|explanations?)\b"  # flags as OF_ME's
)
# Words said to me, or of us: a request to me ("help me…"), "you", "us", "our", "again".
_OF_ME = compiled(patterns.OF_ME)
_SAID_TO_US = re.compile(rf"{patterns.OF_ME}|\b(?:help me|with me|us|our|again|back)\b")  # flags as OF_ME's
# Or asks me by its words alone: "the usual: check my cover letter, please", "here are my numbers".
_ASKS_ME = re.compile(r"(?i)\b(?:me|please|pls|here'?s|here (?:is|are))\b")
_HELLO_AGAIN = re.compile(r"(?i)^\W*(?:hi|hello|hey|hiya|morning|evening)\s+again\b")
# A fresh start of their own ("my streak broke, anyway starting again tomorrow") is no return to me.
_STARTING_OVER = re.compile(r"(?i)\b(?:start(?:ing|ed)?|begin(?:ning)?|try(?:ing)?|tried)(?: (?:it|over|all))? again\b")
# What came of our work says how it went, well or badly; without it, the sentence only names the work ("the schema we
# designed, I want to extend it" picks it up again).
_RESULT = re.compile(
    r"(?i)\b(?:work(?:ed|s|ing)|did (?:the|its) (?:trick|job)|cut|saved?|got|shipped|passed|went|broke|broken|"
    r"fail(?:ed|s)?|rejected|accepted|held(?: up)?|help(?:ed|s)?|didn'?t|did not|doesn'?t|stopped|crash\w*|faster|"
    r"slower|fixed|solved|paid off|turned out|success\w*|"
    # or how it was to live with: "the itinerary we made was way too packed"
    r"(?:way |far |much |a bit |a little )?too (?!(?:and|but|so|if|I|we|you)\b)\w+|"
    r"loved|liked|hated|down (?:from|to)|up (?:from|to)|instead of|under|over|caught|found|ran|runs|won|landed|"
    r"improved|reduced|increased|doubled|halved|dropped|without (?:a|any)|no more|gone|"
    # what came of it for whom it was for: "it was a hit", "went live on Monday", "they paid", "did it"
    r"(?:a|such a) (?:\w+ )?hit|went live|paid|approved|refunded|granted|sold|did it|"
    # or badly, or by how those it was for took it: "fell apart on day 3", "the kids were glued to it"
    r"fell apart|went wrong|went sideways|backfired|flopped|glued to|"
    r"(?:exactly )?what (?:she|he|they|I|we) (?:wanted|needed))\b"
)
# The words a lesson needs guard against nearness alone at the bars (0.35-0.45 of cosine), where a life event or a
# refusal can sit as near a lesson as one said plainly. Far above them the meaning is the evidence: on dev, every
# sentence at 0.6 or nearer a lesson that lacked its words was that lesson, and below 0.55 some were not.
_SURE = 0.6
# Declining advice teaches nothing about how to answer: a refusal is no lesson, unless it says what to do instead.
_REFUSAL = re.compile(
    r"(?i)^\W*(?:no thanks|no thank you|nah|nope)\b|\bI(?:'ll|’ll| will) (?:keep|stick)\b|\bnot interested\b|"
    r"\bI (?:don't|don’t|do not) (?:want|need) (?:your|to hear|any)\b|\bI(?:'ll|’ll| will) pass\b|"
    r"\bI(?:'m|’m| am) not (?:doing|gonna do|going to do) (?!(?:well|great|good|ok|okay|fine|so|too|very|that)\b)"
)
_INSTEAD = re.compile(r"(?i)\b(?:instead|rather than|prefer|better if|just (?:tell|give|show|suggest))\b")
# Asking for one piece of writing is a task, not a way to answer: "write me a complaint, cold and formal" says how that
# letter should read. Said as a standing rule ("…every time", "from now on") it is a lesson again.
_ONE_OFF_TASK = re.compile(
    r"(?i)\b(?:write|draft|compose)\s+(?:me|us)\s+(?:a|an|the|some|my|our)\b|"
    # an edit of a piece named, asked of me: "can you shorten the first paragraph?", "tighten this intro"
    r"(?:^\W*|\b(?:can|could|would|will) you (?:please )?|\bplease )"
    r"(?:shorten|trim|tighten|cut down|rewrite|reword|rephrase|simplify|proofread|polish)\s+(?:the|this|that|my|our)"
    r"\s+(?:[\w'’-]+\s+)?(?:paragraph|sentence|section|intro(?:duction)?|conclusion|email|letter|line|bio|summary|"
    r"post|caption|message|draft|abstract|title|slide|chapter|verse)s?\b"
)
_STANDING = compiled(patterns.STANDING)
_NOW = re.compile(r"(?i)\bnow\b")
# A word that only opens what follows: "yeah my physics teacher did that…", "wait first, why are the quizzes…".
_UH = r"(?:(?:yeah|yes|yep|yup|ok(?:ay)?|oh|well|wait(?: first)?|lol|haha|hmm+|honestly|tbh|ngl)\W+)?"
# A question asks for something; it states no lesson. A request in question form ("could you keep answers short?")
# does, so only questions that ask about the world are left out.
_ASKS = re.compile(
    r"(?i)^\W*(?:what|which|how|why|when|where|who|whose|is|are|was|were|should|shall|do|does|did|am|have|has|"
    r"isn't|aren't|doesn't|don't)\b[^?]*\?\W*$|"
    # Typed in a hurry, without its question mark ("what's the difference between a list and a tuple", "what makes a
    # good first sentence for a cover letter").
    r"^\W*"
    + _UH
    + r"(?:what(?:'s|’s|s| is| are| does| do| makes| causes| happens)|how (?:to|do|does|can|is|are|much|many)|"
    r"why (?:is|are|does|do)|"
    r"where (?:is|are|can)|which (?:is|are)|who (?:is|are)) (?!(?:\w+ ){0,3}(?:for me|I (?:like|want|need|prefer)))|"
    # or about people at large, with or without it: "do people generally learn better from diagrams or from text"
    r"^\W*(?:do|does|did|is|are|can|could|should|would|will) (?:(?:most|some|many|all) )?(?:people|kids|children|"
    r"students|beginners|adults|learners|humans|readers|anyone|someone|everyone|most)\b"
)
# Someone else's taste or habit is not a lesson about this user: "my friend thinks bullet points are lazy", "the
# team lead said the new format worked".
_THIRD_PARTY = re.compile(
    r"(?i)^\W*" + _UH + r"(?:(?:half|most|some|all|many|none|a few|one|two|both|each) of (?:them|those|these)|"
    r"(?:my|our|the|a|his|her|their)\s+(?:[\w'’-]+\s+){0,2}?(?:friends?|colleagues?|co-?workers?|boss|"
    r"manager|team ?lead|lead|sister|brother|mum|mom|dad|mother|father|wife|husband|partner|son|daughter|kids?|"
    r"children|clients?|customers?|teacher|students?|team|roommate|flatmate|neighbou?r|girlfriend|boyfriend|family|"
    r"parents?|users?|readers?|editor|doctor|people|everyone|nobody|"
    # the groups they belong to or serve: "my book club prefers questions sent in advance"
    r"club|class|group|committee|board|church|choir|band|company|office|department|audience|followers|subscribers|"
    r"members|guests|host|landlord|landlady|tenants?|patients?|players|squad|staff|employees|investors|"
    # Those whose work is helping people, as mine is: what a surgeon's diagrams did is no lesson of mine.
    r"surgeon|nurse|physio\w*|therapist|counsell?or|dentist|vet|coach|tutor|trainer|instructor|mentor|"
    r"lecturer|professor|lawyer|accountant|pharmacist|GP|specialist|consultant)|he|she|they|everyone|people)\b"
    r"(?!\s+and\s+(?:I|me)\b)"
)
# Someone named, and what they want or say: "Henrik always wants summaries as bullet points". Case-sensitive: a name
# is capitalised ("Please always…" is no one).
_SOMEONE_NAMED = re.compile(
    r"^\W*[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?\s+(?:always\s+|usually\s+|also\s+|really\s+)?(?:wants|likes|prefers|says|said|"
    r"thinks|needs|asks|asked|hates|loves|told|insists)\b"
)
# What the user would want in another life is no lesson about this one: "if I were a teacher I'd want everything as
# bullet points", "hypothetically, as a manager…". "If I were you, I'd keep it shorter" is advice to me, and stays.
_COUNTERFACTUAL = re.compile(
    r"(?i)\b(?:hypothetically|(?:if (?:I|we) were|were I)\b(?!,? you\b)|if I was (?:a|an|the|in)\b)"
)
# Bad feelings about an answer, with nothing said of what to do instead, are a grievance and no lesson.
_GRIEVANCE = re.compile(
    r"(?i)\b(?:annoy|condescend|patronis|patroniz|rude|useless|wast(?:e|ed|ing)|furious|irritat|pointless|terrible|"
    r"awful|garbage|rubbish|hate (?:it|that|you)|fed up|sick of|tired of|cost me|why (?:do )?I (?:even )?bother|"
    r"no point (?:in )?asking)"
)
# "Don't" asks for something ("don't give me lists"); "I don't know why…" does not.
_ASKS_FOR = re.compile(
    r"(?i)\b(?:please|pls|plz|just|stop|keep|(?:don'?t|do not)(?! (?:know|think|care|get|understand|see|remember|"
    r"bother)\b)|from (?:now|here) on|going forward|next time|in (?:the )?future|rather|prefer|instead|"
    r"would (?:help|be better)|better if|can you|could you|would you)\b"
)
# An approach that worked names what worked ("the analogy", "walking me through it", "your checklist"); "that saved
# me an afternoon" after a fix is the outcome of the problem, not a way of helping.
# Something I did, told in the past ("you pretended to be my son", "when you had me score each supplier", "you built it
# up piece by piece"); "you said" or "you were" tells what I said or was, not a way of helping.
_YOU_DID = (
    r"you (?!(?:said|were|was|seemed|sounded|meant|thought|knew|needed|wanted|missed|forgot)\b)(?:[a-z]+ed|did|made|"
    r"gave|showed|broke|split|drew|wrote|kept|built|had|taught|told|set|let|took|came up|went|brought|ran|threw|found|"
    r"sent|got|spent|read|put)"
)
# or as it went on: "what really helped was you showing me the plan", "thank you for asking for the code first"
# or as a way of mine: "your habit of ending each answer with one small thing to try"
_I_DID = re.compile(
    r"(?i)\b(?:the way you|" + _YOU_DID + r"|you (?:for )?[a-z]{2,}ing|"
    r"your (?:habit|way|trick|idea|method|approach|rule|system|practice|knack) of [a-z]{2,}ing)\b"
)
# What I did named as a thing: "the Ana/Ben thing with actual rows", "that predicting thing" (not "the whole thing").
_NAMED_THING = r"(?:the|that|this|your)\s+(?!(?:whole|same|other|first|last|only|one|next|best|worst)\b)\S+\s+thing"
_APPROACH = re.compile(
    r"(?i)\b(?:(?!(?:evening|morning|thing|nothing|something|anything|everything|spring|string|during|feeling|"
    r"meeting|building|wedding|ceiling|king|ring|bring|sing|wing)\b)[a-z]{2,}ing\b|your\b|"
    r"you (?:do|make|give|show|explain|ask)|the (?:way|[\w-]+ you)|" + _YOU_DID + "|"
    r"analog\w*|examples?|checklists?|pictures?|diagrams?|plans?|steps?|tables?|quiz\w*|breakdown|lists?|metaphors?|"
    r"exercises?|method|trick|technique|idea|suggestion|tips?|advice|approach|framing|questions?|summar\w*|"
    r"drawing|sketch|outline|template|schedule|routine|script|roadmap|timeline|version|comparison|story|stories|"
    r"role[- ]?play\w*|games?|mnemonics?|" + _NAMED_THING + r")\b"
)
# Picking shared work up needs a sign that it continues: what is done, what is left, "again", "last time".
_CONTINUES = re.compile(
    r"(?i)\b(?:again|still|last (?:time|week|session)|left off|where (?:we|were)|pending|left|remaining|"
    r"next (?:up|step)|to ?do|done|finished|drafted|so far|continu\w*|resum\w*|back (?:on|to)|progress|"
    r"yesterday|we (?:did|made|wrote|planned|started|built|worked))\b"
)
# What is still to do in a message: "we still need ch4", "lighting is what's left", "can we do the FAQ next?"
_STILL_TO_DO = re.compile(
    r"(?i)\b(?:still (?:need|have|to|left)|next|left|pending|remaining|to ?do|can we|could we|let['’]?s|"
    r"now (?:the|we))\b"
)
_LESSONS = frozenset({"format", "suggestions", "working_style", "approach_worked"})
# Lessons whose own words (`_EVIDENCE`) say which they are, so a near tie between two of them can be settled by them.
_LESSONS_BY_WORD = frozenset({"approach_worked", "working_style"})
# Lessons of how to work with this user, between which a near tie is no doubt about keeping one (`_label_of`).
_HOW_TO_WORK_WITH_THEM = frozenset({"format", "suggestions", "working_style"})
# A near tie is a weaker reading than a win, so it is settled only by a sentence that says how the help went for the
# person, at some length: "… solved it" or "found it" credits the fix, which is the problem's outcome, and "that
# analogy works" leans on a message before it for what worked.
_SETTLES_A_TIE = re.compile(
    r"(?i)^(?=(?:\W*\b\w+\b){6})(?!.*\b(?:solved|fixed|resolved|found)\b).*\b(?:work(?:ed|s)|help(?:ed|s|ful)|"
    r"useful|click(?:ed)?|sense|easier|clearer|calm(?:ed|er)|confident|difference|unstuck|paid off|did the trick|"
    r"wonders|right (?:approach|way)|game[- ]changer|life[- ]?saver|godsend|better|"
    r"I (?:like|prefer|work|learn|need|focus|think))\b"
)
# Pattern templates whose wording is loose: when the meaning disagrees, or says it better, the meaning wins.
_LOOSE = frozenset({"approach_effectiveness", "interaction_pattern", "shared_context", "working_style"})


@dataclass(frozen=True)
class _Sentence:
    message: PromptMessage
    text: str


def with_meaning(
    conversation: ConversationInput, found: list[ExtractedRelationalMemory], layer: SemanticLayer
) -> list[ExtractedRelationalMemory]:
    """The patterns' memories, vetted by meaning, and the lessons the patterns missed."""
    spoken = [
        _Sentence(m, s)
        for m in conversation.messages
        if m.role is MessageRole.USER
        for s in sentences(m.content)
        if classified(s)
    ]
    texts = [s.text for s in spoken]
    matches = layer.classify("relational", texts)
    by_meaning = _by_meaning(conversation, spoken, matches, layer)
    user_messages = {m.index for m in conversation.messages if m.role is MessageRole.USER}
    said_better = {(m.type.value, index) for m in by_meaning for index in m.evidence}
    kept: list[ExtractedRelationalMemory] = []
    for memory in found:
        kind = memory.type.value
        spoken_in = [i for i in memory.evidence if i in user_messages]
        if kind in _LOOSE and spoken_in:
            if any((kind, i) in said_better for i in spoken_in):
                continue
            # A pattern's cue and a meaning that agrees, short of its bar: the meaning's wording, not the template's.
            agreeing = [
                (s, match)
                for s, match in zip(spoken, matches, strict=True)
                if s.message.index in spoken_in
                and RELATIONAL_TYPES.get(match.nearest) == kind
                and evidenced(match.nearest, s.text, match.by_label.get(match.nearest, 0.0))
            ]
            if agreeing:
                sentence, match = agreeing[0]
                content = (
                    _project(sentence.message) if match.nearest == "project" else _note(match.nearest, sentence.text)
                )
                if content:
                    kept.append(_memory(content, kind, match.score, [sentence.message.index]))
            continue
        kept.append(memory)
    covered = {(m.type.value, i) for m in kept for i in m.evidence}
    seen = {m.content.lower() for m in kept}
    for memory in by_meaning:
        if memory.type.value not in _LOOSE and any((memory.type.value, i) in covered for i in memory.evidence):
            continue  # a precise pattern said it already
        if memory.type.value == "collaboration_outcome" and any(k.type.value == memory.type.value for k in kept):
            continue
        if memory.content.lower() not in seen:
            seen.add(memory.content.lower())
            kept.append(memory)
    return kept


def _by_meaning(
    conversation: ConversationInput,
    spoken: list[_Sentence],
    matches: list[Match],
    layer: SemanticLayer,
) -> list[ExtractedRelationalMemory]:
    memories: list[ExtractedRelationalMemory] = []
    used: set[tuple[str, int]] = set()
    researched: dict[int, ExtractedRelationalMemory] = {}  # each message's note of research we did, by its index
    outcome = _outcome(conversation, layer)
    read = _probe_read(layer, [s.text for s in spoken])
    named: dict[int, str] = {}  # each message's last sentence naming work of ours, by the message's index
    last_said = {s.message.index: s.text for s in spoken}  # each message's last sentence
    previous: int | None = None
    asked_in: dict[int, int] = {}  # the message asking after work of ours, by the index of the one answering it
    said_how_we_work: set[int] = set()  # the messages saying in its words how we work or split the work
    for sentence, match, (credit, wants, sure_credit) in zip(spoken, matches, read, strict=True):
        index = sentence.message.index
        if previous is not None and previous != index and _asks_after(named.get(previous), last_said[previous]):
            # "remember the complaint letter we wrote?" closing a message: the answer to it is in the next one
            named[index] = named.pop(previous)
            asked_in[index] = previous
        previous = index
        # A result told of work of ours is its outcome, whatever else it is near (picking the work up, research);
        # in a problem solved here, the messages of its outcome say it already.
        ends_it = outcome is not None and index in outcome.evidence
        told = _told_outcome(sentence.text) if not ends_it else None
        said, of_named_work = sentence.text, False
        if told is None and not ends_it and index in named and _result_of_named_work(sentence.text):
            # the work named a sentence before, and what came of it now: one outcome, said by both
            told, said, of_named_work = "our_outcome", f"{named.pop(index)}; {sentence.text}", True
        elif told is None and _OUR_WORK.search(sentence.text):
            named[index] = sentence.text
        label = told or _label_of(match, sentence.text, layer)
        if (
            (
                (label in _CREDIT_MISREAD_AS and sure_credit)
                or ((label in _CREDIT_MISREAD_AS or label is None) and _CREDITED_IN_WORDS.search(sentence.text))
            )
            and (not ends_it or (sure_credit and _CREDITED_IN_WORDS.search(sentence.text)))
            and (_credits_what_i_did(sentence.text, match) or (sure_credit and _A_THING_OF_OURS.search(sentence.text)))
        ):
            label = "approach_worked"
        elif label != "working_style" and _HOW_WE_WORK_SAID.search(sentence.text):
            # Said to be how we work ("here's how I work best with you: …", "two ground rules for us: …"), it is,
            # whatever else the work it names sits near.
            label = "working_style"
        elif (
            label == "working_style"
            and _STANDING.search(sentence.text)
            and _ORDER_OF_MY_ANSWERS.search(sentence.text)
            and not _HOW_WE_SPLIT_THE_WORK.search(sentence.text)
        ):
            label = "format"
        elif (
            label in {"format", "suggestions", "habit"}
            or (label is None and match.nearest == "working_style" and _OF_ME.search(sentence.text))
        ) and _HOW_WE_SPLIT_THE_WORK.search(sentence.text):
            # Who does what first ("I'd rather write it myself first, then you go over it", "I wait for your ok
            # before the next one") is how we work, whatever form of my answers or habit of ours it sits near, or,
            # said to me, nearest a way of working by too little a margin to be read by meaning alone ("I like to try
            # new recipes myself first" splits no work with me).
            label = "working_style"
        elif (
            label is None
            and (_OUR_ROUTINE.search(sentence.text) or _ROUTINE_WITH_A_TASK.search(sentence.text))
            and _HANDED_TO_ME.search(sentence.text)
        ):
            # Our routine named and something asked of me or handed over ("my nightly vocab quiz please", "same drill
            # as every month: categorise these"): a habit of ours, whatever topic the sentence sits near.
            label = "habit"
        elif label in {"format", "suggestions", "shared_research"} and _come_as_usual(sentence.text):
            # Come to me, or handing me something, as our routine ("so here I am as usual to work out tomorrow's
            # maths", "payday again, so here I am with my list") is that routine, whatever it asks of me.
            label = "habit"
        if label == "working_style" and (
            _HOW_WE_WORK_SAID.search(sentence.text) or _HOW_WE_SPLIT_THE_WORK.search(sentence.text)
        ):
            said_how_we_work.add(index)
        kept = label is not None and (of_named_work or evidenced(label, sentence.text, match.by_label.get(label, 0.0)))
        if not kept and not told:
            # No lesson read by meaning, or one without its words: the first second reading that holds.
            readings = _second_readings(sentence.text, credit=credit and not ends_it, wants=wants and not ends_it)
            for label, score in readings:
                kept = evidenced(label, sentence.text, match.by_label.get(label, 0.0) if score is None else score)
                if kept:
                    break
        if label is None or not kept or (label, index) in used:
            continue
        content = _project(sentence.message) if label == "project" else _note(label, said)
        if content:
            used.add((label, index))
            if of_named_work and index in asked_in:
                used.add((label, asked_in[index]))  # the work was named there only to be asked after
            sure = _TOLD_CONFIDENCE if told else match.score
            memories.append(_memory(content, RELATIONAL_TYPES[label], sure, [index]))
            if label == "shared_research":
                researched[index] = memories[-1]
    for message in conversation.messages:
        said = message.content
        # Work picked up with someone else ("the trip we planned with my parents") is not ours.
        ours = message.role is MessageRole.USER and not _WITH_OTHERS.search(said)
        picked_up = ours and bool(
            _CONTINUED.search(said)
            or _LAST_TIME.search(said)
            or _OUR_WORK.search(said)
            or _OUR_WORK_FROM.search(said)
            or _WE_DID_THEN.search(said)
            or _OUR_DECISION.search(said)
            or (_YOU_MADE_FOR_ME.search(said) and _BUILT_ON.search(said) and not _CREDITED_IN_WORDS.search(said))
        )
        # Work named only to tell what came of it ("remember the appeal letter we wrote? they approved it!!") is that
        # outcome, not work picked up again, unless the message says what is still to do or that the work goes on.
        only_its_outcome = ("our_outcome", message.index) in used and not (
            _STILL_TO_DO.search(said) or _LAST_TIME.search(said)
        )
        if picked_up and not only_its_outcome and ("project", message.index) not in used:
            content = _project(message)
            if content:
                if message.index in researched:
                    # The work named again says more than the research the message sits near: one note of it.
                    memories.remove(researched[message.index])
                used.add(("project", message.index))
                memories.append(_memory(content, "shared_context", 1.0, [message.index]))
    reframed = _reframe_credit(conversation)
    credited = reframed or _named_credit(conversation)
    if credited is not None and not any(
        m.type is RelationalMemoryKind.APPROACH_EFFECTIVENESS and m.evidence == credited.evidence[-1:] for m in memories
    ):
        memories.append(credited)
        # What putting it another way brought is understanding, told by the credit: no problem solved besides.
        if reframed is not None and outcome is not None and reframed.evidence[-1] in outcome.evidence:
            outcome = None
    if outcome is not None:
        memories.append(outcome)
    return _without_reasons_of_a_request(memories, said_how_we_work)


def _without_reasons_of_a_request(
    memories: list[ExtractedRelationalMemory], said_how_we_work: set[int]
) -> list[ExtractedRelationalMemory]:
    """A way of working read beside a request of how to answer, in the same message, is that request's reason or its
    detail ("short paragraphs and bullets whenever you can; I'm dyslexic so big walls of text are rough for me",
    "respond tersely. I'll follow up if I need more"), not a way of working of its own, unless the message says in
    its words how we work or split the work."""
    answered = {
        m.evidence[0] for m in memories if m.type is RelationalMemoryKind.COMMUNICATION_PREFERENCE and m.evidence
    }
    return [
        m
        for m in memories
        if not (
            m.type is RelationalMemoryKind.WORKING_STYLE
            and m.evidence
            and m.evidence[0] in answered
            and m.evidence[0] not in said_how_we_work
        )
    ]


# Lost, said of an explanation: "I don't get where it comes from", "human words I said", "too abstract", "the trapdoor
# part loses me", "every blog says that", "I can read that but I don't hear it", "nothing is sticking".
_LOST = re.compile(
    r"(?i)\b(?:(?:still |really )?(?:don['’]?t|do not|didn['’]?t|can['’]?t) (?:really )?(?:get|understand|follow|see|"
    r"hear)(?! (?:back|home|in|out|up)\b)|confus\w*|lost me|loses me|(?:I['’]m|I am) (?:completely |totally )?lost|"
    r"over my head|too (?:abstract|technical|dense|mathy|jargon\w*)|(?:human|plain|simple) (?:words|english)|"
    r"can read that but|glaze\w* over|sounds the same|every (?:blog|book|site|video|tutorial) says|makes no sense|"
    r"nothing is sticking|not sticking|keep forgetting|means nothing to me|what does that even mean|"
    # the first answer did not land: "yes but why is it such a big deal", "I've read the list 50 times"
    r"(?:yes|yeah|ok|okay) but why|(?:read|heard) (?:it|that|the \w+) (?:\d+|so many|a million|a hundred) times)"
)
# Got it, in reaction to the way I put it: "ok THAT I get", "should've started there", "oh so it's just nudging",
# "speedometer vs odometer omg", "why didn't my teacher say that", "this is the first explanation that stuck".
_GOT_IT = re.compile(
    r"(?i)\b(?:that I (?:get|understand)|(?:now|finally) I (?:get|see|understand)|I (?:finally )?get it(?: now)?|"
    r"got it now|makes? (?:so much |total |perfect )?sense(?: now)?|clicked|should['’]?ve started|"
    r"why didn['’]?t (?:my|anyone|they|you)|first (?:time|explanation|one) (?:that|it)|(?:that|it)['’]?s? stuck|"
    r"o+h+ so|a+h+ so|wait so|so it['’]?s (?:just|basically|literally|like)|so (?:learning|it) is (?:literally|just)|"
    r"exactly how I needed|that did it|light ?bulb|omg|"
    # "it's already stuck", "I can explain it back now", "hearing it did more than the theory", "sold me"
    r"(?:already |finally )stuck|can explain it back|did more than|sold me|won me over)\b"
)
# A reaction that says the new way did not help either is no credit of it.
_NOT_IT = re.compile(
    r"(?i)\b(?:(?:is|was|isn['’]?t|wasn['’]?t) (?:not )?helping|(?:made|makes) it (?:more|even more|worse)|"
    r"lost me|loses me|(?:still|even more) (?:lost|confused)|doesn['’]?t help|didn['’]?t help|go back to)\b"
)


def _reframe_credit(conversation: ConversationInput) -> ExtractedRelationalMemory | None:
    """A way of explaining that worked, shown by the reaction to it: the user lost on an answer of mine ("human words
    I said lol", `_LOST`), I put it another way, and their last word is that this one landed ("speedometer vs
    odometer omg, why didn't my teacher say that", `_GOT_IT`). The note says how I put it, in my words, and their
    reaction: the user rarely names the way ("ok THAT I get. should've started there")."""
    messages = conversation.messages
    if not messages or messages[-1].role is not MessageRole.USER:
        return None
    last = messages[-1]
    before = list(messages[:-1])
    if not before or before[-1].role is not MessageRole.ASSISTANT:
        return None
    lost = [m for m in before if m.role is MessageRole.USER and _LOST.search(m.content)]
    if not lost or not any(m.role is MessageRole.ASSISTANT and m.index > lost[-1].index for m in before):
        return None
    said = last.content
    if not _GOT_IT.search(said) or _NOT_IT.search(said) or _LOST.search(said) or len(said.split()) > 40:
        return None
    # the message that said they were lost too: what a crisis said there keeps it from being a lesson
    return _credit_of_how_i_put_it(
        "putting it another way", before[-1], last, [lost[-1].index, before[-1].index, last.index]
    )


def _credit_of_how_i_put_it(
    lead: str, answer: PromptMessage, reaction: PromptMessage, evidence: list[int]
) -> ExtractedRelationalMemory | None:
    """The note of a way of explaining that landed: how I put it, in my words (the answer's first two sentences:
    "Fair — let's drop the word. You know Optional in Java?"), and their reaction."""
    told = [s for s in sentences(answer.content) if len(s.split()) >= _MIN_WORDS]
    if not told:
        return None
    put = from_assistant(clause(" ".join(told[:2])), patterns.LEXICON)
    content = f"What worked with this user: {lead} ({put}) — they said: {assistant_voice(reaction.content)}"
    return _memory(clipped(content, 2 * MAX_QUOTED_CHARS), "approach_effectiveness", _TOLD_CONFIDENCE, evidence)


# Something of my answer named and credited: "the waiter thing finally made it make sense", "the dolls did it", "the
# usb stick one is brilliant", "the lemonade stand version is perfect". `named` must be words of that answer. Praise
# alone needs the way named as one ("the dinner idea is perfect" likes what I suggested, not how I put it).
_ADVERBS = r"(?:(?:honestly|genuinely|really|just|finally|totally|so|absolutely)\s+)*"
_NAMED_AND_CREDITED = re.compile(
    r"(?i)\b(?:the|that|this|your)\s+(?P<named>(?:[\w'’-]+\s+){0,2}?[\w'’-]+)(?:"
    r"(?:\s+(?:thing|one|version|picture|analogy|example|comparison|story|trick|metaphor|image))?\s+"
    + _ADVERBS
    + r"(?:did it|clicked|made (?:it|this|that|everything) (?:click|make sense))|"
    r"\s+(?:thing|one|version|picture|analogy|example|comparison|story|trick|metaphor|image)\s+(?:is|was)\s+"
    + _ADVERBS
    + r"(?:perfect|brilliant|genius|spot on|(?:the )?best))\b"
)


def _named_credit(conversation: ConversationInput) -> ExtractedRelationalMemory | None:
    """A way of explaining that worked, named by the user from my answer right before and credited (`_NAMED_AND_
    CREDITED`): the words they name must be my answer's, so "my physics teacher's trampoline thing did it" is not
    mine. Words are compared as stems (`term_set`): "the coconut island" names "an island with 10 coconuts". Not
    where the reaction also says it did not help, or is someone else's."""
    for answer, reaction in pairwise(conversation.messages):
        if answer.role is not MessageRole.ASSISTANT or reaction.role is not MessageRole.USER:
            continue
        if _NOT_IT.search(reaction.content) or _THIRD_PARTY.search(reaction.content):
            continue
        for found in _NAMED_AND_CREDITED.finditer(reaction.content):
            named = term_set(found.group("named"))
            if named and named <= term_set(answer.content):
                return _credit_of_how_i_put_it("the way I put it", answer, reaction, [answer.index, reaction.index])
    return None


# What I help with: a tip, an idea, a drawing, an exercise. Another's ("my therapist's breathing trick", "the podcast's
# tip") is no approach of mine, whatever it did.
_HELP = (
    r"(?:tips?|tricks?|idea|suggestions?|advice|method|approach|technique|mnemonic|analog\w*|metaphors?|examples?|"
    r"exercises?|checklist|plan|schedule|quiz\w*|questions|drawings?|diagrams?|pictures?|sketch|table|breakdown|"
    r"explanations?|walkthrough|framework|template|system|routine|hints?|rule|way)"
)
_SOMEONE_ELSES_HELP = re.compile(r"(?i)(?:\b\w+['’]s|\b(?:his|her|their))\s+(?:[\w'’/-]+\s+){0,2}?" + _HELP + r"\b")
# Nor is what the user did alone, said so: "finally fixed the leaking tap on my own after watching a video", "…
# helped me fix the dishwasher myself" (a "myself" closing its clause says who did it).
_ON_THEIR_OWN = re.compile(
    r"(?i)\b(?:on my own|by myself|(?:in )?my own way|without (?:any )?help|(?:barely|hardly) needed (?:any )?help|"
    r"(?:didn't|did not) (?:even )?need (?:any |your )?help|"
    # or found elsewhere: "nvm, found it on stack overflow"
    r"found (?:it|the (?:answer|fix|solution|problem)) (?:on|in) (?:stack ?overflow|google|reddit|(?:a|the) forums?|"
    r"youtube|the docs)|^\W*(?:nvm|never ?mind)\b)"
)
# Done by the user alone, told in the past: "I fixed the date parsing bug myself last night", "I already ported the
# tests myself" — neither a way I helped, a way they like to work nor work of ours.
_DID_IT_THEMSELVES = re.compile(
    r"(?i)(?:\bI\s+|^\W*)(?:already\s+|just\s+|finally\s+)?(?:fixed|solved|figured out|sorted|worked out|found|did|"
    r"managed|got|ported|wrote|built|made|finished|changed|cleaned)\b[^.!?;]*\bmyself\b"
)
# A "myself" closing its clause says the same ("…helped me fix the dishwasher myself"), unless the sentence credits me
# with getting them there: "the way you had me explain my code back to you made me spot the bug myself".
_MYSELF_CLOSING = re.compile(r"(?i)\bmyself(?=\s*(?:[.,;:!]|$))")
# "Your idea of timeboxing worked wonders" is near a way of working, but it credits something I proposed.
_CREDITS_ME = re.compile(
    r"(?i)\b(?:your (?:idea|suggestion|tip|trick|advice|method|approach)|you (?:suggested|proposed|"
    r"showed|recommended)|like you said)\b"
)


def _second_readings(sentence: str, *, credit: bool, wants: bool) -> Iterator[tuple[str, float | None]]:
    """The labels a sentence no lesson was kept for may still carry, in the order they are tried, each with the score
    `evidenced` is to judge it at (None: its cosine to the label). `credit` and `wants`: the probe's reading
    (`_probe_read`), False in how the problem brought here ended ("moving $match to the front made it 20x faster"),
    which its outcome says already.

    - A request said to me is a preference about answers; else a credit the probe reads is a way of helping, and
      said of me or of what we did, how it helped may be told in any words ("took all the stress out of it", "caught
      two big holes": `_SURE`), what helped must still be named; else a routine of our talks named as one is a way
      they come back.
    - Then a preference about answers the probe is sure of, in words no prototype is near: it needs no word of the
      want (as a sentence `_SURE` near its prototype), and still passes every other check of a lesson; not a form
      asked for the work at hand (`_FOR_THE_TASK`)."""
    routine = _OUR_ROUTINE.search(sentence) and _TO_ME_OR_FOR_ME.search(sentence)
    if _ASKED_OF_ME.search(sentence) or _standing_request(sentence) or _INSTRUCTED.search(sentence):
        yield "format", None
    elif routine:
        # a routine named as one, even where the probe half reads a credit ("our spring ritual: I list what I
        # fancy, you tell me what fits", "here's the breakdown for you to go through with me like every month")
        yield "habit", None
    elif credit:
        yield "approach_worked", None
        if _SAID_TO_US.search(sentence):
            yield "approach_worked", _SURE
    elif _HOW_WE_SPLIT_THE_WORK.search(sentence) and (_SAID_TO_US.search(sentence) or _ASKS_ME.search(sentence)):
        yield "working_style", _SURE
    if wants and not _FOR_THE_TASK.search(sentence):
        yield "format", _SURE


# An instruction given for a case: "if an argument is weak, say so plainly", "when a library comes up, mention its
# license". Said to me, as any request to stand is ("put the main warning at the top in future": `_standing_request`),
# it speaks of our talk without naming me or my answers, and is itself a request to stand. Not a case of mine ("if
# you're free later, tell me a joke" asks once).
_INSTRUCTED = re.compile(
    # opening the sentence, a clause ("I'm a visual person, if something can be a table, make it one") or after a
    # heading ("rule for our sessions: whenever you suggest a library, mention its license")
    r"(?i)(?:^\W*|[,;:—–]\s*)(?:if|when|whenever|where|every time)\b"
    # the case: anything but a favour of mine ("if you're free", "if possible"), or what I do in answering
    r"(?:\s+(?:you|u)\s+(?:suggest|explain|answer|write|give|recommend|compare|reply|send|list|review|check|correct|"
    r"summari[sz]e|translate|draft|show|quote|cite|use|pick|plan|describe|talk)\w*\b|(?!\s+(?:you|u|possible)\b))"
    r"[^,.!?;]{3,80},\s*(?:please\s+|pls\s+|just\s+|always\s+)?"
    r"(?:say|tell|give|show|use|keep|flag|let|ask|stop|skip|don['’]?t|do|make|put|point|mention|write|explain|check|"
    r"remind|warn|be|go|start|lead|list|note|add|leave|cut|assume|include|cite|quote|number|label|bold|translate|"
    r"convert|round)\b"
)


def _standing_request(sentence: str) -> bool:
    """A request ("please", "just", "don't"…) said to stand ("whenever you compare options", "in future", "from here
    on"), not opened by the user telling of themselves ("I always test things in production, don't tell anyone"), no
    routine of ours ("back after the school run like always, can you help me…") and not of them and someone else."""
    return bool(
        _STANDING.search(sentence)
        and _ASKS_FOR.search(sentence)
        and not _OPENS_WITH_I.match(sentence)
        and not _OUR_ROUTINE.search(sentence)
        and not _WITH_OTHERS.search(sentence)  # "my co-founder and I always argue it out, it's just how we work"
    )


# A routine of ours said in so many words, and brought to me: "you know the drill", "like every evening" with the
# next batch of the work it is for.
_ROUTINE_SAID = re.compile(
    r"(?i)\byou know the drill\b|\b(?:the|our) usual drill\b|"
    r"\b(?:like|as) (?:every|each) (?:(?:two|three|four|other|couple of|few) )?(?:days?|weeks?|months?|mornings?|"
    r"evenings?|nights?|weekends?|" + _WEEKDAYS + r")\b"
    r"(?=[^.!?]*\b(?:you|please|pls|here['’]?s|below)\b)|"
    # or after what it hands over: "here are the notes, turn them into action items like every two weeks"
    r"\bhere(?:['’]s| is| are)\b[^.!?]*\b(?:like|as) (?:every|each) (?:(?:two|three|four|other|couple of|few) )?"
    r"(?:days?|weeks?|months?|mornings?|evenings?|nights?|weekends?|" + _WEEKDAYS + r")\b|"
    # "same routine as last time", "same as with the others", "as I always do afterwards", with what it brings
    r"\bsame (?:routine|drill|deal|procedure|process|thing|format) as (?:always|usual|last time|before|ever)\b|"
    r"\bsame as (?:with )?the (?:others|other ones|last (?:one|few))\b|"
    r"\bas I always do\b(?=[^.!?]*\b(?:you|here)\b)|"
    r"\b(?:next|another|this \w+['’]s) (?:batch|round|lot|set|pile|load|bunch)\b[^.!?]{0,60}?"
    r"\b(?:like|as) (?:every|each|usual|always|ever)\b"
)


def _label_of(match: Match, sentence: str, layer: SemanticLayer) -> str | None:
    """The match's label, but a credit to something I proposed that is nearest a way of working is an approach that
    worked: the credit tells the two apart where the margin between them cannot. And where no label won by the
    margin over another type's, the nearest or the runner-up whose lesson the sentence carries (`evidenced`: "the
    little quizzes worked much better than my textbook" says what worked and that it did, and only sits as near a
    format) takes it, when it clears its own bar and keeps the margin over keeping nothing (every `none_*`), as a
    taste said with its word does among the user's kinds."""
    calibration = layer.calibration("relational")
    credited = _CREDITS_ME.search(sentence) and _EVIDENCE["approach_worked"].search(sentence)
    if credited and match.nearest == "working_style" and match.score >= calibration.bar("approach_worked"):
        return "approach_worked"
    if match.label is not None or match.nearest.startswith("none"):
        return match.label
    by_label = match.by_label
    best_none = max((v for k, v in by_label.items() if k.startswith("none")), default=0.0)
    # Nearest a label and within the margin of its bar, above keeping nothing, said in its own words: as a taste
    # said in its own words is among the user's kinds.
    near = by_label[match.nearest] >= calibration.bar(match.nearest) - calibration.margin
    near = near and by_label[match.nearest] > best_none
    # Our routine brought to me ("end of the month so you know the drill, dumping the bank export below", "next batch
    # of customer emails for the candle shop, like every evening").
    if near and match.nearest == "habit" and _ROUTINE_SAID.search(sentence):
        return "habit"
    # Said as our routine in so many words and handed to me ("VAT quarter again, so here are the numbers, same
    # routine as last time"), nearest our routine and above keeping nothing however far its topic puts it from the bar.
    if (
        match.nearest == "habit"
        and by_label["habit"] > best_none
        and _ROUTINE_SAID.search(sentence)
        and (_ASKS_ME.search(sentence) or _SAID_TO_US.search(sentence))
    ):
        return "habit"
    # A form of my answers asked of me to stand ("for all future recipes, metric please, grams not cups"); not how
    # someone else explains ("Kenji always explains these way better than the textbook").
    if (
        near
        and match.nearest == "format"
        and _STANDING.search(sentence)
        and (_SAID_TO_US.search(sentence) or _ASKS_ME.search(sentence))
        and _EVIDENCE["format"].search(sentence)
    ):
        return "format"
    # Each label as near as the runner-up could be (within the margin of the nearest), nearest first: "I like to get
    # a rough version working first and clean it up afterwards" sits nearest an approach, then a format, and says a
    # way of working, third by 0.03.
    tied = [label for label, score in by_label.items() if score >= match.score - calibration.margin]
    for label in sorted(tied, key=by_label.__getitem__, reverse=True):
        score = by_label[label]
        if label.startswith("none") or score < calibration.bar(label) or score - best_none < calibration.margin:
            continue
        if label in _LESSONS_BY_WORD and evidenced(label, sentence) and _SETTLES_A_TIE.search(sentence):
            return label
        # Near a way of working and a preference about answers alike, and asked of me ("please give me very simple
        # steps, only one at a time, and wait for me"): a lesson of how to work with them either way, the nearer.
        if (
            {match.nearest, match.runner_up} <= _HOW_TO_WORK_WITH_THEM
            and label in _HOW_TO_WORK_WITH_THEM
            and _ASKS_FOR.search(sentence)
            and evidenced(label, sentence, score)
        ):
            return label
        # A recurrence said to me: "as always before a big client call, help me rehearse my opening" (and not "I
        # journal every night before bed", a habit of the user's life).
        if label == "habit" and evidenced(label, sentence) and _SAID_TO_US.search(sentence):
            return label
    return None


# A standing request of how I talk with them, said to me: "I'd rather you skip the pleasantries", "I like it when you
# ask me a question back", "it helps when you spell out the trade-offs", "stop apologising every message", "be blunt
# with me", "when you correct my Spanish, tell me why". MiniLM reads such a sentence by what it names (trade-offs,
# Spanish, money) as much as by the request, and near a way of working for its "I like"; what it asks is of my answers.
_ASKED_OF_ME = re.compile(
    r"(?i)\bI(?:['’]d| would) rather you\b|"
    r"\bI (?:really |do |always )?(?:like|love|appreciate|prefer) it when you\b|"
    r"\bit (?:really )?helps(?: me)?(?: a lot)? when you\b|"
    r"\bI(?:['’]d| would) (?:like|love|prefer) it if you\b|"
    r"\bstop \w+ing\b[^.!?]*?\b(?:every|each time|all the time|so much)\b|"
    r"\bbe (?:(?:a bit|a little|much|way|more|less) )*(?:blunt|direct|honest|straight|brief|concise|frank|casual|"
    r"gentle|patient) with me\b|"
    r"\bwhen you \w+[^.!?]*?,\s*(?:please\s+)?(?:tell|give|show|explain|ask)\b"
)
_OPENS_WITH_I = re.compile(r"^\W*I\b")
# How the work is split between us, or paced: "let me take a crack at it myself first and only nudge me if I'm stuck",
# "pause after each function so I can follow", "don't jump in with a solution yet", "do the whole thing in one go",
# "give me the plan before we touch any code". MiniLM reads such a sentence by the work it names (a regex, a
# thesis, a refinance); said to me (`_SAID_TO_US`), it is how they like to work with me, in any words.
_WORK_PARTS = (
    "drive|write|draft|code|type|try|attempt|explain|review|check|test|ask|answer|lead|navigate|correct|fix|quiz|"
    "read|edit"
)
_PART_OF_THE_WORK = rf"(?:{_WORK_PARTS})s?"
# A part of the work taken with its object ("translate a paragraph", "mark the mistakes"): the parts above, and what
# one does to a thing handed over.
_A_PART = (
    rf"(?:{_WORK_PARTS}|translate|mark|attack|compare|plan|give|bring|do|report|pick|choose|decide|suggest|list|"
    r"sketch|outline|research|summari[sz]e|proofread|polish|point out|go over|look over|spot|tell)s?"
)
# Where one part hands over to the other: a comma, "and", "then" ("when you summarise" is no part of the work).
_THEN = r"(?:,\s*(?:and |then |while )?| (?:and|then|while) )"
_HOW_WE_SPLIT_THE_WORK = re.compile(
    r"(?i)\b(?:(?:myself|on my own) first|first (?:myself|on my own)|"
    r"(?:let me|I['’]ll|I will|I like to|I['’]d like to|I want to) (?:try|do|take a (?:crack|stab|shot)|have a go|"
    r"attempt|write|draft|work)\b[^.!?]*\b(?:first|myself|on my own)\b|"
    r"only (?:nudge|hint|help|step in|jump in)|pause after (?:each|every)|(?:don['’]?t|do not) jump in|"
    r"think(?:ing)? out loud|in one go|check in (?:with me )?(?:between|after|before)|"
    # "we go one file at a time, I wait for your ok before the next one"
    r"wait for (?:my|your) (?:ok|okay|go|go-ahead|answer)|"
    # what I hand over and when: "don't hand me the answer", "don't give me the whole script at once"
    r"(?:don['’]?t|dont|do not|never) (?:just )?(?:give|hand|tell|show|send) me the (?:answers?|solutions?|"
    r"whole \w+)|"
    r"before (?:we|you) (?:touch|start|write|change|dive)\b[^.!?]*\b(?:plan|outline|agree)|"
    # who takes which part: "I drive, you review", "you explain, I try", "I write and you check", and with what
    # each takes: "I draft the meal plan, you check protein and fibre", "you give me step 1, I do it"
    r"(?:I|you) " + _PART_OF_THE_WORK + r",? (?:and |then |while )?(?:I|you) " + _PART_OF_THE_WORK + r"|"
    r"\bI " + _A_PART + r"\b[^,.;:!?]{0,40}" + _THEN + r"you " + _A_PART + r"|"
    r"\byou " + _A_PART + r"\b[^,.;:!?]{0,40}" + _THEN + r"I " + _A_PART + r")\b"
)
# The order of what I say, asked to stand: "from now on, start with a one-line summary, then the details", "always
# point out the biggest weakness first, before any positives". Near a way of working for its "first … then", it asks
# how to answer them.
_ORDER_OF_MY_ANSWERS = re.compile(
    r"(?i)\b(?:start|open|lead|begin) with\b[^.!?]*\b(?:summary|verdict|conclusion|bottom line|tl;?dr|answer|code|"
    r"command|example|weakness\w*|positives?|negatives?|problems?|headline|gist)\b|"
    r"\b(?:summary|verdict|conclusion|bottom line|tl;?dr|answer|code|command|examples?|weakness\w*|positives?|"
    r"negatives?|problems?|headline|gist|big picture)\s+first\b|\bfirst,? (?:before|then) (?:any |the )?"
    r"(?:positives?|negatives?|details|reasons|explanation)\b|\bthen the (?:details|reasons|explanation)\b"
)
# How we work, said to be that: "here's how I work best with you", "here's how I want us to go about this", "how I'd
# like to do this with you", "two ground rules for us".
_HOW_WE_WORK_SAID = re.compile(
    r"(?i)\bhow (?:I|we)(?: work best|(?: want| like|['’]d like| would like)(?: us)? to (?:do|go about|"
    r"work (?:on|through)|approach|tackle|handle) (?:this|it|these|things)| like to work)\b|\bground rules? for us\b"
)
# A routine of our talks named as one: "same drill as usual: …, you tell me your top suspect", "my usual morning
# thing: pick a word of the day for me", "I usually come to you right after standup". MiniLM reads such a sentence by
# the work it names (a slow query reads as a problem report); the routine is in its frame.
_OUR_ROUTINE = re.compile(
    r"(?i)"
    + _ROUTINE_NAMED
    + r"|\b(?:same drill|you know the drill|the drill|(?:as|like) (?:usual|always|ever|every (?:week|day|time|morning|"
    r"evening|night|month))|(?:my|our|the) usual|I (?:usually|always|normally|often) (?:come|ask|bring|send|paste|"
    r"check in|run)|"
    # "Usual bedtime vocab quiz please", "new week, new batch of job postings for you", "another DIY weekend, another
    # 'is this wall load-bearing' chat with you", "every time it makes a noise I end up asking you", "as has become
    # customary in our correspondence"
    r"customary|I (?:always |usually )?end up (?:asking|coming to|bugging|messaging) you|"
    # "as is now our custom", "our yearly ritual", "as per tradition", "like you normally do", "before every call",
    # "the monthly thing"
    r"(?:our|my) "
    + _NOT_OF_THEIR_PEOPLE
    + r"(?:[\w-]+ )?(?:custom|tradition|ritual)|as per (?:usual|tradition|custom)|"
    r"like (?:you|we) (?:normally|usually|always) do|before (?:every|each) \w+|"
    r"the (?:weekly|monthly|daily|yearly|annual|fortnightly|nightly) thing|"
    # "meal plan time again", "ok its that time again"
    r"(?:that|\w+) time again)\b|"
    r"^\W*(?:(?:ok(?:ay)?|hey|hi|so)\W+)?usual\b|\b" + _TURN_OF_THE_CALENDAR + r"\b"
)
# Come to me, or handing me what the routine is for: "so here I am as usual", "payday again, so here I am with my
# list", "here's October for our usual check".
_HERE_TO_YOU = r"\bhere (?:I am|we are|(?:it )?(?:is|are)|it['’]s)\b|\bhere['’]?s\b"


# "As usual", "again", "our usual": not "the usual", which compares ("better than the usual 'here are 5 causes'").
_AS_USUAL = re.compile(r"(?i)\b(?:(?:as|like) (?:usual|always|ever)|again|(?:my|our) usual)\b")


_HERE_TO_YOU_SAID = re.compile(r"(?i)" + _HERE_TO_YOU)


# Asked of me, or handed over after a colon: "…please", "here's…", "the regular: scale these down"; not "my yearly
# ritual: I clear out the garage".
_HANDED_TO_ME = re.compile(_ASKS_ME.pattern + r"|:\s*(?!I\b)\S")
# A routine named that is ours only when it comes with something for me: "the regular", "as I do every month", "my
# nightly vocab quiz" ("my weekly review at work got moved" is their own).
_ROUTINE_WITH_A_TASK = re.compile(
    r"(?i)\b(?:the|my|our) regular\b|\bas I do every\b|"
    r"\b(?:my|our|the) (?:nightly|daily|weekly|monthly|fortnightly) (?:[\w-]+ )?(?:quiz|check|session|review|digest|"
    r"prompt|summary|report|update|recap)\b"
)


def _come_as_usual(sentence: str) -> bool:
    return bool(_AS_USUAL.search(sentence) and _HERE_TO_YOU_SAID.search(sentence))


# What I do in it, or do for them: "you tell me…", "pick a word for me", "I usually come to you"; not "you were right
# as usual".
_TO_ME_OR_FOR_ME = re.compile(
    r"(?i)\b(?:for me|with you|to you|(?:you|u)\s+(?!(?:were|was|are|re|said|know)\b)[a-z]+|"
    r"(?:give|tell|show|pick|send|sort|check|find|make|start|quiz|test)\s+me|please)\b|\byou['’]ll\b|"
    # what we do together: "do the quiz thing with me", "go through it with me"
    r"\b(?:do|go through|run through|practi[sc]e|drill|rehearse)\s+(?:[\w'’-]+\s+){0,4}?with me\b|" + _HERE_TO_YOU
)

# How sure the probe must be that a sentence credits a way of helping, and that it states a preference about answers
# (`_probe_read`).
_CREDIT_ODDS = 0.5
_WANT_ODDS = 0.7
# A sentence that tells what I did and credits it sits nearest its topic as often as the credit: "the brain dump then
# sort thing you did with me … is what I've used for all three essays" nearest a preference about answers, "the way
# you correct my email and explain each mistake … help me very much" nearest a habit of ours. Where the probe is this
# sure of the credit, the approach it credits is the lesson, not the form, the habit or the way of working the
# prototypes read.
_SURE_CREDIT_ODDS = 0.75
_CREDIT_MISREAD_AS = frozenset({"format", "suggestions", "habit", "shared_research", "working_style"})
# What I did, credited in so many words ("the way you give me just two options a day works so well", "THIS is what
# works for me, when you put two sentences side by side"): the credit, however sure the probe is of it.
_CREDITED_IN_WORDS = re.compile(
    r"(?i)\b(?:(?:really |actually |so |totally )?helped|(?:really|totally|honestly|actually) worked|"
    r"works? (?:so |really |way |much )?(?:well|better|wonders)|"
    # or said not to have helped: "didn't help me much", "just froze me up"; "worked." alone, or "has gotten so
    # much better since", "got us there"
    r"(?:didn['’]?t|did not|doesn['’]?t|does not) (?:really )?(?:help|work)|froze me|"
    r"worked(?=\s*(?:[.!,;]|$|\s+(?:a treat|like a charm|perfectly|great|first time)))|"
    r"(?:got|gotten|getting) (?:so |way |a lot |much )*better|got (?:us|me) there|"
    r"is what (?:really |actually )?works|"
    # "the first time it made sense", "is what made it click", "was honestly the best part"
    r"made (?:it |things |everything )?(?:make )?(?:click|sense)|(?:is|was) what did it|"
    r"(?:was|is) (?:honestly |really )?the best (?:part|bit|thing)|"
    # "has been a game-changer for my procrastination", "was a lifesaver", "did wonders"
    r"(?:has been|have been|was|is|been) (?:a |an )?(?:total |real |absolute |complete )?(?:game[- ]?changer|"
    r"life[- ]?saver|godsend|lifeline|revelation)|(?:did|does|worked|works) wonders|"
    # "is honestly why linked lists stopped scaring me", "is what keeps me going", "is how we found it"
    # ("which is why I'm asking" only reasons)
    r"(?<!which )(?<!that )(?<!this )(?<!it )is (?:honestly |really |exactly |literally |the reason )?why|"
    r"is (?:honestly |really )?what (?:keeps|kept|gets|"
    r"got)|is how (?:I|we) (?:finally )?(?:found|got|cracked|fixed|solved|learn(?:ed|t)))\b"
)
# Or said beside a word of being lost: "…went over my head, the example with numbers is what made it land".
_CREDIT_BESIDE = re.compile(_CREDITED_IN_WORDS.pattern + r"|\b(?:is|was) what\b")
# What opens a request in chat, and asks it politely: "ok so", "sorry,", "hmm", then "can you", "please".
_OPENING = r"^\W*(?:(?:ok(?:ay)?|so|now|and|also|hey|hi|right|great|perfect|cool|sorry|quick one|hmm+|um+)[,:\s]+)*"
_POLITELY = r"(?:(?:can|could|would|will) (?:you|u)\s+|please\s+|pls\s+)*"
# "Just give me a suggestion" asks for how suggestions come (`_FOR_THE_TASK` leaves it be); "just bold the dates in
# that reply" and "just convert it" ask for the work at hand.
_JUST = r"(?:just\s+)?"
# A piece of work asked for now ("give me an outline for it in three points", "can you write this email in a more
# formal tone?"): its form is for that work. The probe reads such a request as near a preference as one that stands;
# without a word that makes it stand ("always", "from now on") or my answers named ("give me shorter answers"), it is
# no preference of its own reading.
_FOR_THE_TASK = re.compile(
    r"(?i)" + _OPENING + _POLITELY + r"(?:give|write|draft|make|help|rewrite|redo|turn|put|draw|list|create|compose|"
    r"come up with|translate|"
    r"summari[sz]e|outline|edit|fix|check|plan)\b"
    r"(?![^.!?]*\b(?:answers|replies|responses|explanations)\b)"
    r"(?![^.!?]*" + patterns.STANDING.removeprefix("(?i)") + ")"
)


# A form asked for what is in front of us ("put those in a short list I can screenshot", "make it shorter"): how to
# answer now, unless said to stand.
_ON_WHAT_IS_HERE = re.compile(
    r"(?i)"
    + _OPENING
    + _POLITELY
    + _JUST
    + r"(?:give|write|make|rewrite|redo|turn|put|list|format|convert|lay out|summari[sz]e|shorten|trim|say|cut|bold|"
    r"explain|smooth|tighten|simplify|polish|reword|rephrase|condense|tweak|soften)\s+(?:me\s+)?"
    r"(?:those|these|this|that|it|them|all (?:that|this|of (?:it|that|this))|the whole (?:thing|lot)|everything|"
    # or a form of something named now: "bullet points of what to say", "a table of the three areas"
    r"(?:a |an )?(?:\w+ )?(?:bullet points?|bullets|list|table|numbered steps|steps|summary|outline) (?:of|for) |"
    # or what it names is here: "bold the key dates in that last reply", "smooth the English of the text below"
    r"[^.!?]{0,40}?\b(?:now|below|above|(?:that|this|your) (?:last |previous |first )?"
    r"(?:reply|answer|message|draft|version|paragraph|email|list|text|bit|part|step|line|sentence|section|point))\b)"
)


def _for_what_is_here(sentence: str) -> bool:
    """A form asked for what is in front of us (`_ON_WHAT_IS_HERE`) and not said to stand."""
    return bool(_ON_WHAT_IS_HERE.search(sentence)) and not _STANDING.search(sentence)


# A task asked of me, opening the sentence: "please explain the rules of cricket to me", "convert 350°F to Celsius for
# me". What it asks is this conversation's work; how to answer it is said by a word of manner (`_MANNER`: "explain it
# with an example first") or of a standing rule. Not a choice asked of me: "just pick something sensible and I'll tell
# you if it's off" is how they want suggestions made.
_TASK_AT_HAND = re.compile(
    r"(?i)"
    + _OPENING
    + _POLITELY
    + _JUST
    + r"(?:explain|define|describe|convert|calculate|translate|draft|write|compose|"
    r"proofread|solve|look up|summari[sz]e|compare|check)\b"
)
_MANNER = re.compile(
    r"(?i)\b(?:simpl\w*|plain\w*|short\w*|brief\w*|concise\w*|bullets?|bullet points?|step[- ]by[- ]step|steps|"
    r"examples?|analog\w*|metaphors?|diagrams?|pictures?|tables?|numbered|first|before|after|without|less|more|fewer|"
    r"slow\w*|detail\w*|in depth|jargon|technical|human words|like (?:I['’]m|I am|to a)|eli5|one[- ]line|"
    r"one sentence|sentences|paragraphs?|words|tone|formal|casual|honest\w*|blunt\w*|direct\w*|gentl\w*|options|"
    r"choices|rather|instead|english|spelling|units|metric|imperial|language|code|emojis?)\b"
)


# Something asked of me, as a question: "sorry, can you explain that last bit again?" asks for help now and credits
# nothing, however near its words are to a way of helping that worked.
_ASKED_OF_ME_NOW = re.compile(r"(?i)" + _OPENING + r"(?:can|could|would|will) (?:you|u)\b[^.!?]*\?\W*$")


def _task_at_hand(sentence: str) -> bool:
    """A task asked of me with no word of how to answer it (`_TASK_AT_HAND`, `_MANNER`) and not said to stand."""
    return bool(_TASK_AT_HAND.search(sentence)) and not (_MANNER.search(sentence) or _STANDING.search(sentence))


class _ProbeReading(NamedTuple):
    credit: bool  # credits a way I helped (`_CREDIT_ODDS`)
    wants: bool  # states a preference about answers (`_WANT_ODDS`)
    sure_credit: bool  # credits a way I helped, surely (`_SURE_CREDIT_ODDS`)


_NO_READING = _ProbeReading(credit=False, wants=False, sure_credit=False)


# A sentence that opens with such a thing: where the probe is sure it credits something, what it credits is mine.
_A_THING_OF_OURS = re.compile(r"(?i)^\W*" + _NAMED_THING + r"\b")


def _credits_what_i_did(sentence: str, match: Match) -> bool:
    """Whether a sentence tells what I did (`_YOU_DID`) and carries the lesson of an approach that worked."""
    return bool(_I_DID.search(sentence)) and evidenced(
        "approach_worked", sentence, match.by_label.get("approach_worked", 0.0)
    )


def _probe_read(layer: SemanticLayer, texts: list[str]) -> list[_ProbeReading]:
    """For each sentence, whether the trained probe (`SemanticLayer.probabilities`) reads it as crediting a way I
    helped, and as stating a preference about answers: such a sentence sits nearest its topic among the prototypes
    ("the timeline drawing made the history chapter so much clearer" is nearest a shared project), and the probe has
    learnt what the credit or the want itself looks like. It speaks where no lesson won, or where the one that did
    lacks its words; an approach still needs its own words (`evidenced`), a preference only the probe's `_WANT_ODDS`.
    It speaks for these two types alone: for the others it drew lessons where none was due (docs/pipeline.md)."""
    odds = layer.probabilities("relational", texts)
    if odds is None:
        return [_NO_READING] * len(texts)
    read = []
    for row in odds:
        best = max(row, key=row.__getitem__)
        credit = row["approach_effectiveness"] if best == "approach_effectiveness" else 0.0
        read.append(
            _ProbeReading(
                credit=credit >= _CREDIT_ODDS,
                wants=best == "communication_preference" and row[best] >= _WANT_ODDS,
                sure_credit=credit >= _SURE_CREDIT_ODDS,
            )
        )
    return read


def _told_outcome(sentence: str) -> str | None:
    """ "our_outcome" for a result told of work of ours (`_OUR_WORK`), whatever the sentence is nearest by meaning."""
    if _OUR_WORK.search(sentence) and evidenced("our_outcome", sentence):
        return "our_outcome"
    return None


def _asks_after(naming: str | None, last: str) -> bool:
    """Whether a message ends by asking after work of ours it names ("hi! remember the letter we wrote?")."""
    return naming is not None and naming == last and naming.rstrip().endswith("?")


def _result_of_named_work(sentence: str) -> bool:
    """Whether a sentence after one naming work of ours tells what came of it: "the complaint letter we wrote to the
    airline?? they refunded the full 420 euro", "remember the appeal letter we wrote together? they approved it!!".
    Whoever answered ("they") is who the work was for, so no third party's doing makes it theirs."""
    return bool(_RESULT.search(sentence) or _WENT_WELL.search(sentence)) and not (
        _ASKS.search(sentence) or _WITH_OTHERS.search(sentence) or _NO_ENDING.search(sentence)
    )


def continues_our_work(text: str) -> bool:
    """Whether the text picks up a shared piece of work again ("resuming work on Kestrel", "continuing with the course
    we planned"): what it says is done is that work's progress, not the user's news."""
    return _CONTINUED.search(text) is not None


def classified(sentence: str) -> bool:
    """Whether a sentence is worth embedding for a lesson: a word or a question about the world can be none."""
    return len(sentence.split()) >= _MIN_WORDS and not _ASKS.search(sentence)


def _only_their_past(sentence: str) -> bool:
    """The user's past, with nothing of me or of now in it ("I used to want long explanations, but now short ones
    work better" says how to answer now)."""
    return bool(
        compiled(patterns.THEIR_PAST).search(sentence) and not _OF_ME.search(sentence) and not _NOW.search(sentence)
    )


# A way said to be going to help, or that would ("I'll follow along better that way", "a checklist would work better
# for me"), has not worked yet: a hope or a want, no credit, unless the sentence tells what did.
_HOPED = re.compile(
    r"(?i)(?:\b(?:will|would|could|might|may|should|going to|gonna)|['’](?:ll|d))\s+(?:\w+\s+){0,2}?(?:help|work|"
    r"make|be|follow|stick|click|keep|remember|learn|understand|get)\b"
)
_TOLD_WHAT_DID = re.compile(r"(?i)\b(?:helped|worked|made|was|were|did|clicked|stuck|got|saved|fixed)\b")


def _only_hoped(sentence: str) -> bool:
    return bool(_HOPED.search(sentence)) and not _TOLD_WHAT_DID.search(sentence)


def evidenced(label: str, sentence: str, score: float = 0.0) -> bool:
    """Whether the sentence carries what its lesson needs (`_EVIDENCE`), and is no bare refusal, no question about
    the world, nobody else's, no life the user only imagines, no grievance, no one-off task and no change in the
    user's life that says nothing of me. A lesson the sentence is `_SURE` near (`score`, its cosine to the label)
    needs no word of `_EVIDENCE`: "code first, explanation after" says how to answer without "please" or "prefer"."""
    if _REFUSAL.search(sentence) and not _INSTEAD.search(sentence):
        return False
    if _ASKS.search(sentence) or (
        label != "shared_research" and (_THIRD_PARTY.search(sentence) or _SOMEONE_NAMED.search(sentence))
    ):
        return False
    if _COUNTERFACTUAL.search(sentence):
        return False
    if label in _LESSONS and _GRIEVANCE.search(_after_but(sentence)) and not _ASKS_FOR.search(sentence):
        return False
    if label in _LESSONS and _ONE_OFF_TASK.search(sentence) and not _STANDING.search(sentence):
        return False
    # How they work with their own people ("I go one step at a time with my students", "I always give my clients the
    # bad news first") is no lesson of how I work with them, unless it speaks of me or my answers too.
    if label in _LESSONS | {"habit"} and _WITH_THEIR_PEOPLE.search(sentence) and not _ANSWERS_NAMED.search(sentence):
        return False
    # Asked for this once ("keep it brief this time") or told of the user's past ("back in school I needed…"), it says
    # how to answer now, or how they were: no lesson for the next conversation.
    if label in _LESSONS and label != "approach_worked" and for_this_once(sentence):
        return False  # a way of helping credited says when it worked ("14/20 this time"), not how to answer now
    if label in _LESSONS | {"habit"} and _only_their_past(sentence):
        return False
    # A habit of ours speaks of us or asks me ("the usual: check my cover letter", "here are my numbers"), or opens
    # our talk with its routine ("sunday, meal plan time as usual"): "I practice every night with podcasts in the car"
    # is a routine of the user's own life, and "hi again" a greeting.
    if label == "habit" and not _of_our_talks(sentence):
        return False
    # A change in the user's life is a fact about them; a lesson about us only where it speaks of me ("these days I
    # read you on my phone, so keep it shorter").
    changed = compiled(patterns.CHANGE_OF_LIFE).search(sentence)
    if label in _LESSONS and changed and not _OF_ME.search(sentence):
        return False
    if label == "approach_worked" and (
        not _APPROACH.search(sentence)
        # lost, of something not mine and crediting nothing: "step 14 makes no sense whatsoever"; not "the pipe
        # analogy went over my head, the example with numbers is what made it land"
        or (_LOST.search(sentence) and not (_OF_ME.search(sentence) or _CREDIT_BESIDE.search(sentence)))
        or _only_hoped(sentence)
        or _ASKED_OF_ME_NOW.search(sentence)
        or _SOMEONE_ELSES_HELP.search(sentence)
        or _ON_THEIR_OWN.search(sentence)
        or (_MYSELF_CLOSING.search(sentence) and not _OF_ME.search(sentence))
    ):
        return False
    if label in {"approach_worked", "working_style", "project", "shared_research"} and _DID_IT_THEMSELVES.search(
        sentence
    ):
        return False
    if label == "project" and not _CONTINUES.search(sentence):
        return False
    if label in {"project", "shared_research", "our_outcome"} and _WITH_OTHERS.search(sentence):
        return False  # work shared with someone else ("the trip we planned with my parents")
    if label == "our_outcome" and not _RESULT.search(sentence):
        return False
    if label == "working_style" and _for_what_is_here(sentence):
        return False  # "put that in a quick table for me": a form for what is here, no way of working
    if label == "working_style" and _HOW_WE_WORK_SAID.search(sentence):
        return True
    if label in {"format", "suggestions"} and _ON_THEIR_OWN.search(sentence) and not _ASKED_OF_ME.search(sentence):
        return False  # "I just did a pro/con list on my own and it made the decision obvious": their way, not mine
    if label in {"format", "suggestions"} and (
        not (
            _OF_OUR_TALK.search(_QUOTE.sub('""', sentence))
            or _INSTRUCTED.search(sentence)
            or _standing_request(sentence)
        )
        or _for_what_is_here(sentence)
        or _task_at_hand(sentence)
        or (_OF_THEIR_OWN_THING.search(sentence) and not _ANSWERS_NAMED.search(sentence))
    ):
        return False
    if label in _LESSONS and score >= _SURE:
        return True
    needed = _EVIDENCE.get(label)
    if label in {"format", "suggestions"} and (_ASKED_OF_ME.search(sentence) or _INSTRUCTED.search(sentence)):
        return True  # the request said to me is the want
    # A way of helping said not to work (`_DID_NOT_WORK`): of mine, a lesson ("the job search plan you wrote me didn't
    # work"); of anyone's, how the user learns ("reading docs for hours doesn't work for me").
    if label == "approach_worked" and _DID_NOT_WORK.search(sentence) and _OF_ME.search(sentence):
        return True
    return needed is None or needed.search(sentence) is not None


def _of_our_talks(sentence: str) -> bool:
    """Whether a recurrence speaks of us or asks me (`_SAID_TO_US`, `_ASKS_ME`; "hi again" is a greeting), or opens
    our talk with its routine ("sunday, meal plan time as usual", not "I run every morning as usual")."""
    unhailed = _STARTING_OVER.sub("", _HELLO_AGAIN.sub("", sentence))
    if _SAID_TO_US.search(unhailed) or _ASKS_ME.search(unhailed):
        return True
    if _ROUTINE_WITH_A_TASK.search(sentence) and _HANDED_TO_ME.search(sentence):
        return True
    return bool(_OUR_ROUTINE.search(sentence)) and not _OPENS_WITH_I.search(sentence)


def _after_but(sentence: str) -> str:
    """What a sentence ends on: a feeling turned by "but" is not the last word ("the little quiz at the end was
    annoying at first but it really made the grammar stick")."""
    return _BUT.split(sentence)[-1]


_BUT = re.compile(r"(?i)\bbut\b")


def _memory(content: str, kind: str, score: float, evidence: list[int]) -> ExtractedRelationalMemory:
    return ExtractedRelationalMemory(
        content=sentence_case(squeeze(content)),
        type=RelationalMemoryKind(kind),
        importance=_IMPORTANCE[kind],
        confidence=round(min(max(score, 0.0), 1.0), 3),
        evidence=sorted(set(evidence)),
    )


def _note(label: str, sentence: str) -> str | None:
    said = assistant_voice(sentence)
    if len(said.split()) < _MIN_WORDS:
        return None
    if label == "approach_worked" and _did_not_work(sentence):
        return _DID_NOT_WORK_LEAD_IN.format(said=said)
    return _LEAD_INS[label].format(said=said)


# A way of helping found not to help is a lesson too, and its note says so: "the pomodoro schedule you set up for me
# didn't work", "the 90-second intervals you designed were too much for my knee", "total flop". Unless the sentence
# also says what did help ("it didnt help at all, the bit where you built it up piece by piece is what made sense",
# "made it easier, I didn't feel overwhelmed"): a credit beside the failure is the lesson that worked, as before.
_DID_NOT_WORK = re.compile(
    r"(?i)\b(?:(?:didn['’]?t|did not|doesn['’]?t|does not|isn['’]?t|is not|wasn['’]?t|was not|won['’]?t|never|"
    r"hasn['’]?t|has not|haven['’]?t|have not)\s+(?:really |actually |quite |exactly |ever |feel |felt )?"
    r"(?:work|help|click|stick|land|do (?:it|much|anything)|overwhelm)\w*|"
    r"(?:total |complete |a )?(?:" + _FAILED + r")|too (?:long|many|vague)|(?<!less )overwhelm\w*|froze me|"
    r"made (?:it|things|everything) worse|"
    r"made (?:me|it|things) (?:even )?more (?:anxious|stressed|confused|nervous|worried|overwhelmed|lost|confusing)|"
    r"(?:no|not any) (?:help|use|good)|waste of time)\b"
)
_DID_NOT_WORK_LEAD_IN = "What did not work with this user: {said}"


def _did_not_work(sentence: str) -> bool:
    """Whether the sentence tells a way of helping that did not help (`_DID_NOT_WORK`) and no credit beside it."""
    rest, failed = _DID_NOT_WORK.subn(" ", sentence)
    return failed > 0 and not _EVIDENCE["approach_worked"].search(_MADE_FOR_ME.sub(" ", rest))


# What was made for the user names the thing, and credits nothing: "the meal plan you made me didn't really help".
_MADE_FOR_ME = re.compile(r"(?i)\b(?:you|we) made (?:me|us)\b")


def _project(message: PromptMessage) -> str | None:
    """ "We are working together on the Orion migration: last time we finished the schema; the data backfill is
    still pending." The name from the user's words, what is done and pending from the rest of the message."""
    found = _CONTINUED.search(message.content)
    name = tidy(found.group("name"), patterns.LEXICON) if found else None
    rest = message.content[found.end() :] if found else message.content
    said = clipped("; ".join(_told(rest)), MAX_QUOTED_CHARS)
    if name:
        return f"We are working together on {assistant_voice(name)}" + (f": {said}" if said else "")
    whole = clipped("; ".join(_told(message.content)), MAX_QUOTED_CHARS)
    return f"We picked up our shared work again: {whole}" if whole else None


def _told(text: str) -> list[str]:
    """The text's sentences in my voice, each of a few words at least: a word alone is a reaction ("interesting; then
    let's add a grammar deck…"), not what we picked up, did or left to do."""
    voiced = (assistant_voice(s) for s in sentences(text) if len(s.split()) >= _MIN_WORDS)
    return [said for said in voiced if said]


def _outcome(conversation: ConversationInput, layer: SemanticLayer) -> ExtractedRelationalMemory | None:
    """A problem the user brought, and how it ended: the problem as they first put it, what I proposed, and the
    resolution in their words. Only what follows an answer of mine can say it was solved. An opening not read as a
    problem ("my cover letter feels flat, can you help?") still ends in an outcome when the user tells of doing what
    I answered and that it went well (`_did_as_answered`): that says what they brought was a problem, and solved."""
    messages = conversation.messages
    opening = next((m for m in messages if m.role is MessageRole.USER), None)
    if opening is None:
        return None
    problem_told = _reports_a_problem(opening.content, layer)
    answered = [m for m in messages if m.role is MessageRole.ASSISTANT and m.index > opening.index]
    if not answered:
        return None
    later = [
        _Sentence(m, s)
        for m in messages
        if m.role is MessageRole.USER and m.index > answered[0].index
        for s in sentences(m.content)
        if len(s.split()) >= _MIN_WORDS
    ]
    matches = layer.classify("outcome", [s.text for s in later])
    last_said = max(m.index for m in messages if m.role is MessageRole.USER)
    # A message that says it is not solved is not solved, whatever its other sentences are near.
    unsolved = {s.message.index for s in later if _UNRESOLVED.search(s.text)}
    # A last message that also says what is still to come ("tests need them in CI. need to ask Raj how CI runs them",
    # "I'll try. I think I can sleep now") is not read as the end by meaning alone.
    last_message = next(m for m in messages if m.index == last_said)
    ends_open = any(_NO_ENDING.search(said) for said in sentences(last_message.content))
    resolved = [
        (s, match)
        for s, match in zip(later, matches, strict=True)
        if s.message.index not in unsolved
        and not _ON_THEIR_OWN.search(s.message.content)  # "I ended up restructuring the mocks my own way, all green"
        and not _NO_ENDING.search(s.text)
        and not _THIRD_PARTY.search(s.text)  # what someone else did or says: "she says the idea got rejected"
        and (
            (problem_told and _reads_as_resolved(s, match, last_said, ends_open))
            or _did_as_answered(s.text, _answer_before(conversation, s.message.index))
            or (s.message.index == last_said and not ends_open and _solved_in_words(s, match))
        )
    ]
    if not resolved:
        return None
    sentence, match = resolved[-1]  # the last word on it: how the conversation ended
    problem = assistant_voice(next(iter(sentences(opening.content)), ""))
    said = "; ".join(
        r
        for r in (
            assistant_voice(s)
            for s in sentences(sentence.message.content)
            if len(s.split()) >= _MIN_WORDS and not _THANKS.match(clause(s) or s)
        )
        if r
    )
    proposal = _proposal_before(conversation, sentence.message.index)
    parts = [f"We worked through this together: {problem}"]
    evidence = [opening.index, sentence.message.index]
    if proposal is not None:
        parts.append(f"I suggested: {proposal[0]}")
        evidence.append(proposal[1])
    if said:
        parts.append(f"the outcome: {said}")
    content = " — ".join(parts)
    return _memory(clipped(content, MAX_QUOTED_CHARS * 2), "collaboration_outcome", match.score, evidence)


def _solved_in_words(sentence: _Sentence, match: Match) -> bool:
    """An ending read past the bar and said in words ("that brought it down to under a second", "absolute paths did
    it") says what was brought was a problem, however it was put ("is it normal that git status takes 20 seconds?")."""
    return match.label == "resolved" and _told_how_it_ended(sentence.text)


def _reports_a_problem(text: str, layer: SemanticLayer) -> bool:
    """The debugging situation's cues, or an opening sentence nearer a problem report than anything else."""
    if any(compiled(trigger).search(text) for s in patterns.SITUATIONS for trigger in s.triggers):
        return True
    if _SYMPTOM.search(text):
        return True
    return any(m.nearest in _PROBLEM_LABELS for m in layer.classify("relational", sentences(text)))


# What goes wrong is said with few words: an opening with one of them is a problem brought to me (an outcome still
# needs a resolution said after my answer).
_SYMPTOM = re.compile(
    r"(?i)\b(?:errors?|exceptions?|fail(?:s|ed|ing)?|crash\w*|exits?|broken|bugs?|slow|timeouts?|times? out|"
    r"timing out|won'?t|doesn'?t work|not working|stuck|leak\w*|denied|cuts? off|hangs?|freez\w*|404|500|502|"
    r"nan|segfault|wrong|missing|stale|keeps? \w+ing|rejected|refused|can'?t find|cannot find|unable to)\b|"
    # A spreadsheet's errors
    r"#(?:REF|VALUE|NAME|N/A|DIV/0|NUM|NULL|SPILL|CALC)[!?]"
)
# "No, still 404" is near "it works now" by its topic; the words say it is not solved.
_UNRESOLVED = re.compile(
    # "No, still 404", "no luck"; not "no full brake job needed", which tells what was spared.
    r"(?i)^\W*(?:no(?=\W*$|\s*[,.!;:]|\s+(?:it|still|that|luck|dice|change|difference|good|joy|go|improvement)\b)|"
    r"nope|nah|not yet)\b|\bstill (?:\w+ )?(?:fail\w*|broken|404|500|error\w*|crash\w*|slow|the same|"
    r"happening|there|not|rejected|refused|denied|hang\w*|stuck|wrong|missing)\b|"
    r"\b(?:didn'?t|did not|doesn'?t|does not) (?:work|help|fix)|\bnot (?:fixed|working|solved)\b|"
    # what is still seen after the change, or nothing changed: "still getting EACCES", "no difference at all", "the
    # same error"
    r"\bstill (?:getting|seeing|having|get|see|has|have|says|shows|gives|returns|reads|throws)\b|"
    r"\bno (?:difference|change|luck|improvement)\b|"
    r"\bthe same (?:error|message|problem|issue|result|output)\b"
)
# What went well, said of something done: "the loaf actually rose", "the signal is solid now", "it ran last night".
_WENT_WELL = re.compile(
    r"(?i)\b(?:works|worked|working|fixed|solved|sorted|gone|rose|risen|solid|stable|smooth(?:ly)?|fine|faster|"
    # "work" as a verb, not the place ("before work"), nor a way of working ("how I like to work"); "green" of tests
    # and builds, not of a folder
    r"(?:it|that|this|they|them|everything) (?:to )?work\b|work (?:now|again|fine|perfectly|great)|"
    r"(?:is|are|went|turned|all|tests?|build|ci|checks?) green|green (?:now|again)|"
    # "perfect" of how it came out, not the "perfect, see you next month" that closes a talk
    r"perfectly|(?:is|are|it'?s|looks?|went|came out|turned out) perfect|"
    r"quicker|better|stronger|pass(?:es|ed)|ran|runs|load(?:s|ed)?|show(?:s|ed)? up|"
    r"(?:went|goes|go) through|accepted|no more|back to normal|like a charm|did the trick|"
    # what came of it, outside code: "he refunded the full amount", "approved yesterday", "it's silent now"
    r"approved|refunded|granted|silent|quiet now|clean now|runs clean)\b"
)
# The cause found or a measure of the change: with what went well (`_WENT_WELL`), how a user says it ended
# (`_told_how_it_ended`).
_CAUSE_OR_MEASURE = re.compile(
    r"(?i)\b(?:was it|that was|that'?s (?:it|the one)|root cause|cause|culprit|turned out|did it|found it|exactly|"
    r"bingo|it was|since|down (?:to|from)|from \S+ (?:\S+ )?to|cut|dropped|not a single|no (?:errors?|issues?|"
    r"problems?)|(?:know|get) why|stays? up|comes? up|everything'?s up|complete now|saved (?:me|my|us))\b"
)
# A sentence that is no ending whatever its words: hedged ("so that could work"), a plan ("I'll try the composite
# index on Thursday", "need to ask Raj"), or said of always rather than of this time ("that always works for me",
# "this is what works for me": a lesson, if anything).
_NO_ENDING = re.compile(
    r"(?i)\b(?:could|might|may|would|maybe|perhaps|probably|hopefully|I'?ll|I will|gonna|going to|need to|"
    r"have to|let me|always|usually|in general|every time|whenever|what (?:really |actually )?works|"
    # a request to me: "I'd rather try it myself, don't just write the fixed query", "please do it like last time"
    r"please|I['’]?d rather|(?:can|could|would) you|don['’]?t just|"
    # a taste, or things compared ("I prefer working from home", "they're better than any app"), not an ending
    r"prefer\w*|(?:better|worse) than (?:any|every|all|most)|"
    # still going on, or not known yet: "on hold now, 47 minutes and counting", "no idea if this is the last problem",
    # "haven't rerun the pipeline yet"
    r"on hold|and counting|still waiting|no idea|not sure (?:if|whether)|(?:don['’]?t|do not) know (?:if|whether)|"
    r"haven['’]?t\b[^.;!?]*\byet|"
    # a plan said without its "I": "will bring it up at platform sync", "ok will look later"
    r"will (?:bring|ask|check|look|try|send|call|ring|talk|raise|mention|update|report|test|see|do)|"
    # fine as acceptable, or as a feeling: "cups are fine", "for an hour I felt fine" (not "the sofa is fine now")
    r"(?:that'?s|thats|is|are|felt|feel|I'?m|am) fine(?!\s+(?:now|again)))\b"
)
# "I'm not doing dawn runs" refuses the answer, "it still doesn't load" says it failed.
_NEGATED = re.compile(r"(?i)\b(?:not|never)\b|n['’]t\b")
# Words of any answer and any report, which say nothing of what was done.
_ANY_ANSWER = frozenset({"try", "now", "thank", "thanks", "get", "got", "make", "made", "thing", "work", "time"})


def _reads_as_resolved(sentence: _Sentence, match: Match, last_said: int, ends_open: bool) -> bool:
    """Whether a sentence nearest a problem resolved ends the problem: said so in words (`_told_how_it_ended`), or
    read so past the bar in the user's last message, how the conversation ended, and more than thanks ("ok thanks,
    that helps"). In a longer conversation most of the user's sentences sit as near "it works now" by their topic as
    by anything else ("both graphs show a key lock on the same index", "then it wore off"): the meaning alone is no
    ending in its middle. Its last word may be read by meaning alone: endings are said in more words than any list
    holds (docs/pipeline.md); not when that message also says what is still to come (`ends_open`)."""
    if match.nearest != "resolved":
        # unless it says both what it was and that it went well: "yep that was it, crash gone"
        return bool(_CAUSE_OR_MEASURE.search(sentence.text) and _WENT_WELL.search(sentence.text))
    if _told_how_it_ended(sentence.text):
        return True
    thanks_alone = _THANKS.match(clause(sentence.text) or sentence.text)
    return match.label == "resolved" and sentence.message.index == last_said and not ends_open and not thanks_alone


def _told_how_it_ended(sentence: str) -> bool:
    """Whether a sentence says in words how a problem ended: what went well, the cause found, or a measure of the
    change."""
    return bool(_WENT_WELL.search(sentence) or _CAUSE_OR_MEASURE.search(sentence))


def _did_as_answered(sentence: str, answer: PromptMessage | None) -> bool:
    """Whether the user tells of doing what I answered, and that it went well: "moved it up onto the bookshelf and
    the signal is solid now" after "try moving the router off the floor". MiniLM reads such a sentence by its topic
    (a router, a loaf), far from every way of saying a problem is solved; what it shares with my answer says it is
    the answer carried out. Still failing ("moved it, no difference") is no success, whatever it shares."""
    if answer is None or not _WENT_WELL.search(sentence):
        return False
    if _UNRESOLVED.search(sentence) or _NEGATED.search(sentence):
        return False
    return bool((term_set(sentence) & term_set(answer.content)) - _ANY_ANSWER)


def _answer_before(conversation: ConversationInput, index: int) -> PromptMessage | None:
    """My last message before `index`."""
    answers = [m for m in conversation.messages if m.role is MessageRole.ASSISTANT and m.index < index]
    return answers[-1] if answers else None


# An angry report of a problem is still a problem report.
_PROBLEM_LABELS = frozenset({"none_problem", "none_complaint"})


def _proposal_before(conversation: ConversationInput, index: int) -> tuple[str, int] | None:
    """My last answer before `index`, unless it was a question back."""
    message = _answer_before(conversation, index)
    if message is None:
        return None
    statements = [s for s in sentences(message.content) if not s.rstrip().endswith("?")]
    if not statements:
        return None
    text = from_assistant(clause(" ".join(statements[:2])), patterns.LEXICON)
    return (lower_first(text), message.index) if text else None
