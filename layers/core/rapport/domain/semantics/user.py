"""User memories by meaning: the user's sentences no pattern read, matched to a kind, told in the third person."""

from __future__ import annotations

import re

from rapport.domain.models import MessageRole
from rapport.domain.prompts.conversation import ConversationInput
from rapport.domain.prompts.extract_user import ExtractedUserMemory, UserMemoryKind
from rapport.domain.rules import patterns
from rapport.domain.rules.wording import compiled, sentences
from rapport.domain.semantics.matcher import Calibration, Match, SemanticLayer
from rapport.domain.semantics.prototypes import USER_KINDS
from rapport.domain.semantics.voice import about_user

_IMPORTANCE = {"fact": 0.7, "preference": 0.6, "event": 0.5, "goal": 0.6}
# What a pattern reads loosely ("I want to …", "I like …"): its sentence must mean a wish or a taste of the user's,
# not a task for this conversation ("I want to write it down properly") or a feeling ("I want to die…").
_LOOSE_KINDS = frozenset({"goal", "preference"})
_MIN_WORDS = 3
# A taste or an aim is said with its word ("love", "can't stand", "my thing"; "want to", "aiming", "saving up"):
# "I speak Portuguese" sits near "I want to learn a language", and is a fact.
_KIND_EVIDENCE = {
    "preference": re.compile(
        r"(?i)\b(?:lov(?:e|ed|ing)|like|likes|enjoy\w*|prefer\w*|hate|hated|dislike\w*|can'?t stand|cannot stand|fan|"
        r"into|favou?rite|my thing|rather|over|always|never|adore|obsessed|passion\w*|big on|not big on|crazy about|"
        r"no sugar|black|fond|keen)\b"
    ),
    "goal": re.compile(
        r"(?i)\b(?:want(?:s|ed)? to|wanna|hop(?:e|ing) to|goal|aim\w*|plan(?:ning)? to|my plan|trying to|try to|"
        r"saving (?:up )?(?:to|for)|training for|learning|would love to|'d love to|'d like to|would like to|dream\w*|"
        r"one day|some ?day|by (?:the end|next|summer|spring|winter|autumn|fall)|working towards?|resolution)\b"
    ),
}
# Someone else's news is not the user's: "my sister's boyfriend failed his exam".
_SOMEONE_ELSE = re.compile(
    r"(?i)^\W*(?:my|our)\s+(?:[\w-]+\s+){0,2}?(?:friend|colleague|co-?worker|boss|manager|sister|brother|mum|mom|dad|"
    r"mother|father|wife|husband|partner|son|daughter|kid|girlfriend|boyfriend|neighbou?r|cousin|aunt|uncle|"
    r"grand\w+|parents?)(?:'s|’s)\s+\w+"
)
# A fact about the user starts from them ("I…", "my…"); "and here's one of the agencies they are looking into" or
# "[shares a photo: …]" is none. An event is often told without ("Tomorrow is the big day, my operation").
_NOT_OF_THEMSELVES = "User says:"
# Words to me about this conversation ("the quiz you gave me helped") are relational, not about the user's life.
_TO_ME = re.compile(
    r"(?i)\b(?:you|your|u|ur|yours)\b|^\W*(?:please|pls|just|rather than|instead|don'?t|do not|stop|keep|give|tell|"
    r"show|make|let'?s|can|could|would)\b"
)


def user_memories(conversation: ConversationInput, layer: SemanticLayer) -> list[ExtractedUserMemory]:
    """Only sentences the patterns leave alone: a pattern that read a sentence (a name, an employer, a date) is
    surer than a neighbour by meaning, and a problem report is the debugging situation's to describe."""
    picked: list[tuple[int, str, bool]] = []
    for message in conversation.messages:
        if message.role is not MessageRole.USER:
            continue
        correction = any(compiled(cue).search(message.content) for cue in patterns.CORRECTION_CUES)
        for sentence in sentences(message.content):
            if _left_to_patterns(sentence):
                continue
            picked.append((message.index, sentence, correction))
    matches = layer.classify("user", [sentence for _, sentence, _ in picked])
    memories: list[ExtractedUserMemory] = []
    scores = layer.scores("user", [sentence for _, sentence, _ in picked])
    bar = layer.calibration("user")
    for (index, sentence, correction), match, by_label in zip(picked, matches, scores, strict=True):
        label = _evidenced_label(match, by_label, sentence, bar)
        if label is None or _TO_ME.search(sentence) or _SOMEONE_ELSE.search(sentence):
            continue
        kind = USER_KINDS[label]
        content = about_user(sentence)
        if not content or (kind == "fact" and content.startswith(_NOT_OF_THEMSELVES)):
            continue
        memories.append(
            ExtractedUserMemory(
                content=content,
                type=UserMemoryKind(kind),
                importance=_IMPORTANCE[kind],
                confidence=round(min(max(match.score, 0.0), 1.0), 3),
                correction=correction,
                evidence=[index],
            )
        )
    return memories


def _evidenced_label(match: Match, by_label: dict[str, float], sentence: str, calibration: Calibration) -> str | None:
    """The match's kind when its words carry it; else the next kind that does and still clears its bar by the margin
    over every `none_*` label ("I speak Portuguese" nearest a goal, and a fact). A taste or an aim whose own words
    are there needs its margin over keeping nothing only, not over a fact it is near ("I'd love to be fluent")."""
    best_none = max((v for k, v in by_label.items() if k.startswith("none")), default=0.0)
    nearest = match.nearest
    if match.label is None:
        words = _KIND_EVIDENCE.get(nearest)
        said = words is not None and words.search(sentence) is not None
        clears = match.score >= calibration.bar(nearest) and match.score - best_none >= calibration.margin
        return nearest if said and clears else None
    needed = _KIND_EVIDENCE.get(match.label)
    if needed is None or needed.search(sentence):
        return match.label
    for label, score in sorted(by_label.items(), key=lambda item: item[1], reverse=True):
        if label.startswith("none") or label == match.label:
            continue
        evidence = _KIND_EVIDENCE.get(label)
        if score < calibration.bar(label) or score - best_none < calibration.margin:
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
    matches = layer.classify("user", [source for _, source in checked])
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


def _left_to_patterns(sentence: str) -> bool:
    stripped = sentence.strip()
    if len(stripped.split()) < _MIN_WORDS or stripped.endswith("?"):
        return True
    if any(compiled(rule.pattern).search(stripped) for rule in patterns.USER_FACTS):
        return True
    return any(compiled(trigger).search(stripped) for s in patterns.SITUATIONS for trigger in s.triggers)
