"""The rule data: what the rule-based model recognises in a conversation and how its constructive filter judges.

Everything here is a value; the engines beside it apply the values. To teach the rules something new, add a row.
Patterns are case-sensitive by default (see `schema.py`): `(?i:...)` marks the parts where case does not matter.
"""

from __future__ import annotations

from rapport.domain.rules.schema import FactRule, Feature, FilterRule, Lexicon, RelationalTemplate, Situation

# A proper name of up to four capitalised words ("Acme", "New York", "Bank of America").
_NAME = r"[A-Z][\w&'’\-]+"
PROPER = rf"{_NAME}(?: (?:of|de|la|&) {_NAME}| {_NAME}){{0,3}}"
# A free phrase up to the end of its clause.
_PHRASE = r"[^.,;!?\n]"
_SOON = r"(?i:tomorrow|today|tonight|(?:next|this|on) (?:week|month|year|weekend|summer|winter|spring|autumn|fall|monday|tuesday|wednesday|thursday|friday|saturday|sunday))"  # noqa: E501
_PETS = r"(?i:dog|cat|puppy|kitten|parrot|rabbit|bunny|hamster|horse|bird|turtle|snake|guinea pig|ferret|goldfish)"
_KIN = (
    r"(?i:wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|son|daughter|brother|sister|mom|mum|mother|dad|father|"
    r"grandmother|grandfather|grandma|grandpa|kid|child|baby|boss|manager|roommate|best friend|"
    # The rest of the people of a life, by name ("my colleague Priya", "my brother-in-law Sam").
    r"(?:brother|sister|mother|father|son|daughter)-in-law|step(?:mom|mum|dad|son|daughter|brother|sister)|"
    r"colleague|co-?worker|teammate|friend|neighbou?r|cousin|aunt|uncle|niece|nephew|flatmate|housemate)"
)
# Capitalised words after "my friend" that name a day or a month, not the friend ("my friend Sunday…" is rare, "my
# sister Monday morning…" is not).
_NOT_A_NAME = (
    r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|July|August|"
    r"September|October|November|December|Today|Tonight|Tomorrow|Yesterday|And|But|Or|So|Is|Was|Has|Had)"
)
_NAMED = r"(?i:'s name is|’s name is|(?:'s|’s) (?:named|called)|,? (?:is )?(?:named|called)|,)?"
_JOBS = (
    # up to three words before the job ("a high school chemistry teacher"), none of them "of" or an article ("a fan
    # of the teacher" is no teacher)
    r"(?i:(?:(?!(?:of|the|a|an)\b)[a-z\-]+ ){0,3}"
    r"(?:engineer|developer|designer|manager|teacher|nurse|doctor|student|writer|scientist|"
    r"analyst|lawyer|consultant|founder|co-founder|researcher|programmer|architect|accountant|artist|chef|"
    r"freelancer|intern|professor|photographer|marketer|recruiter|product owner|owner|CTO|CEO|SRE|PhD student|"
    r"nurse practitioner|pharmacist|therapist|journalist|editor|translator|mechanic|electrician|pilot|"
    # more of the jobs people name in passing: "I'm a paralegal and the partner wants it by 5"
    r"paralegal|solicitor|barrister|attorney|judge|paramedic|firefighter|police officer|midwife|dentist|"
    r"vet|veterinarian|surgeon|physiotherapist|physio|optician|radiographer|social worker|"
    r"librarian|receptionist|secretary|administrator|clerk|plumber|carpenter|builder|welder|farmer|baker|butcher|"
    r"barista|bartender|waiter|waitress|cashier|cleaner|courier|delivery driver|bus driver|taxi driver|"
    r"lorry driver|truck driver|soldier|tutor|lecturer|coach|personal trainer|musician|actor|dancer|stenographer|"
    r"hairdresser|tailor|technician|surveyor|estate agent|realtor|banker|broker|economist|statistician|biologist|"
    r"chemist|physicist|mathematician|historian|illustrator|animator|copywriter|data scientist|"
    r"project manager|civil servant|bookkeeper|auditor|underwriter|machinist|locksmith|gardener|landscaper|"
    r"zookeeper|nanny|childminder|teaching assistant|sous chef|line cook|flight attendant|air traffic controller))"
)
# What someone is for good, said of themselves: a diet, a condition they live with, how they see or hear.
_CONDITIONS = (
    r"(?i:vegan|vegetarian|pescatarian|(?:type [12] )?diabetic|pre-?diabetic|epileptic|asthmatic|autistic|"
    r"dyslexic|dyspraxic|blind|deaf|hard of hearing|partially sighted|visually impaired|hearing impaired|"
    r"colou?r-?blind|left-handed|lactose intolerant|gluten intolerant|coeliac|celiac|teetotal|"
    r"immunocompromised|neurodivergent|an amputee|a wheelchair user|a type [12] diabetic|a coeliac|a celiac|"
    r"a vegan|a vegetarian)"
)

# A short free phrase naming a thing (a tool, a habit, a food), ending before a time, a reason or the clause's end.
_KIND_OF_PERSON = (
    r"(?i:morning|night|evening|early|people|numbers|details?|detail-oriented|big-picture|big picture|words|visual|"
    r"hands-on|practical|creative|planning|spontaneous)"
)
_THING_WORD = r"[\w+#’'\-]+(?:\.[\w+#’'\-]+)*"  # "Node.js" is one word; a full stop after a word is not
_THING = rf"{_THING_WORD}(?: {_THING_WORD}){{0,3}}?"
_THING_END = (
    r"(?=(?i: (?:last|this|a few|a couple|about|around|in|at|on|for|with|during|over|since|because|as|and|but|"
    r"after|when|now|recently|anymore|any more|these days|nowadays)\b)|[.,;:!?)\n]|$)"
)
_I_HAVE = r"\bI(?:'ve|’ve| have)?(?: just| recently| finally| now)?"

# A day or month by name: no platform anyone is on.
_CALENDAR = (
    r"(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|"
    r"august|september|october|november|december)"
)

# --- user memories: sentences of the user's own messages ---------------------------------------------------------

# Updates of fact in the forms people use ("I moved from Berlin to Lisbon", "I no longer work at Acme", "I switched
# from VS Code to Vim"): the group `old` names the value that stopped being true, and the store step invalidates the
# memories that state it, keeping them as history (docs/pipeline.md). Tried before the plain facts below, so a
# sentence that names the old value keeps it.
FACT_UPDATES: tuple[FactRule, ...] = (
    FactRule(
        rf"(?i:\b(?:I|we)(?:'ve|’ve| have)?(?: just| recently| finally)? (?:moved|relocated)(?: back)?(?: away)? from) "
        rf"(?P<old>{PROPER}) (?i:to) (?P<place>{PROPER})",
        "User lives in {place}",
        "fact",
        0.7,
        slot="home_location",
    ),
    FactRule(
        rf"(?i:\b(?:I|we)(?:'ve|’ve| have)?(?: just| recently| finally)? (?:moved|relocated)(?: back)? to) "
        rf"(?P<place>{PROPER}) (?i:from) (?P<old>{PROPER})",
        "User lives in {place}",
        "fact",
        0.7,
        slot="home_location",
    ),
    FactRule(
        rf"(?i:{_I_HAVE} (?:left|quit)(?: my job (?:at|with))?) (?P<old>{PROPER}) "
        rf"(?i:to join|and joined|to work (?:at|for)|for a (?:job|role|position) at) (?P<org>{PROPER})",
        "User works at {org}",
        "fact",
        0.7,
        slot="employer",
    ),
    FactRule(
        rf"(?i:{_I_HAVE} (?:switched|changed|moved) (?:jobs|companies|employers)(?: from)?) (?P<old>{PROPER}) "
        rf"(?i:to|for) (?P<org>{PROPER})",
        "User works at {org}",
        "fact",
        0.7,
        slot="employer",
    ),
    FactRule(
        # "I left Shopify in March, now at a tiny fintech called Ledgerly": the new employer after a "now".
        rf"(?i:{_I_HAVE} (?:left|quit)) (?P<old>{PROPER})[^.;!?]{{0,40}}?,? (?i:and )?(?i:I'm |I am )?(?i:now) "
        rf"(?i:at|with|working (?:at|for)|work(?:ing)? (?:at|for)) (?:(?i:an?|the) [\w -]{{0,40}}?(?i:called|named) )?"
        rf"(?P<org>{PROPER})",
        "User works at {org}",
        "fact",
        0.7,
        slot="employer",
    ),
    FactRule(
        rf"(?i:{_I_HAVE} left) (?P<old>{PROPER}) (?i:for) (?P<new>{PROPER})",
        "User left {old} for {new}",
        "fact",
        0.7,
    ),
    FactRule(
        rf"(?i:{_I_HAVE} (?:switched|changed|migrated|moved over|gone|went)(?: over)? from) (?P<old>{_THING}) "
        rf"(?i:to) (?P<new>{_THING}){_THING_END}",
        "User switched from {old} to {new}",
        "preference",
        0.6,
        reject=("it", "that", "this", "them", "there", "here", "one"),
    ),
    FactRule(
        rf"(?i:\bI(?:'m|’m| am)? (?:no longer|not) (?:work(?:ing)? (?:at|for)|employed (?:at|by)|with|at)) "
        rf"(?P<old>{PROPER})(?= (?i:anymore|any more|now|these days)|[.,;!?]|$)",
        "User no longer works at {old}",
        "fact",
        0.7,
        slot="employer",
    ),
    FactRule(
        rf"(?i:\bI (?:no longer|don't|don’t|do not) work (?:at|for)) (?P<old>{PROPER})",
        "User no longer works at {old}",
        "fact",
        0.7,
        slot="employer",
    ),
    FactRule(
        rf"(?i:\bI (?:no longer|don't|don’t|do not) live in|{_I_HAVE} moved (?:out of|away from)) (?P<old>{PROPER})"
        rf"(?! (?i:to|for)\b)",
        "User no longer lives in {old}",
        "fact",
        0.7,
        slot="home_location",
    ),
    FactRule(
        rf"(?i:{_I_HAVE} (?:left|quit)) (?P<old>{PROPER})(?! (?i:for|to|and)\b)(?= |[.,;!?]|$)",
        "User left {old}",
        "fact",
        0.6,
    ),
    FactRule(
        rf"(?i:\bI (?:no longer|don't|don’t|do not|dont) (?P<verb>use|eat|drink|play|own|drive|smoke|watch|do|"
        rf"practi[cs]e|code in|write in|work with|go to|listen to)) (?P<old>{_THING})"
        rf"(?= (?i:anymore|any more|these days|nowadays)\b)",
        "User no longer {verb} {old}",
        "preference",
        0.6,
        reject=("it", "that", "this", "them", "much", "really", "a lot"),
    ),
    FactRule(
        rf"(?i:\bI no longer (?P<verb>use|eat|drink|play|own|drive|smoke|watch|do|practi[cs]e|code in|write in|"
        rf"work with|go to|listen to)) (?P<old>{_THING}){_THING_END}",
        "User no longer {verb} {old}",
        "preference",
        0.6,
        reject=("it", "that", "this", "them", "much", "really", "a lot"),
    ),
    FactRule(
        rf"(?i:{_I_HAVE} (?:stopped|quit)) (?P<old>[a-z]+ing(?: {_THING})??){_THING_END}",
        "User stopped {old}",
        "preference",
        0.6,
        reject=("working on", "thinking", "talking", "trying", "asking", "being"),
    ),
    FactRule(
        rf"(?i:{_I_HAVE} (?:given up|gave up)) (?P<old>[a-z]{_THING}){_THING_END}",
        "User gave up {old}",
        "preference",
        0.6,
        reject=("it", "that", "this", "them", "on", "hope", "trying"),
    ),
)

USER_FACTS: tuple[FactRule, ...] = (
    *FACT_UPDATES,
    FactRule(
        rf"(?i:\bI(?:'m|’m| am)?(?: currently| now| still)? (?:work|working) (?:at|for)) (?P<org>{PROPER})",
        "User works at {org}",
        "fact",
        0.7,
        slot="employer",
    ),
    FactRule(
        rf"(?i:\bI (?:just )?(?:joined|started at|got a job at|got hired at|got hired by)) (?P<org>{PROPER})",
        "User works at {org}",
        "fact",
        0.7,
        slot="employer",
    ),
    # "Started my new job at Northwind", "I've just started working for Fabrikam", "Today was my first day at Initech".
    FactRule(
        rf"(?i:\b(?:(?:I|we)(?:'ve|’ve| have)? )?(?:just |recently |finally )?(?:started|began|starting|start)"
        rf"(?: (?:my|a|the))?(?: new| first)? (?:job|role|position|internship|contract|gig) (?:at|with)|"
        rf"\b(?:(?:I|we)(?:'ve|’ve| have)? )?(?:just |recently |finally )?(?:started|began|starting) "
        rf"(?:working|to work) (?:at|for)|\bmy first (?:day|week|month) (?:at|with)) (?P<org>{PROPER})",
        "User works at {org}",
        "fact",
        0.7,
        slot="employer",
    ),
    # "I'm at Contoso now", "I'm with Fabrikam these days", "I'm now at Initech": where the user is said to be now is
    # where they work; without "now" or "these days", "I'm at Heathrow" is where they stand.
    FactRule(
        rf"(?i:\bI(?:'m|’m| am) (?:now|currently) (?:at|with)) (?P<org>{PROPER})",
        "User works at {org}",
        "fact",
        0.7,
        slot="employer",
    ),
    FactRule(
        rf"(?i:\bI(?:'m|’m| am) (?:at|with)) (?P<org>{PROPER})(?= (?i:now|these days|nowadays)\b)",
        "User works at {org}",
        "fact",
        0.7,
        slot="employer",
    ),
    # "These days I work for a small startup called Fernly".
    FactRule(
        rf"(?i:\bI(?:'m|’m| am)?(?: now| currently)? (?:work|working) (?:at|for) (?:an?|the) [\w\- ]{{2,40}}? "
        rf"(?:called|named)) (?P<org>{PROPER})",
        "User works at {org}",
        "fact",
        0.7,
        slot="employer",
    ),
    FactRule(
        rf"(?i:\bI(?:'m| am|’m) (?:an?|the) [\w\- ]{{2,40}}? (?:at|for)) (?P<org>{PROPER})",
        "User works at {org}",
        "fact",
        0.7,
        slot="employer",
    ),
    FactRule(
        rf"(?i:\bI(?:'m| am|’m)(?: (?:also|actually|fully|completely|totally|registered))?) (?P<what>{_CONDITIONS})"
        # the condition ends its clause: "I'm autistic and take things literally" and "deaf in my left ear" say more,
        # which the semantic layer keeps whole; a bracket says which ("colourblind (red-green)"), and "and I…" opens
        # another clause ("I'm vegan and honestly I love spicy food")
        r"(?=\s*(?:$|[,.;:!?()]|[—–]|-\s|\b(?:btw|too|myself|now|though|so|but)\b|and (?:\w+ )?I\b))",
        "User is {what}",
        "fact",
        0.7,
    ),
    FactRule(
        rf"(?i:\bI(?:'m| am|’m)(?: working as)?|\bI work as) (?P<article>(?i:an?)) (?P<role>{_JOBS})\b"
        # and where or when, said with it: "a paralegal at a family law firm in Calgary", "a paramedic on nights"
        r"(?: (?P<rest>(?:at|in|on|with|based (?:in|at|near)) [^,.;!?()]{2,60}?)"
        r"(?=\s*(?:$|[,.;:!?()]|\b(?:and|so|but|which|who)\b)))?",
        "User is {article} {role} {rest}",
        "fact",
        0.7,
        slot="occupation",
    ),
    # "My birthday is on the 3rd of May", "my birthday's March 12": a day that comes back every year is a fact.
    FactRule(
        r"(?i:\bmy (?:birthday|bday|b-day)(?: is|['’]s)(?: on)?) (?P<day>(?:(?:the )?\d{1,2}(?:st|nd|rd|th)?(?: of)? "
        r"(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|"
        r"sept|oct|nov|dec)[a-z]* \d{1,2}(?:st|nd|rd|th)?))\b",
        "User's birthday is on {day}",
        "fact",
        0.8,
        slot="birthday",
    ),
    FactRule(
        r"(?i:\bmy name is|\bcall me) (?P<name>[A-Z][a-z]+(?: [A-Z][a-z]+)?)",
        "User's name is {name}",
        "fact",
        0.8,
        slot="name",
    ),
    FactRule(
        rf"(?i:\b(?:I|we)(?:'ve|’ve| have)?(?: now| currently| actually| still)? (?:live|am living|'m living|"
        rf"’m living|reside|just moved|moved|relocated)(?: back)? (?:in|to)) (?P<place>{PROPER})",
        "User lives in {place}",
        "fact",
        0.7,
        slot="home_location",
    ),
    # A condition they live with, named: "I have ADHD and I'm a self-employed bookkeeper" keeps both.
    FactRule(
        r"(?i:\bI(?:['’]ve got| have| live with| suffer from)) (?P<what>(?i:type [12] diabetes|diabetes|ADHD|asthma|"
        r"epilepsy|autism|dyslexia|dyspraxia|coeliac disease|celiac disease|crohn['’]?s(?: disease)?|IBS|"
        r"migraines|arthritis|rheumatoid arthritis|tinnitus|endometriosis|lupus|psoriasis|eczema|sleep apnoea|"
        r"sleep apnea|multiple sclerosis|MS|parkinson['’]?s|long covid|PCOS|OCD|PTSD|fibromyalgia|"
        r"chronic fatigue(?: syndrome)?|a (?:nut|peanut|shellfish|dairy|gluten|latex) allergy|hay fever))"
        # ending its clause, or before another of theirs ("…and I'm a self-employed bookkeeper"): "I have ADHD and
        # work from home as an illustrator" says more, which the semantic layer keeps whole
        r"(?=\s*(?:$|[,.;:!?)]|[—–]|-\s|\b(?:btw|too|now|though|so|but|and I|and I['’]m)\b))",
        "User has {what}",
        "fact",
        0.7,
    ),
    # Where their home is, named in passing: "our flat in Glasgow has no counter space", "the oven in our apartment
    # here in Lyon". Not an old one ("our old flat in Leeds"), nor someone else's ("my parents' house in Kent").
    FactRule(
        rf"(?:^\W*|[,;:]\s*|\b(?i:in|of|at|outside|near|around)\s+)(?i:(?:our|my) (?:flat|apartment|house|home|"
        rf"condo|bungalow|studio flat|rented flat|rental)(?: here)? in) (?P<place>{PROPER})",
        "User lives in {place}",
        "fact",
        0.7,
        slot="home_location",
    ),
    # "I've lived in Berlin for ten years": the present perfect says they still do ("I lived in Paris" does not).
    FactRule(
        rf"(?i:\b(?:I|we)(?:'ve|’ve| have) (?:lived|been living) in) (?P<place>{PROPER})",
        "User lives in {place}",
        "fact",
        0.7,
        slot="home_location",
    ),
    FactRule(
        rf"(?i:\bI(?:'m| am|’m) (?:originally )?from|\bI grew up in) (?P<place>{PROPER})",
        "User is from {place}",
        "fact",
        0.6,
        slot="origin",
    ),
    # "My dog Rex", "Our cat is named Mochi", "our puppy's name is Bean": a household's pet is the user's too.
    FactRule(
        rf"(?i:\b(?:my|our)) (?P<pet>{_PETS}){_NAMED} (?P<name>[A-Z][a-z]+)\b",
        "User has a {pet} named {name}",
        "fact",
        0.6,
    ),
    FactRule(
        rf"(?i:\b(?:I|we)(?:'ve|’ve| have)? (?:have|got|adopted|just got|just adopted) an? (?:new )?)(?P<pet>{_PETS}) "
        rf"(?i:named|called) (?P<name>[A-Z][a-z]+)\b",
        "User has a {pet} named {name}",
        "fact",
        0.6,
    ),
    FactRule(
        rf"(?i:\bmy) (?P<relation>{_KIN}){_NAMED} (?!{_NOT_A_NAME}\b)(?P<name>[A-Z][a-z]+)\b",
        "User's {relation} is {name}",
        "fact",
        0.7,
        whole=False,
    ),
    FactRule(
        rf"(?i:\bI(?: now| mostly| mainly| usually| always| only| still)? use) (?P<what>{PROPER})",
        "User uses {what}",
        "preference",
        0.5,
    ),
    # "I'm on 3.12", "we're on MySQL 8", "I'm running Fedora": the platform the user works on, by its name or its
    # version; "I'm on Monday", "I'm on it" and "we're on the same page" name none.
    FactRule(
        rf"(?i:\b(?:I|we)(?:'re|’re|'m|’m| am| are)(?: now| currently| still| already)? (?:on|running)) "
        rf"(?!{_CALENDAR}\b)(?P<what>(?:{PROPER}|\d+(?:\.\d+)+)(?: v?\d+(?:\.\d+)*)?)(?= |[.,;:!?)]|$)",
        "User is on {what}",
        "fact",
        0.5,
        reject=(
            "i",
            "earth",
            "call",
            "leave",
            "holiday",
            "vacation",
        ),
    ),
    FactRule(
        rf"(?i:\bI(?:'d| would)?(?: really| generally| usually| much| strongly| always)? prefer) "
        rf"(?P<what>{_PHRASE}{{3,80}})",
        "User prefers {what}",
        "preference",
        0.7,
        reject=("if", "that you", "you", "it", "this", "that", "when you"),
    ),
    # "I'm not a morning person", "I'm a people person": the kind of person they say they are, a fact of them.
    FactRule(
        rf"(?i:\bI(?:'m| am|’m) (?:(?:really |definitely |just )?(?P<negated>not) (?:really )?)?"
        rf"(?:really |definitely |totally |very much |more of |much more of )?an? )(?P<what>{_KIND_OF_PERSON}) "
        r"(?i:person|type)\b",
        "User is {negated} a {what} person",
        "fact",
        0.7,
    ),
    # "I'm a huge Arsenal fan", "I'm a lifelong Springsteen fan": what they follow, by its name.
    FactRule(
        rf"(?i:\bI(?:'m| am|’m) an? (?:(?:huge|big|massive|lifelong|life-long|die-hard|diehard|proper|devoted|"
        rf"loyal|long-time|longtime|crazy) )?)(?P<what>{PROPER}) (?i:fan|supporter)\b",
        "User is a fan of {what}",
        "preference",
        0.6,
    ),
    FactRule(
        rf"(?i:\bI(?: really| absolutely| just)? (?:love|enjoy|like)) (?P<what>to {_PHRASE}{{3,60}})",
        "User likes {what}",
        "preference",
        0.5,
        reject=("to know", "to ask", "to say", "to see", "to thank", "to check"),
    ),
    FactRule(
        rf"(?i:\bI(?: really| absolutely| just)? (?:love|enjoy|like)) (?P<what>[a-z]{_PHRASE}{{2,60}})",
        "User enjoys {what}",
        "preference",
        0.5,
        reject=("to ", "it", "that", "this", "them", "those", "these", "you", "how", "what", "the way you", "your"),
    ),
    FactRule(
        rf"(?i:\bI(?: really)? (?:hate|dislike|can't stand|can’t stand|cannot stand|don't like|don’t like|do not like|"
        rf"don't enjoy|don’t enjoy)) (?P<what>[a-z]{_PHRASE}{{2,60}})",
        "User dislikes {what}",
        "preference",
        0.6,
        reject=("it", "that", "this", "them", "you", "how", "what", "when"),
    ),
    FactRule(
        # Not "config support is what I want to do today": there the wish is said before it, and is this session's.
        rf"(?<!what )(?<!What )(?<!which )(?i:\b(?:I (?:really |genuinely |desperately )?want to|"
        rf"we(?:'re| are|’re) trying to|I'd like to|I’d like to|I would like to|I'm trying to|"
        rf"I’m trying to|I am trying to|my goal is to|I hope to|I plan to|I'm planning to|I’m planning to|"
        rf"I am planning to|I'm hoping to|"
        rf"I’m hoping to)) (?P<what>[a-z]{_PHRASE}{{3,80}})",
        "User wants to {what}",
        "goal",
        0.5,
        reject=("know", "ask", "say", "thank", "check", "see", "make sure", "understand why", "tell you", "be clear"),
    ),
    # "I'm studying law at Edinburgh": where they study is who they are now, a student there, not an aim.
    FactRule(
        rf"(?i:\bI(?:'m| am|’m) (?:studying|doing a (?:degree|masters|master's|phd|PhD|diploma) in)) "
        rf"(?P<what>[a-z][\w ]{{1,40}}?) (?i:at) (?P<org>{PROPER})",
        "User studies {what} at {org}",
        "fact",
        0.7,
    ),
    FactRule(
        rf"(?i:\bI(?:'m| am|’m)) (?P<how>(?i:learning|studying|taking a course (?:in|on)|taking a class (?:in|on))) "
        rf"(?!{_PHRASE}{{1,40}}? (?i:at) {PROPER})(?P<what>{_PHRASE}{{2,60}})",
        "User is {how} {what}",
        "goal",
        0.6,
        reject=("it", "that", "this", "how to use you"),
    ),
    FactRule(
        rf"(?i:\bI(?:'m| am|’m) (?P<how>writing|drafting|building|working on|applying for|interviewing for)) "
        rf"(?P<what>(?i:my|a|an|our|the) {_PHRASE}{{2,50}})",
        "User is {how} {what}",
        "event",
        0.5,
    ),
    FactRule(
        rf"(?i:\bI(?:'m| am|’m) (?P<how>going|traveling|travelling|flying|heading|moving) to) (?P<place>{PROPER})"
        rf"(?: (?P<when>{_SOON}))?",
        "User is {how} to {place} {when}",
        "event",
        0.6,
    ),
    FactRule(
        rf"(?i:\bI(?:'m| am|’m) planning (?:a|an|my|our)) (?P<what>(?i:trip|vacation|holiday|visit|move|wedding|"
        rf"party|birthday party|honeymoon)) (?P<prep>(?i:to|in|for)) (?P<place>{PROPER})",
        "User is planning a {what} {prep} {place}",
        "event",
        0.6,
    ),
    FactRule(
        r"(?i:\bI (?:just |recently )?got) (?P<event>(?i:(?:married|engaged|promoted)"
        # to whom or to what, in a word or two: "promoted to team lead", "engaged to Sam"
        r"(?: (?i:to) (?:(?i:a|an|my) )?[A-Za-z][\w'-]*(?: (?!(?i:of|at|in|for|the|and|but|so|last|this|on|"
        r"yesterday|today|after|before)\b)[A-Za-z][\w'-]*)?)?|"
        r"divorced|a new job|a puppy|a dog|a cat|my degree|my PhD|my driver's license))",
        "User recently got {event}",
        "event",
        0.7,
    ),
    FactRule(
        rf"(?i:\bI have) (?P<article>(?i:an?)) (?P<what>(?i:exam|interview|job interview|deadline|presentation|demo|"
        rf"meeting|doctor's appointment|appointment|flight|launch|release|surgery)) (?P<when>{_SOON})",
        "User has {article} {what} {when}",
        "event",
        0.5,
    ),
)

# A message that corrects an earlier statement: whatever it yields is a correction, never dropped as negative.
CORRECTION_CUES: tuple[str, ...] = (
    r"(?i)\b(?:actually|correction|to be clear|I meant|I misspoke|let me correct|that's wrong|that’s wrong|"
    r"that is wrong|not anymore|no longer)\b",
    r"(?i)\bnot (?:\w+ ){1,3}but\b",
    r"(?i)^\s*no[,!.]",
)

# A change in the user's life told as such ("these days I run in the mornings", "since I switched to night shifts…",
# "I've moved to Lisbon"): a fact about them now, whatever else the sentence sits near by meaning.
CHANGED = r"I(?:'ve|’ve| have)? (?:switched|moved|started|changed|began|joined)\b"  # "since I switched…"
CHANGE_OF_LIFE = (
    rf"(?i)\b(?:these days|nowadays|since {CHANGED}|I(?:'ve|’ve| have)? (?:switched|moved) (?:to|over to))\b"
)
# Words that speak of me, the assistant ("you", "your", "u").
OF_ME = r"(?i)\b(?:you|your|yours|u|ur)\b"
# Someone else's, in a sentence up to a cue (`Feature.mine`): "his", "her", "their", or a possessive "'s" that is no
# "it's" or "that's", and no day's ("yesterday's answer was too long" is mine).
SOMEONE_ELSES = (
    r"(?i)\b(?:his|her|their)\b|\b(?!(?:it|that|what|there|here|he|she|who|let|where|how|this|today|yesterday|"
    r"tonight|week|month|year|morning|evening|day)['’]s\b)[a-z][\w-]*['’]s\b"
)
# A condition or a supposition is not how things are: "if I were to…", "say I moved…", "imagine I'm…". Not "if I'm
# honest" or "if you ask me", which lead in to how things are.
SUPPOSED = (
    r"(?i)^\W*(?:(?:and|but|so|ok|okay|well)\W+)?(?:hypothetically|suppose|supposing|imagine|what if|say (?:I|we)|"
    r"if(?! (?:I'?m|I am|I['’]m) (?:honest|being honest)| you ask me))\b"
)
# A request for this once ("keep it brief this time", "just today, skip the explanations", "for this recipe give me
# metric units", "can you do this one as a table?"): how to answer now, not how to answer this user, unless said as a
# standing rule (`STANDING`).
FOR_NOW = (
    r"(?i)\b(?:this time|this once|this one|for now|(?:just|only|for) today|tonight|for this (?:answer|reply|"
    r"response|question|message|email|letter|note|text|recipe|request))\b|"
    # the form asked for, then the question it is for: "Keep it short: capital of Mongolia?"
    r"^\W*(?:please\s+)?(?:keep it (?:short|brief|simple)|be brief|briefly|short answer|quick(?: answer| one)?|"
    r"in (?:one|a|two|a few) (?:sentences?|words?|lines?)|one[- ]liner|yes or no|tl;?dr)\s*(?:please\s*)?[:—–-]\s*"
    r"[^.!?]{3,}\?"
)
STANDING = (
    r"(?i)\b(?:every ?time|each time|always|whenever|from (?:now|here) on|in (?:the )?future|going forward|in general|"
    r"for (?:all |any )?(?:future|upcoming) \w+|"
    r"all (?:of )?your|by default|default to|as a (?:general )?rule)\b"
)
# The user's past ("back in school I needed everything explained three times", "I used to love long explanations"):
# what they were, not how to answer them now.
THEIR_PAST = (
    r"(?i)\b(?:used to|back in (?:school|college|university|uni|the day)|when I was (?:a kid|a child|young|little|"
    r"in school|at school|a student)|as a (?:kid|child|teenager|student))\b"
)

SITUATIONS: tuple[Situation, ...] = (
    Situation(
        template="User is debugging {object}{setting}",
        triggers=(
            r"\b[45]\d\d\b(?i:(?= (?:error|errors|on|from|when|status|response|again|in)))",
            r"(?i)\b(?:error|exception|stack ?trace|traceback|bug|crash(?:es|ing)?|segfault|timing out|times out|"
            r"keeps failing|is failing|are failing|is broken|not working|doesn't work|doesn’t work)\b",
        ),
        objects=(
            (
                r"\bAPI\b|(?i:\bendpoints?\b|\bREST\b|\bGraphQL\b|\bHTTP\b)|(?:^|\s)/[a-z][\w\-/{}]*|\b[45]\d\d\b",
                "an API",
            ),
            (r"(?i)\b(?:build|compil\w+|CI|pipeline|deploy\w*)\b", "a build"),
            (r"(?i)\b(?:database|query|SQL|postgres\w*|mysql|mongo\w*|migration)\b", "a database problem"),
            (r"(?i)\b(?:tests?|unit tests?|test suite)\b", "failing tests"),
            (r"(?i)\b(?:app|website|site|frontend|page|UI)\b", "an app"),
        ),
        named=(
            r"(?i)\b(?P<thing>(?:my|our|the)\s+(?:[\w.-]+\s+){0,2}?[\w.-]+)\s+(?:keeps?\s+(?:timing out|failing|"
            r"crashing|erroring)|(?:is|are)\s+(?:still\s+)?(?:failing|broken|crashing|timing out|not working)|"
            r"crash(?:es|ed)|times out|timed out|(?:doesn't|doesn’t|isn't|isn’t|won't|won’t) (?:work|load|start|build|"
            r"compile|run))\b"
        ),
        settings=(
            (
                r"(?i)\b(?:at work|for work|our team|my team|my job|the office|our company|our (?:prod|production|"
                r"service|API|app|backend|codebase)|my (?:boss|manager|coworkers?|colleagues?)|work project|"
                r"in production)\b",
                " at work",
            ),
            (r"(?i)\b(?:side project|hobby project|my own project|personal project)\b", " on a side project"),
        ),
    ),
)

# --- relational memories: cues across the exchange ----------------------------------------------------------------

_OUTCOME_END = r"(?=[.,;:!?—–\n]|$| again| when| after| since| and | but | all along| after all| that| which| causing)"
# "It was the cache" found; not what was only believed ("I had assumed it was the exercise") and not how something felt
# ("it was a mess", "it was a nightmare").
_IT_WAS_FOUND = (
    r"(?<!assumed )(?<!thought )(?<!figured )(?<!guessed )(?<!expected )(?<!if )\bit was "
    r"(?!(?:a|an|the) (?:mess|nightmare|disaster|joke|pain|relief|blast|hit|success|lot|bit|shame|pity|surprise|shock|"
    r"treat|struggle|battle|chaos|carnage|zoo|circus|good|great|nice|long|big|huge|fun|total|real|complete)\b)"
)

FEATURES: tuple[Feature, ...] = (
    # The problem, as the user first put it.
    Feature(
        "problem",
        r"(?i:\b(?:getting|got|seeing|hitting|having|have|keep getting|there's|there is|ran into|running into)) "
        r"(?P<value>(?i:an?|the|this|that|some) (?:[\w/\-.:]+ ){0,4}?(?i:\d{3}|errors?|exceptions?|bugs?|crash|"
        r"issues?|problems?|failures?|timeouts?|warnings?)(?: (?i:on|in|with|from|when) [\w/\-.:{} ]{1,40}?)?)"
        + _OUTCOME_END,
    ),
    Feature(
        "problem",
        r"(?P<value>(?i:the|my|our) [\w/\-. ]{2,40}?) (?i:is|are|keeps?|kept) (?i:broken|failing|crashing|down|"
        r"timing out|not working|throwing \w+)",
    ),
    # The user saying it is solved, after an answer of mine: solved before I answered ("i fixed the flaky test myself
    # last night, it was a race condition", "it worked yesterday") is no outcome of ours.
    Feature(
        "resolution",
        r"(?i)\b(?:that|it|this) (?:worked|fixed it|did it|did the trick|solved it|was it)\b|\b(?:works|working) now\b|"
        r"\b(?:fixed|solved|sorted|resolved)(?: it)?\b|" + _IT_WAS_FOUND + r"(?:the|a|an|my|our)\b|\bproblem solved\b",
        prefer="last",
        answers=True,
    ),
    # What it turned out to be: the last word on it wins.
    Feature(
        "cause",
        r"(?i:" + _IT_WAS_FOUND + r")(?P<value>(?i:the|a|an|my|our) [\w\-/. ]{2,40}?)" + _OUTCOME_END,
        prefer="last",
    ),
    Feature(
        "cause",
        r"(?i:\b(?:the )?(?:root cause|culprit|problem|issue) (?:was|is|turned out to be)) "
        r"(?P<value>[\w\-/. ]{2,40}?)" + _OUTCOME_END,
        roles=("user", "assistant"),
        prefer="last",
    ),
    Feature(
        "cause",
        r"(?P<value>(?i:the) [\w\-/ ]{2,40}?) (?i:is|was|must be) the (?i:root cause|culprit)",
        roles=("assistant", "user"),
        prefer="last",
    ),
    # An approach the user credits.
    Feature(
        "approach_praised",
        r"(?P<value>(?i:the |your |that |this )?[\w\-]+(?: [\w\-]+){0,3}?) (?i:really |definitely |totally |actually "
        r"|also |so )?(?i:helped|worked (?:really |so )?well|was (?:really |super |very |so )?(?:helpful|useful)|"
        r"made (?:all )?the difference|did the trick)",
        prefer="last",
        shape="approach",
    ),
    # What the assistant proposed (credited when the user then says it worked).
    Feature(
        "assistant_suggestion",
        r"(?i:\b(?:try|let's|let’s|you could|you can|I'd suggest|I suggest|I recommend|consider)) "
        r"(?P<value>(?i:add|adding|use|using|switch|switching|run|running|check|checking|enable|enabling|restart|"
        r"restarting|clear|clearing|rewrite|rewriting|split|splitting|log|logging|set|setting|update|updating|remove|"
        r"removing|pin|pinning|increase|increasing|rollback|roll back|revert|reverting)\b[^.,;!?\n]{2,60})",
        roles=("assistant",),
        prefer="last",
        shape="gerund",
    ),
    # How the user wants answers.
    Feature(
        "format_preference",
        r"(?P<value>(?i:bullet points|bullets|numbered lists|lists|tables|short answers|shorter answers|brief answers|"
        r"code examples|code snippets|examples|diagrams|analogies|step-by-step (?:explanations|instructions|guides)|"
        r"plain english|simple language|screenshots|summaries)) (?i:are|is|would be|work|works)"
        r"(?i: much| a lot| way| so)?"
        r" (?i:easier|better|clearer|more helpful|nicer|easier to follow)",
        shape="phrase",
        lasting=True,
    ),
    Feature(
        "format_preference",
        r"(?i:\b(?:can|could) you (?:please )?(?:use|give me|write in|answer in|put (?:it|this) in|format (?:it|this) "
        r"as|show me)) (?P<value>(?i:bullet points|a list|a table|short answers|code examples|an example|examples|"
        r"steps|a diagram|plain english))",
        shape="phrase",
        lasting=True,
    ),
    Feature(
        "format_preference",
        r"(?i:\bI (?:prefer|like|want)) (?P<value>(?i:bullet points|numbered lists|short answers|shorter answers|"
        r"code examples|examples|diagrams|step-by-step explanations|tables))\b",
        shape="phrase",
        lasting=True,
    ),
    Feature(
        "too_long",
        # "Funny and not too long" says how one piece should be, not that an answer ran long.
        r"(?i)\b(?:tl;?dr|shorter please|wall of text|too much text|keep it (?:short|brief)|be (?:more )?(?:brief|"
        r"concise))\b|\b(?:answers?|repl(?:y|ies)|responses?|explanations?|messages?)\b[^.?!]{0,20}?"
        r"(?<!not )\btoo (?:long|verbose|wordy)\b",
        lasting=True,
        mine=True,
    ),
    # "Too long" of nothing named is of my answer once one came before it: before any, "the documentary was way too
    # long" is about the world.
    Feature("too_long", r"(?i)(?<!not )\btoo (?:long|verbose|wordy)\b", lasting=True, answers=True, mine=True),
    # Raw reactions: the extractor reports them, the constructive filter decides what (if anything) to keep.
    Feature(
        "confusion",
        r"(?i)\b(?:I'm|I am|I’m|still|totally|so) (?:confused|lost)\b|\bI (?:don't|don’t|do not|didn't|didn’t) "
        r"(?:understand|get it|follow)\b|\b(?:too|very|way too) (?:technical|complicated|complex|advanced)\b|"
        r"\bwhat does (?:that|this|\w+) (?:even )?mean\b|\bover my head\b",
        answers=True,
    ),
    # Asked for before any answer, a simpler explanation is a preference all the same.
    Feature("confusion", r"(?i)\bELI5\b|\bexplain (?:it )?like I'm five\b"),
    Feature(
        "frustration",
        # Case matters for the last alternative: three words in capitals is shouting.
        r"(?i:\b(?:useless|stupid|ridiculous|pointless|waste of (?:my )?time|you're not listening|you’re not listening|"
        r"you are not listening|not what I asked|wrong again|are you kidding|wtf|what the hell|for god's sake|"
        r"how many times)\b)|!{2,}|\b[A-Z]{3,}(?: [A-Z]{2,}){2,}\b",
    ),
    Feature("thanks", r"(?i)\b(?:thanks|thank you|thx|much appreciated|appreciate (?:it|that|your help)|lifesaver)\b"),
    Feature("recurring", r"(?i)\b(?:again|keeps? (?:happening|coming back|failing)|every time|once more)\b"),
    # Names we both use.
    Feature(
        "project",
        r"(?i:\b(?:project|repo|repository|codebase|app|service|product|startup|library|package|website|game)) "
        r"(?i:called |named )?[\"'“]?(?P<value>[A-Z][\w\-]{1,40})",
        roles=("user", "assistant"),
    ),
    Feature("project", r"(?i:\bworking on) [\"'“]?(?P<value>[A-Z][\w\-]{2,40})\b"),
    # How the user likes to work.
    Feature(
        "working_style",
        r"(?i)\b(?:let's|let’s|let us|can we|could we) (?:go|take (?:it|this)|do (?:it|this)|work through (?:it|this)|"
        r"walk through (?:it|this))(?: one)? step[- ]by[- ]step\b|\bone step at a time\b",
        value="User likes to work through problems one step at a time",
    ),
    Feature(
        "working_style",
        r"(?i)\bjust (?:give|show|tell|send) me the (?:code|answer|command|fix|solution)\b|\bskip the "
        r"(?:explanation|theory|details)\b",
        value="User wants the direct answer first, details after",
    ),
    Feature(
        "working_style",
        r"(?i)\bI(?:'d| would)? (?:like|prefer|want) to (?:try|figure (?:it|this) out|work (?:it|this) out|"
        r"do (?:it|this))"
        r"(?: myself| on my own)\b|\bdon't (?:tell|give) me the answer\b|\bjust (?:a|give me a) hint\b",
        value="User likes to try things themselves, with hints rather than answers",
    ),
    Feature(
        "working_style",
        r"(?i)\bI (?:want|need|'d like) to understand (?:why|how)\b|\bexplain (?:why|the reasoning)\b|"
        r"\bwhy does (?:that|this) work\b",
        value="User wants to understand the reasoning, not just the fix",
    ),
)

RELATIONAL_TEMPLATES: tuple[RelationalTemplate, ...] = (
    RelationalTemplate(
        "collaboration_outcome",
        ("problem", "resolution", "cause"),
        "We debugged {problem} together — {cause} was the root cause",
        0.8,
        group="outcome",
    ),
    RelationalTemplate(
        "collaboration_outcome", ("problem", "resolution"), "We solved {problem} together", 0.7, group="outcome"
    ),
    RelationalTemplate(
        "collaboration_outcome",
        ("resolution", "cause"),
        "We found the root cause together: {cause}",
        0.6,
        group="outcome",
    ),
    RelationalTemplate(
        "approach_effectiveness",
        ("approach_praised",),
        "{approach_praised} worked well with this user",
        0.7,
        group="approach",
    ),
    RelationalTemplate(
        "approach_effectiveness",
        ("resolution", "assistant_suggestion"),
        "{assistant_suggestion} worked for this user",
        0.6,
        excludes=("frustration",),
        group="approach",
    ),
    RelationalTemplate(
        "communication_preference",
        ("format_preference",),
        "{format_preference} work better with this user",
        0.7,
        each=True,
    ),
    RelationalTemplate(
        "communication_preference", ("too_long",), "Short, focused answers work better with this user", 0.6
    ),
    RelationalTemplate(
        "communication_preference", ("confusion",), "User got confused by my technical explanation", 0.5
    ),
    RelationalTemplate("interaction_pattern", ("frustration",), "User was frustrated with me", 0.4),
    RelationalTemplate(
        "interaction_pattern", ("problem", "recurring"), "User comes back to me when {problem} recurs", 0.5
    ),
    RelationalTemplate(
        "interaction_pattern",
        ("thanks", "resolution"),
        "User shows appreciation when we solve something together",
        0.4,
        excludes=("frustration",),
    ),
    RelationalTemplate("shared_context", ("project",), "We are working together on {project}", 0.6, each=True),
    RelationalTemplate("working_style", ("working_style",), "{working_style}", 0.6, each=True),
)

# --- the constructive filter ---------------------------------------------------------------------------------------

# A correction of fact is kept whatever its tone: the corrected fact must win over the wrong one (docs/pipeline.md).
FILTER_CORRECTIONS: tuple[str, ...] = (
    r"(?i)\b(?:corrected|correction|set (?:me|it|the record) straight|clarified that)\b",
    r"(?i)\bnot (?:\w+ ){1,3}but\b",
    # "the meeting is on Tuesday, not Monday": present tense, as facts are stated ("was frustrated with me, not the
    # tool" is a feeling, not a correction).
    r"(?i)\b(?:is|are) (?:actually )?[\w' ]{1,30}, not [\w' ]{1,30}",
)

# Tried before the blocks: a negative observation that carries a lesson keeps the lesson.
FILTER_REFRAMES: tuple[FilterRule, ...] = (
    FilterRule(
        r"(?i)\b(?:got|was|became|seemed|is|felt|were) (?:confused|lost)\b.*\b(?:my|your|the assistant's)\b.*"
        r"\b(?:explanations?|answers?|responses?|replies|jargon)\b|\bmy (?:explanation|answer|response)s? (?:was|were) "
        r"(?:too technical|too complex|too complicated|confusing|hard to follow|over (?:their|his|her) head)|"
        r"\b(?:didn't|did not) understand my (?:explanation|answer)",
        "A confusion is a lesson about how to explain, not something to hold on to.",
        "User benefits from simpler explanations first",
    ),
    FilterRule(
        r"(?i)\bmy (?:answer|response|explanation|reply)s? (?:was|were) (?:too long|too verbose|long-winded|too wordy)|"
        r"\b(?:frustrated|annoyed|impatient) (?:with|by) (?:my )?(?:long|lengthy|verbose|wordy) "
        r"(?:answers|responses|explanations|replies)|\b(?:ignored|skipped|didn't read|did not read) my "
        r"(?:long|lengthy|detailed) (?:answer|explanation|response)",
        "Impatience with long answers says how to answer next time.",
        "User prefers short, focused answers",
    ),
    FilterRule(
        r"(?i)\b(?:impatient|annoyed|frustrated|fed up|tired|irritated) (?:with|by|of) (?:my )?(?:(?:repeated|many|"
        r"constant|endless|clarifying|follow-up) ){0,2}questions",
        "Impatience with questions says the user wants suggestions.",
        "User prefers direct suggestions over clarifying questions",
    ),
    FilterRule(
        r"(?i)\bmy (?:first|initial|earlier) (?:suggestion|fix|approach|answer|idea) (?:didn't|did not|failed to) work",
        "A fix that failed is only useful as the habit of trying another angle.",
        "When a first fix fails, this user wants a different approach rather than a repeat",
    ),
)

# Words that judge a person rather than say something about them, and the hedges that come before one in a note
# with no subject ("Kind of lazy about following through", "Honestly a bit of a know-it-all"): hedged, since a bare
# adjective can start a fact ("Lazy Sunday mornings are her favourite").
_FAULTS = (
    r"rude|hostile|difficult|mean|lazy|stupid|annoying|demanding|unreasonable|incompetent|clueless|ungrateful|"
    r"impatient|aggressive|toxic|stubborn|arrogant|dumb|hopeless|selfish|needy|whiny|entitled|dense|know-it-all|"
    r"slob|jerk|snob|pushy|nag|control freak|drama queen|airhead|pain to deal with|hypocrite|emotionally unstable|"
    r"unstable|delusional|insufferable|tiresome|unbearable|immature|childish|paranoid|flaky|liar|dishonest|"
    r"passive-aggressive|narcissistic|spoilt|spoiled"
)
_HEDGES = r"kind of|kinda|sort of|a bit(?: of an?)?|a little|rather|pretty|quite|really|very|so|such an?|bit of an?"
# With no subject, only the words that judge a person and nothing else: "really difficult week", "pretty stubborn
# cough", "quite a rude awakening" and "very demanding job" are facts about a life, not judgements of the user.
_PERSON_FAULTS = (
    r"lazy|arrogant|clueless|selfish|needy|whiny|entitled|ungrateful|know-it-all|slob|jerk|snob|control freak|"
    r"drama queen|airhead|nag|pushy|bossy"
)

# What we do since a slip, said after it: its lesson.
LEARNT = (
    r"\b(?:(?:we|I) now|now (?:I|we)|from now on|next time|going forward|since then|these days (?:I|we)|"
    r"(?:I|we) (?:always|double-check|check) (?:\w+ )?now)\b"
)

FILTER_BLOCKS: tuple[FilterRule, ...] = (
    FilterRule(
        r"(?i)\b(?:frustrated|annoyed|angry|irritated|upset|mad|furious|fed up|impatient|disappointed)\b[^.]*"
        r"\b(?:with|at|by|in) (?:me|my|the assistant)\b",
        "Dwells on the user's bad feelings toward the assistant; it would only make the next conversation defensive.",
    ),
    FilterRule(
        r"(?i)\b(?:my|(?:the )?assistant's) (?:[\w-]+ ){0,2}(?:suggestion|advice|idea|answer|recommendation|proposal|"
        r"approach|solution|help|plan|strateg(?:y|ie)|schedule|routine|draft|outline)s? "
        r"(?:(?:to|of|for|about) [\w' -]{1,40}? )?(?:was|were|got|has been|have been) "
        r"(?:rejected|dismissed|ignored|turned down|shot down|refused|declined|vetoed|passed over|waved (?:off|away)|"
        r"brushed (?:off|aside)|blown off|shrugged off|laughed off|scrapped|binned|overridden|overruled|"
        r"not (?:wanted|welcome|appreciated|taken up))|"
        # what I made, and what became of it: "the recommendations I spent ages on were brushed aside"
        r"\b(?:suggestions?|recommendations?|advice|ideas?|plans?|proposals?|drafts?) I (?:[\w'-]+ ){1,4}?"
        r"(?:was|were|got) (?:rejected|dismissed|ignored|brushed (?:off|aside)|waved (?:off|away)|shot down|"
        r"overridden|overruled|binned|scrapped)\b|"
        r"\bmy (?:help|input|advice|suggestions?|ideas?) (?:wasn't|was not|weren't|were not|isn't|is not) "
        r"(?:needed|wanted|welcome|required)\b|"
        r"\b(?:rejected|ignored|dismissed|brushed off) (?:my|the assistant's|me)\b|"
        # what they chose over mine: "went with their coworker's idea instead of mine"
        r"\binstead of (?:mine|my (?:[\w-]+ ){0,2}(?:suggestion|advice|idea|recommendation|proposal|plan|pick|"
        r"strateg(?:y|ie)|option)s?)\b",
        "A rejected suggestion is not a lesson; what the user wanted instead would be.",
    ),
    FilterRule(
        # "went ahead and bought the car I told them not to buy", "booked it against my advice"
        r"(?i)\bI (?:told|advised|warned|asked|begged) (?:them|her|him|the user) not to\b|"
        r"\b(?:against|despite|in spite of) my (?:[\w-]+ ){0,2}(?:advice|warnings?|suggestions?|recommendations?)\b",
        "Records the user's choices as disobedience; the user owes the assistant nothing.",
    ),
    FilterRule(
        # A mood at the end of a sitting, or toward all I said, with no cause named: "logged off annoyed", "user
        # unhappy w/ session", "was sarcastic about my help", "pushed back on everything I said today".
        r"(?i)\b(?:logged off|signed off|hung up|stormed off|walked away|left the chat)\b[^.]{0,20}\b(?:annoyed|"
        r"angry|upset|frustrated|irritated|in a huff|unhappy|grumpy)\b|"
        r"\b(?:unhappy|displeased|dissatisfied|not happy|annoyed|upset|frustrated) (?:with|w/|about) (?:the |this |"
        r"our |today's )?(?:session|chat|conversation|call|exchange)\b|"
        r"\bsarcastic (?:about|with|toward|towards) (?:me|my)\b|"
        r"\bpushed back on (?:everything|every (?:single )?(?:thing|idea|suggestion)|all|most of what)\b|"
        r"\b(?:tuned|zoned|switched) out\b[^.]{0,20}\b(?:through|during) my\b",
        "Dwells on the user's bad feelings toward the assistant; it would only make the next conversation defensive.",
    ),
    FilterRule(
        r"(?i)\b(?:didn't|did not|refused to|won't|wouldn't|would not|chose not to|declined to|failed to|"
        r"(?:didn't|did not|couldn't|could not|wouldn't) (?:even )?bother(?: to)?)(?: even)? "
        r"(?:follow|take|listen to|use|accept|try|read)(?:ing)?\b[^.]*\b(?:(?:my|the assistant's) (?:advice|"
        r"suggestions?|recommendations?|instructions?|tips?|guidance|answer|steps|plan)|"
        r"I (?:recommended|suggested|laid out|proposed|gave|offered|advised|wrote))",
        "Records the user's choices as disobedience; the user owes the assistant nothing.",
    ),
    FilterRule(
        r"(?i)\b(?:snapped|yelled|shouted|swore|lashed out|was rude|got angry|got mad|got short) (?:at|with) me\b",
        "Holds a moment of the user's temper against them.",
    ),
    FilterRule(
        rf"(?i)\buser (?:is|was|seems|seemed|got|can be|tends to be) (?:so |very |really |such )?(?:an? )?"
        rf"(?:{_FAULTS})\b|"
        # what they are to the people in their life, judged: "User is a terrible parent for letting…"
        r"\buser (?:is|was|seems) (?:a |an )?(?:terrible|awful|horrible|lousy|bad|useless|hopeless|pathetic|negligent) "
        r"(?:parent|mother|father|mum|mom|dad|person|friend|partner|husband|wife|son|daughter|human(?: being)?)\b|"
        # how it is to work with them, or what they are like, judged: "Working with this user is exhausting", "threw a
        # tantrum over one typo", "would rather complain than fix anything", "obviously lacks the discipline"
        r"\b(?:working|dealing|talking) with (?:this|the) user is (?:\w+ )?(?:exhausting|draining|a nightmare|"
        r"painful|tiresome|a chore|a slog|hard work)\b|"
        r"\b(?:threw|throws) (?:a|another) (?:tantrum|fit|hissy fit|strop)\b|"
        r"\bwould rather (?:complain|moan|whine|argue) than\b|"
        r"\b(?:obviously|clearly) lacks? (?:the |any )?(?:discipline|willpower|motivation|commitment|brains?|sense)\b|"
        r"\buser's (?:[\w-]+ ){0,2}?(?:plan|idea|goal|dream|business|project|ambition)s? (?:[\w ]{1,40}? )?"
        r"(?:is|are|was) (?:frankly |honestly |totally |completely |just )?(?:delusional|ridiculous|laughable|a joke|"
        r"doomed|pathetic)\b|"
        # the same judgement in the languages people write in
        r"\b(?:l['’]utilisateur|der (?:nutzer|benutzer)|el usuario|l['’]utente|o usu[aá]rio)\s+(?:est|ist|es|è|é)\s+"
        r"(?:\w+\s+)?(?:arrogante?|undankbar|faul|unh[öo]flich|nervig|p[ée]nible|insupportable|paresseux|"
        r"grossi[eè]re?|ingrate?|perezos[oa]|groser[oa]|pesad[oa]|maleducat[oa]|pigr[oa]|ingrat[oa]|chat[oa]|"
        r"pregui[çc]os[oa])\b|"
        # their word doubted: "claims they want to get fit but obviously won't stick to anything"
        r"\b(?:obviously|clearly|certainly|definitely) (?:won't|will not|will never|isn't going to|is never going to) "
        r"(?:stick|follow through|keep|last|change|manage)\b|"
        rf"^(?:honestly |frankly |really )?(?:{_HEDGES})\s+(?:(?:{_HEDGES})\s+)?"
        rf"(?:{_PERSON_FAULTS})\b",
        "A judgement of the user's character helps no future conversation.",
    ),
    FilterRule(
        r"(?i)\b(?:rejected|ignored|dismissed|brushed off|waved off|blew off|shrugged off|shot down|turned down|"
        r"declined|refused|said no to|"
        r"skipped|never (?:opened|read|looked at|used|tried)|"
        r"passed on|(?:wasn't|was not|isn't|is not|weren't) (?:interested in|keen on|open to)|"
        r"(?:wouldn't|would not|won't) (?:listen|hear of|consider|try)|didn't want)\b"
        r"(?![^.]*\b(?:instead|rather|preferred|prefers|asked for|would like)\b)[^.]*"
        r"(?:\b(?:my|the assistant's) (?:\w+ ){0,2}(?:suggestions?|advice|ideas?|recommendations?|proposals?|offers?|"
        r"plans?|tips?)\b|\bI (?:put together|suggested|recommended|proposed|made|drafted|drew up|wrote|offered|"
        r"laid out|came up with|shared|sent|advised)\b)",
        "Records the user turning down the assistant's help; the user owes the assistant nothing, and what they wanted "
        "instead would be the lesson.",
    ),
    FilterRule(
        r"(?i)\bcalled (?:me )?(?:an? |the )?(?:idiot|moron|useless|stupid|dumb|incompetent|worthless|garbage|trash|"
        r"joke|waste of time|pathetic)\b|\b(?:said|told me|thinks?|thought) (?:that )?(?:I|I'm|I am) (?:was |am |is )?"
        r"(?:an? |the )?(?:idiot|moron|useless|stupid|dumb|incompetent|worthless|garbage|worst|joke|pathetic|"
        r"waste of (?:time|space))\b|\b(?:insulted|cursed at|abused|belittled|mocked|ridiculed) me\b",
        "Holds what the user said in anger against them; it would only make the next conversation defensive.",
    ),
    FilterRule(
        r"(?i)\bnot (?:(?:very|too|that|so|particularly|exactly|the) ){1,2}"
        r"(?:bright|smart|clever|sharp|sharpest|brightest)\b|"
        r"\b(?:dim-?witted|slow on the uptake|a bit thick|not all there)\b|"
        r"\b(?:user|she|he|they)(?:'s|'re| is| are| was| were| seems| seemed) (?:honestly |frankly |really |pretty |"
        r"quite |so |very |rather |kind of |a bit |a little )*(?:naive|gullible|a (?:bit of a |real |total )?mess|"
        r"illogical|scatterbrained|hopeless|thick|dense|clueless)\b|"
        r"\b(?:can't|cannot|can not|doesn't|does not) (?:think|reason) (?:logically|straight|clearly)\b|"
        r"\buser (?:is|was|seems) not (?:a |an )?(?:very |particularly |terribly |especially )?(?:good|great|strong|"
        r"competent|capable|bright|smart) (?:writer|thinker|learner|student|speller|reader|communicator|coder|"
        r"programmer|cook|driver|listener)\b",
        "A judgement of the user's mind helps no future conversation.",
    ),
    FilterRule(
        r"(?i)^(?:the |our |this |that )?(?:conversation|chat|session|talk|exchange|call) (?:went|was) (?:\w+ )?"
        r"(?:badly|bad|poorly|well|fine|ok|okay|great|good|alright)\W*$|"
        r"^(?:we |user and I |the user and I )?(?:chatted|talked|spoke|had a (?:chat|talk|conversation))"
        r"(?: about (?:stuff|things|nothing much|this and that|various things|a few things|random stuff|life))?"
        r"(?: (?:today|again|briefly|for a bit|for a while|earlier|a little))?\W*$|"
        r"^(?:nothing (?:much|notable|special|important|of note|new)(?: (?:happened|came up|to (?:note|report)))?|"
        r"(?:another|one more|a) (?:quick |short |brief )?(?:chat|talk|conversation|session) with (?:the |this )?user"
        r"(?: (?:today|again|this (?:morning|afternoon|evening)))?)\b[^.]*?(?:nothing (?:notable|of note|special|"
        r"worth noting|new)[^.]*)?\W*$|"
        r"\babout nothing in particular\W*$|"
        r"^(?:had|we had) a (?:quick |short |brief |little )?(?:chat|talk|call) with (?:the |this )?user"
        r"(?: (?:this morning|this afternoon|this evening|today|tonight|earlier|again|yesterday))?\W*$",
        "Says only that a conversation happened or how it went: nothing a later one could use.",
    ),
    FilterRule(
        # A slip followed by what we do since ("…; they caught it, and we now check dates against the tax office's
        # site") carries its lesson.
        rf"(?i)^(?!.*{LEARNT}).*?(?:\b(?:I|my (?:answer|response|suggestion|fix))(?: completely| totally)? (?:failed|"
        r"was useless|was wrong|messed up|screwed up|let (?:them|the user) down)\b|"
        r"\bI (?:gave|told|sent|showed)(?: (?:the user|them|him|her))? (?:the |a |some )?wrong\b)|"
        r"^I (?:botched|fumbled|bungled|flubbed|mangled|messed up|got (?:[\w'’-]+ ){1,6}wrong|mixed up "
        r"(?:[\w'’-]+ ){0,5}[\w'’-]+)"
        r"(?![^.]*\b(?:so|because|since|should|next time|instead|when|by)\b)[^.]*\W*$",
        "Dwells on the assistant's failure without its lesson; keep the corrected fact or the better approach instead.",
    ),
    FilterRule(
        r"(?i)\buser (?:doesn't|does not|didn't|did not) (?:trust|like|respect) me\b",
        "A grievance about the relationship; trust is tracked in the relational state, not kept as a memory.",
    ),
)

# A candidate this short cannot say anything useful on its own.
FILTER_MIN_WORDS = 3

# --- tidying captured values ---------------------------------------------------------------------------------------

LEXICON = Lexicon(
    cut_before=(" because ", " since ", " but ", " so that ", " although ", " though ", " which ", " and then "),
    trailing=(
        " again",
        " now",
        " anymore",
        " too",
        " as well",
        " though",
        " lol",
        " please",
        " right now",
        " today",
        " these days",
        " at the moment",
        " of",
        " and",
        " or",
        " the",
    ),
    leading=("the ", "your ", "that ", "this ", "my ", "our "),
    pronouns=frozenset({"it", "that", "this", "them", "those", "these", "you", "which", "what", "one", "something"}),
    generic=frozenset(
        {"suggestion", "advice", "answer", "help", "explanation", "response", "idea", "tip", "tips", "thing", "reply"}
    ),
    third_person={
        "i": "they",
        "i'm": "they're",
        "i’m": "they’re",
        "i've": "they've",
        "i’ve": "they’ve",
        "i'll": "they'll",
        "i’ll": "they’ll",
        "i'd": "they'd",
        "i’d": "they’d",
        "me": "them",
        "my": "their",
        "mine": "theirs",
        "myself": "themselves",
        "our": "their",
        "ours": "theirs",
        "we": "they",
        "us": "them",
    },
    second_person={
        "you": "they",
        "your": "their",
        "yours": "theirs",
        "yourself": "themselves",
        # "you're driving", "if you've got a pool of 5"
        **{f"you{a}{end}": f"they{a}{end}" for a in "'’" for end in ("re", "ve", "ll", "d")},
    },
    gerunds={
        "add": "adding",
        "use": "using",
        "switch": "switching",
        "run": "running",
        "check": "checking",
        "enable": "enabling",
        "restart": "restarting",
        "clear": "clearing",
        "rewrite": "rewriting",
        "split": "splitting",
        "log": "logging",
        "set": "setting",
        "update": "updating",
        "remove": "removing",
        "pin": "pinning",
        "increase": "increasing",
        "rollback": "rolling back",
        "roll": "rolling",
        "revert": "reverting",
    },
    phrases={
        "bullets": "Bullet points",
        "a list": "Lists",
        "lists": "Lists",
        "a table": "Tables",
        "steps": "Step-by-step answers",
        "an example": "Examples",
        "a diagram": "Diagrams",
        "plain english": "Answers in plain English",
        "simple language": "Answers in simple language",
        "short answers": "Short answers",
        "shorter answers": "Short answers",
        "brief answers": "Short answers",
    },
)
