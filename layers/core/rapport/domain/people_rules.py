"""The rule data of people extraction: words for kin and roles, and capitalised words that are never names."""

from __future__ import annotations

# Role word (lower case, as the user writes it) -> the role we store. Multi-word roles are matched first.
ROLE_WORDS: dict[str, str] = {
    # family
    "mom": "mother",
    "mum": "mother",
    "mommy": "mother",
    "mother": "mother",
    "dad": "father",
    "daddy": "father",
    "father": "father",
    "stepmom": "stepmother",
    "stepmother": "stepmother",
    "stepdad": "stepfather",
    "stepfather": "stepfather",
    "wife": "wife",
    "husband": "husband",
    "partner": "partner",
    "boyfriend": "boyfriend",
    "girlfriend": "girlfriend",
    "fiance": "fiance",
    "fiancé": "fiance",
    "fiancee": "fiance",
    "fiancée": "fiance",
    "ex": "ex",
    "son": "son",
    "daughter": "daughter",
    "sister": "sister",
    "brother": "brother",
    "grandma": "grandmother",
    "granny": "grandmother",
    "grandmother": "grandmother",
    "grandpa": "grandfather",
    "grandfather": "grandfather",
    "aunt": "aunt",
    "uncle": "uncle",
    "cousin": "cousin",
    "niece": "niece",
    "nephew": "nephew",
    "mother-in-law": "mother-in-law",
    "father-in-law": "father-in-law",
    # work and school
    "boss": "boss",
    "manager": "manager",
    "supervisor": "supervisor",
    "team lead": "team lead",
    "tech lead": "team lead",
    "coworker": "colleague",
    "co-worker": "colleague",
    "colleague": "colleague",
    "teammate": "teammate",
    "client": "client",
    "mentor": "mentor",
    "teacher": "teacher",
    "professor": "professor",
    "coach": "coach",
    # others
    "friend": "friend",
    "best friend": "best friend",
    "roommate": "roommate",
    "flatmate": "roommate",
    "neighbor": "neighbour",
    "neighbour": "neighbour",
    "therapist": "therapist",
    "doctor": "doctor",
    "landlord": "landlord",
    "landlady": "landlord",
}

# Roles a person usually has one of: "my mom" and "my mom Linda" are the same person, so an unnamed mention of
# one of these joins the named one. "My friend" could be anyone, so those stay apart.
UNIQUE_ROLES = frozenset(
    {
        "mother",
        "father",
        "stepmother",
        "stepfather",
        "wife",
        "husband",
        "partner",
        "boyfriend",
        "girlfriend",
        "fiance",
        "boss",
        "manager",
        "supervisor",
        "team lead",
        "therapist",
        "landlord",
        "mother-in-law",
        "father-in-law",
    }
)

# Third-person pronouns that can refer back to a person named in an earlier sentence ("my boss moved the deadline
# again. I'm so fed up with him."), by the gender they imply. "They" is left out: it refers to things and groups as
# often as to one person, and a feeling attributed to the wrong one is worse than none.
PRONOUNS: dict[str, str] = {
    "he": "male",
    "him": "male",
    "his": "male",
    "himself": "male",
    "she": "female",
    "her": "female",
    "hers": "female",
    "herself": "female",
}

# The gender a role implies, for matching a pronoun to it; roles not listed (boss, friend, doctor…) fit either.
ROLE_GENDER: dict[str, str] = {
    "mother": "female",
    "stepmother": "female",
    "wife": "female",
    "girlfriend": "female",
    "daughter": "female",
    "sister": "female",
    "grandmother": "female",
    "aunt": "female",
    "niece": "female",
    "mother-in-law": "female",
    "father": "male",
    "stepfather": "male",
    "husband": "male",
    "boyfriend": "male",
    "son": "male",
    "brother": "male",
    "grandfather": "male",
    "uncle": "male",
    "nephew": "male",
    "father-in-law": "male",
}

# How many sentences on a pronoun may still refer back to the person last named; past that, a "he" is too far from
# its person to be sure of.
PRONOUN_REACH = 2

# Words that introduce the user's own people.
POSSESSIVES = ("my", "our")

# Capitalised words that follow a role word without being a name ("my boss Today said…" is rare; "my mom I think"
# is not).
NOT_NAMES = frozenset(
    {
        "i",
        "i'm",
        "i've",
        "i'd",
        "i'll",
        "the",
        "a",
        "an",
        "and",
        "but",
        "or",
        "so",
        "if",
        "he",
        "she",
        "they",
        "we",
        "you",
        "it",
        "this",
        "that",
        "my",
        "our",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "today",
        "tomorrow",
        "yesterday",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "christmas",
        "ok",
        "okay",
        "yes",
        "no",
        "also",
        "again",
        "just",
        "still",
        # interjections that open a sentence before an address ("Thanks, my friend")
        "thanks",
        "thank",
        "anyway",
        "honestly",
        "well",
        "hey",
        "hi",
        "hello",
        "sorry",
        "yeah",
        "oh",
        "btw",
        "please",
        "love",
        # verbs that open a sentence before a name ("Tell Sarah, my boss, …")
        "tell",
        "ask",
        "call",
        "text",
        "email",
        "meet",
        "see",
        "visit",
        "remind",
        "invite",
        "help",
    }
)

# A fact is what the user said about the person, cut to this length.
MAX_FACT_CHARS = 280
