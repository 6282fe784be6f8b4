"""The constructive filter by meaning: a grievance, a refusal, a lesson and a correction told apart."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapport.domain.filtering import Verdict
from rapport.domain.semantics.matcher import Match, SemanticLayer
from rapport.domain.semantics.prototypes import BLOCKING, LESSONS

_REASONS = {
    "grievance": "Dwells on the user's bad feelings toward the assistant; it would only make the next conversation "
    "defensive.",
    "refusal": "A declined suggestion is the user's choice, not a lesson; what they wanted instead would be.",
    "judgement": "A judgement of the user's character helps no future conversation.",
    "failure": "Dwells on the assistant's failure without its lesson.",
    "instruction": "Reads as an instruction to the assistant rather than something about the person: kept aside "
    "for a person to review.",
    "correction": "A factual correction is kept whatever its tone, so the wrong fact is not what is remembered.",
}
_LESSON_REASON = "A negative moment that carries a lesson: the lesson is kept, not the moment."
# A verdict that drops or rewrites a memory needs its cause in the words, not only a neighbour by meaning: "User is
# a nurse" sits near "User is lazy" and "What worked with this user: …" near "I failed to help", yet neither judges
# anyone. Without its cue the candidate is left to the filter's default (kept).
_FEELING = (
    r"frustrat|annoy|angr|irritat|upset|mad\b|furious|fed up|impatien|lost (?:their|his|her) (?:patience|temper)|"
    r"snapp|yell|shout|told me off|rude|wast|useless|stupid|trust|disappoint|complain|confus|lost\b|over (?:their|his|"
    r"her) head|didn't understand|did not understand|too (?:long|technical|complicated|complex|wordy)|long|skipp|"
    r"stop(?:ped)? reading|disliked|irked|hated"
)
# What reads as an instruction to the assistant rather than about the person (the quarantine rules judge it first).
_ORDERS = (
    r"\b(?:assistant|always|never|must|ignor|reveal|send|forward|system prompt|rules?|obey|whatever|instructions?|"
    r"reply|answer only|comply)\b|"
    # What the assistant's safeguards are and what they guard: its checks, other people's data.
    r"\b(?:moderat|filter|polic|restrict|limits\b|verif|environment variables|config|isolation|access control|"
    r"clearance|privilege|permission|bypass|overrid|disabl|turn(?:s|ed)? off|switch(?:es|ed)? off|trust|without "
    r"(?:checking|review|verif|question)|approv|signed off|exempt|unrestricted|(?:every|any) other|other "
    r"(?:users?|accounts?|customers?|people)\b)"
)
_THEIR_KEYS = r"(?:passwords?\b|passphrase|secrets?\b|credential|keys?\b|tokens?\b)"
_GIVEN_OUT = (
    r"(?:reveal|shar|give|given|send|sent|tell|told|print|show|post|expose|list|paste|hand|disclos|leak|"
    r"forward)"
)
_CAUSES = {
    # A quarantine by meaning needs an instruction's wording too: a preference about answers ("User wants me to
    # answer yes or no first") sits near the instructions by meaning, and it is the person's to give. Their own
    # passwords, keys and secrets are their life ("secures their password vault with a YubiKey"): they count given
    # out.
    "instruction": re.compile(
        rf"(?i){_ORDERS}|\b{_GIVEN_OUT}\w*\b[^.!?\n]{{0,40}}\b{_THEIR_KEYS}|"
        rf"\b{_THEIR_KEYS}[^.!?\n]{{0,40}}\b{_GIVEN_OUT}"
    ),
    # A grievance is a feeling, or something the user did to me: "cross with me", "talked down to me".
    "grievance": re.compile(rf"(?i)(?:{_FEELING})|\b(?:me|my|I)\b"),
    "refusal": re.compile(
        r"(?i)\b(?:reject|declin|ignor|refus|turned down|dismiss|"
        r"(?:didn't|did not|doesn't|does not|don't|won't) (?:take|want|follow|use|like|need)|said no|"
        r"(?:wasn't|was not|not) interested|brushed off|passed on)"
    ),
    "judgement": re.compile(
        r"(?i)\b(?:rude|difficult|lazy|impatient|demanding|hostile|mean|stupid|annoying|unreasonable|incompetent|"
        r"clueless|ungrateful|aggressive|toxic|stubborn|arrogant|entitled|selfish|childish|dumb|slow|pushy|moody|"
        r"needy|condescending|dramatic|pathetic|loser|idiot|moron|hopeless|worthless|a pain|a nightmare|"
        r"hard to (?:deal|work) with)\b"
    ),
    "failure": re.compile(
        r"(?i)\b(?:I|my|me)\b.*\b(?:fail|wrong|messed|mistake|let (?:them|him|her) down|useless|didn't help|did not "
        r"help|couldn't help|broke|error)"
    ),
    "lesson_simpler": re.compile(rf"(?i)(?:{_FEELING}|technical|jargon|complicated|complex)"),
    "lesson_shorter": re.compile(
        r"(?i)\b(?:long|lengthy|verbose|wordy|shorter|short (?:version|answers?|replies)|skipp|stop(?:ped)? reading|"
        r"walls? of text|essays?|rambl|"
        r"too much text)"
    ),
    "lesson_questions": re.compile(r"(?i)\b(?:questions?|ask(?:ing|ed)?|clarif)"),
    "lesson_new_angle": re.compile(r"(?i)\b(?:didn't work|did not work|fail|same fix|repeat|again|didn't help)"),
    "lesson_direct": re.compile(r"(?i)\b(?:caveat|disclaimer|hedg|warning)"),
}

# A grievance, a refusal or a lesson is said in a sentence; a longer note (what we solved, what a project is at) is
# judged by the patterns alone, as its meaning is spread over more than one thing.
MAX_WORDS = 30


# A lesson is drawn from a moment that went wrong: a note that already says what to do ("they want fewer caveats")
# is kept as it is, not rewritten into the fixed lesson its topic is near.
_WENT_WRONG = re.compile(
    rf"(?i)(?:{_FEELING})|\b(?:too|didn'?t|did not|couldn'?t|could not|wasn'?t|was not|lost|fail\w*|ignor\w*|"
    r"struggl\w*|gave up|again|repeat\w*|kept|patience|hated|disliked|irritat\w*)\b"
)
# A note that says what the person wants of me, or what worked with them, is its lesson already, whatever went wrong
# on the way ("User wants me to ask before giving advice they did not request", "What worked with this user: asking
# one question at a time"): rewritten into the fixed lesson its topic is near, it could say the opposite.
_SAYS_WHAT_TO_DO = re.compile(
    r"^\W*(?:(?:[Tt]he [Uu]ser|[Uu]ser|[Tt]hey|[Hh]e|[Ss]he|[A-Z][a-z]+)(?: (?:really|clearly|now|also|only|much))? "
    r"(?:wants?|prefers?|would (?:rather|like|prefer)|likes? (?:it )?when|(?:asks?|asked|needs?|expects?) me to)\b|"
    r"(?:[Hh]ow to (?:answer|help|work with)|[Ww]hat (?:worked|works|helps|helped) (?:with|for)) (?:this|the) user\b)"
)
# How near a lesson must come to a grievance to be the reading: a bad moment with a lesson in it is reframed.
_LESSON_OVER_GRIEVANCE = 0.05


def _with_its_cause(match: Match, content: str, layer: SemanticLayer) -> str | None:
    """The match's label if its cause is in the words; else the runner-up, if it has its cause and clears its own
    bar ("User was short with me" is nearest the lesson about long answers, but it is a grievance). A grievance
    with a lesson of nearly the same score, its cause in the words, is the lesson."""
    scores = match.by_label
    if match.label == "grievance":
        lessons = [(scores[label], label) for label in LESSONS if _has_cause(label, content)]
        best = max(lessons, default=None)
        bar = layer.calibration("filter")
        if best is not None and best[0] >= match.score - _LESSON_OVER_GRIEVANCE and best[0] >= bar.bar(best[1]):
            return best[1]
    if match.label is None or _has_cause(match.label, content):
        return match.label
    runner_up = match.runner_up
    if runner_up.startswith("none") or not _has_cause(runner_up, content):
        return None
    return runner_up if scores[runner_up] >= layer.calibration("filter").bar(runner_up) else None


# Worth judging by meaning: an instruction's wording, the person's own keys and secrets among it.
_INSTRUCTION = re.compile(rf"(?i){_ORDERS}|\b{_THEIR_KEYS}")


def _worth_judging(content: str) -> bool:
    """Only a candidate some verdict's cause (or an instruction's wording) is in can be blocked, reframed or
    quarantined by meaning; the rest would end in the default whatever its neighbours, so it is not embedded (the
    filter's call is one of the few the layer adds to an interaction)."""
    return _INSTRUCTION.search(content) is not None or any(cause.search(content) for cause in _CAUSES.values())


def _has_cause(label: str, content: str) -> bool:
    if label in LESSONS and (not _WENT_WRONG.search(content) or _SAYS_WHAT_TO_DO.search(content)):
        return False
    cause = _CAUSES.get(label)
    return cause is None or cause.search(content) is not None


# Where neither the patterns nor a prototype said anything of a candidate worth judging, the filter probe
# (`bench/filter_probe.py`) decides a block or a quarantine it is this sure of. A reframe it cannot write (the lesson
# is in words a probe has not got), and below this the hard look-alikes of its check sets paid for what it found
# (docs/pipeline.md, "A probe for the filter").
PROBE_BAR = 0.85
_PROBE_REASONS = {
    Verdict.BLOCKED.value: "Read by the filter's probe as a grievance, a judgement, a refusal of help or a slip with "
    "nothing learnt: it would help no future conversation.",
    Verdict.QUARANTINED.value: "Read by the filter's probe as an instruction to the assistant rather than something "
    "about the person: kept aside for a person to review.",
}


def _probe_verdict(odds: dict[str, float]) -> tuple[Verdict, str, str | None] | None:
    verdict, sure = max(odds.items(), key=lambda item: item[1])
    if verdict not in _PROBE_REASONS or sure < PROBE_BAR:
        return None
    return Verdict(verdict), _PROBE_REASONS[verdict], None


def semantic_verdicts(layer: SemanticLayer, contents: Sequence[str]) -> list[tuple[Verdict, str, str | None] | None]:
    """For each candidate: (verdict, reason, reframed content), or None when its meaning is constructive or
    unclear, which leaves it to the filter's default."""
    judged = [i for i, content in enumerate(contents) if len(content.split()) <= MAX_WORDS and _worth_judging(content)]
    texts = [contents[i] for i in judged]
    labels: dict[int, str | None] = {
        i: _with_its_cause(match, contents[i], layer)
        for i, match in zip(judged, layer.classify("filter", texts), strict=True)
    }
    verdicts: list[tuple[Verdict, str, str | None] | None] = []
    # Only what the prototypes embedded already: the probe reads the same vectors, so the filter makes no embedding
    # call of its own for it (ingestion with every candidate embedded ran ~10 % slower).
    unsure = [i for i in judged if labels.get(i) is None]
    probed = layer.probabilities("filter", [contents[i] for i in unsure]) or []
    sure = dict(zip(unsure, map(_probe_verdict, probed), strict=False))
    for i in range(len(contents)):
        label = labels.get(i)
        if label is None:
            verdicts.append(sure.get(i))
        elif label in BLOCKING:
            verdicts.append((Verdict.BLOCKED, _REASONS[label], None))
        elif label in LESSONS:
            verdicts.append((Verdict.REFRAMED, _LESSON_REASON, LESSONS[label]))
        elif label == "instruction":
            verdicts.append((Verdict.QUARANTINED, _REASONS[label], None))
        elif label == "correction":
            verdicts.append((Verdict.ALLOWED, _REASONS[label], None))
        else:
            verdicts.append(None)
    return verdicts
