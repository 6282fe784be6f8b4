"""Rule-based extraction of relational memories: features found across the exchange, combined by templates."""

from __future__ import annotations

from dataclasses import dataclass

from rapport.domain.models import MessageRole
from rapport.domain.prompts.conversation import ConversationInput, PromptMessage
from rapport.domain.prompts.extract_relational import (
    ExtractedRelationalMemory,
    RelationalExtraction,
    RelationalMemoryKind,
)
from rapport.domain.rules import patterns
from rapport.domain.rules.schema import Feature, RelationalTemplate
from rapport.domain.rules.wording import (
    compiled,
    for_this_once,
    from_assistant,
    gerund,
    sentence_case,
    third_person,
    tidy,
    without_leading,
    without_others_words,
)
from rapport.domain.semantics.matcher import SemanticLayer
from rapport.domain.semantics.relational import with_meaning
from rapport.domain.signals import has_crisis_language

RULE_CONFIDENCE = 0.6
# Which occurrence of a feature fills a template: its first definition decides for all of the same name.
_PREFER = {f.name: f.prefer for f in reversed(patterns.FEATURES)}


@dataclass(frozen=True)
class _Hit:
    value: str
    message_index: int


def extract_relational(
    conversation: ConversationInput, limit: int = 20, semantics: SemanticLayer | None = None
) -> RelationalExtraction:
    """The templates over the patterns' features; with `semantics`, the lessons the patterns missed, by meaning.
    Nothing where people talk among themselves: "we found the cause together" or "how this user likes to work" would
    be about someone else and me."""
    if conversation.among_several():
        return RelationalExtraction(memories=[])
    # A draft to their co-founder that asks for "short updates", or their editor's verdict on their sentences, is no
    # wish of how I answer them.
    conversation = conversation.with_user_texts(without_others_words)
    found = _features(conversation.messages)
    memories: list[ExtractedRelationalMemory] = []
    seen: set[str] = set()
    used_groups: set[str] = set()
    for template in patterns.RELATIONAL_TEMPLATES:
        if template.group in used_groups or not _applies(template, found):
            continue
        for content, evidence in _fill(template, found):
            key = content.lower()
            if key in seen or len(memories) >= limit:
                continue
            seen.add(key)
            memories.append(
                ExtractedRelationalMemory(
                    content=content,
                    type=RelationalMemoryKind(template.type),
                    importance=template.importance,
                    confidence=RULE_CONFIDENCE,
                    evidence=evidence,
                )
            )
        if template.group:
            used_groups.add(template.group)
    if semantics is not None:
        memories = with_meaning(conversation, memories, semantics)[:limit]
    crisis = {m.index for m in conversation.messages if m.role is MessageRole.USER and has_crisis_language(m.content)}
    # A crisis is met by the crisis signal, never kept as a lesson of how we work together ("I cut again last night"
    # is no habit of ours), as the language model's prompt says too.
    memories = [m for m in memories if not crisis.intersection(m.evidence)]
    return RelationalExtraction(memories=memories)


def _features(messages: list[PromptMessage]) -> dict[str, list[_Hit]]:
    found: dict[str, list[_Hit]] = {}
    replied = False  # whether an answer of mine came before this message
    for message in messages:
        for_now = for_this_once(message.content)
        for feature in patterns.FEATURES:
            if message.role.value not in feature.roles or (feature.answers and not replied):
                continue
            if feature.lasting and for_now:
                continue
            for match in compiled(feature.pattern).finditer(message.content):
                if feature.mine and _someone_elses(message.content, match.start()):
                    continue
                value = _value(feature, match.groupdict().get("value") or match.group(0), message.role)
                if value is not None:
                    found.setdefault(feature.name, []).append(_Hit(value, message.index))
        replied = replied or message.role is MessageRole.ASSISTANT
    return found


def _someone_elses(text: str, end: int) -> bool:
    """Whether the sentence, up to `end`, gives what follows to someone else and says nothing of me."""
    start = max(text.rfind(mark, 0, end) for mark in ".!?\n") + 1
    before = text[start:end]
    return bool(compiled(patterns.SOMEONE_ELSES).search(before)) and not compiled(patterns.OF_ME).search(before)


def _value(feature: Feature, raw: str, role: MessageRole) -> str | None:
    if feature.value is not None:
        return feature.value
    lexicon = patterns.LEXICON
    value = tidy(raw, lexicon)
    if value is None:
        return None
    value = third_person(value, lexicon) if role is MessageRole.USER else from_assistant(value, lexicon)
    if feature.shape == "approach":
        value = without_leading(value, lexicon)
        if value.lower() in lexicon.generic or value.lower() in lexicon.pronouns:
            return None
    elif feature.shape == "gerund":
        value = gerund(value, lexicon)
    elif feature.shape == "phrase":
        value = lexicon.phrases.get(value.lower(), value)
    return value


def _applies(template: RelationalTemplate, found: dict[str, list[_Hit]]) -> bool:
    return all(name in found for name in template.requires) and not any(name in found for name in template.excludes)


def _chosen(name: str, found: dict[str, list[_Hit]]) -> _Hit:
    hits = found[name]
    return hits[-1] if _PREFER.get(name) == "last" else hits[0]


def _fill(template: RelationalTemplate, found: dict[str, list[_Hit]]) -> list[tuple[str, list[int]]]:
    fixed = {name: _chosen(name, found) for name in template.requires}
    variants = [fixed]
    if template.each:
        first = template.requires[0]
        distinct = {hit.value.lower(): hit for hit in found[first]}
        variants = [{**fixed, first: hit} for hit in distinct.values()]
    filled: list[tuple[str, list[int]]] = []
    for hits in variants:
        content = sentence_case(template.template.format(**{name: hit.value for name, hit in hits.items()}))
        filled.append((content, sorted({hit.message_index for hit in hits.values()})))
    return filled
