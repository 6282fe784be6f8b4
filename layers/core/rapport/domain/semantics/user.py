"""User memories by meaning: the user's sentences no pattern read, matched to a kind, told in the third person."""

from __future__ import annotations

from rapport.domain.models import MessageRole
from rapport.domain.prompts.conversation import ConversationInput
from rapport.domain.prompts.extract_user import ExtractedUserMemory, UserMemoryKind
from rapport.domain.rules import patterns
from rapport.domain.rules.wording import compiled, sentences
from rapport.domain.semantics.matcher import SemanticLayer
from rapport.domain.semantics.prototypes import USER_KINDS
from rapport.domain.semantics.voice import about_user

_IMPORTANCE = {"fact": 0.7, "preference": 0.6, "event": 0.5, "goal": 0.6}
# What a pattern reads loosely ("I want to …", "I like …"): its sentence must mean a wish or a taste of the user's,
# not a task for this conversation ("I want to write it down properly") or a feeling ("I want to die…").
_LOOSE_KINDS = frozenset({"goal", "preference"})
_MIN_WORDS = 3


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
    for (index, sentence, correction), match in zip(picked, matches, strict=True):
        if match.label is None:
            continue
        kind = USER_KINDS[match.label]
        content = about_user(sentence)
        if not content:
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
