"""Rule-based extraction of user memories: sentence rules over the user's messages, and situations over the whole."""

from __future__ import annotations

from rapport.domain.models import MessageRole
from rapport.domain.prompts.conversation import ConversationInput, PromptMessage
from rapport.domain.prompts.extract_user import ExtractedUserMemory, UserExtraction, UserMemoryKind
from rapport.domain.rules import patterns
from rapport.domain.rules.schema import FactRule, Situation
from rapport.domain.rules.wording import (
    compiled,
    sentence_case,
    sentences,
    squeeze,
    starts_with_any,
    third_person,
    tidy,
)

# Patterns match surface forms only; a model would be surer. The pipeline records which model extracted a memory.
RULE_CONFIDENCE = 0.6
SITUATION_CONFIDENCE = 0.5


def extract_user(conversation: ConversationInput, limit: int = 20) -> UserExtraction:
    user_messages = [m for m in conversation.messages if m.role is MessageRole.USER]
    memories: list[ExtractedUserMemory] = []
    seen: set[str] = set()

    def add(memory: ExtractedUserMemory) -> None:
        key = memory.content.lower()
        if key not in seen and len(memories) < limit:
            seen.add(key)
            memories.append(memory)

    for message in user_messages:
        correction = any(compiled(cue).search(message.content) for cue in patterns.CORRECTION_CUES)
        for sentence in sentences(message.content):
            for rule in patterns.USER_FACTS:
                for content in _apply(rule, sentence):
                    add(
                        ExtractedUserMemory(
                            content=content,
                            type=UserMemoryKind(rule.type),
                            importance=rule.importance,
                            confidence=RULE_CONFIDENCE,
                            slot=rule.slot,
                            correction=correction,
                            evidence=[message.index],
                        )
                    )
    for situation in patterns.SITUATIONS:
        memory = _situation(situation, user_messages)
        if memory is not None:
            add(memory)
    return UserExtraction(memories=memories)


def _apply(rule: FactRule, sentence: str) -> list[str]:
    found: list[str] = []
    for match in compiled(rule.pattern).finditer(sentence):
        values: dict[str, str] = {}
        for name, raw in match.groupdict().items():
            if raw is None:
                values[name] = ""
                continue
            value = tidy(raw, patterns.LEXICON)
            if value is None or starts_with_any(value, rule.reject):
                break
            values[name] = third_person(value, patterns.LEXICON)
        else:
            found.append(sentence_case(squeeze(rule.template.format(**values))))
    return found


def _situation(situation: Situation, messages: list[PromptMessage]) -> ExtractedUserMemory | None:
    evidence = [m.index for m in messages if any(compiled(trigger).search(m.content) for trigger in situation.triggers)]
    if not evidence:
        return None
    text = "\n".join(m.content for m in messages)
    thing = next((phrase for pattern, phrase in situation.objects if compiled(pattern).search(text)), None)
    setting = next((phrase for pattern, phrase in situation.settings if compiled(pattern).search(text)), "")
    content = situation.template.format(object=thing or situation.default_object, setting=setting)
    return ExtractedUserMemory(
        content=sentence_case(content),
        type=UserMemoryKind(situation.type),
        importance=situation.importance,
        confidence=SITUATION_CONFIDENCE,
        evidence=evidence,
    )
