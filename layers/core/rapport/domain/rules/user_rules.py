"""Rule-based extraction of user memories: sentence rules over the user's messages, and situations over the whole."""

from __future__ import annotations

import re

from rapport.domain.models import MessageRole
from rapport.domain.prompts.conversation import ConversationInput, PromptMessage
from rapport.domain.prompts.extract_user import ExtractedUserMemory, UserExtraction, UserMemoryKind
from rapport.domain.rules import patterns
from rapport.domain.rules.schema import FactRule, Situation
from rapport.domain.rules.wording import (
    compiled,
    kept_values,
    sentence_case,
    sentences,
    squeeze,
    third_person,
    without_quotes_asked_about,
)
from rapport.domain.semantics.matcher import SemanticLayer
from rapport.domain.semantics.user import patterns_text, typed_in_full, user_memories, vetted

# Patterns match surface forms only; a model would be surer. The pipeline records which model extracted a memory.
RULE_CONFIDENCE = 0.6
SITUATION_CONFIDENCE = 0.5


def extract_user(
    conversation: ConversationInput, limit: int = 20, semantics: SemanticLayer | None = None
) -> UserExtraction:
    """Patterns over each sentence, then situations; with `semantics`, the sentences no pattern read, by meaning,
    where the conversation is with one person: among several, a sentence read by its meaning alone ("User says: …")
    would be filed as the user's whoever said it, where a pattern's name, employer or date is the speaker's own."""
    conversation = conversation.with_user_texts(without_quotes_asked_about)  # a review to summarise is not theirs
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
        for typed in sentences(message.content):
            sentence = typed_in_full(typed)
            supposed = _supposed_until(sentence)
            for rule in patterns.USER_FACTS:
                for content, replaces in _apply(rule, patterns_text(rule, sentence), supposed):
                    add(
                        ExtractedUserMemory(
                            content=content,
                            type=UserMemoryKind(rule.type),
                            importance=rule.importance,
                            confidence=RULE_CONFIDENCE,
                            slot=rule.slot,
                            correction=correction,
                            replaces=replaces,
                            change=_said(sentence) if replaces else None,
                            evidence=[message.index],
                        )
                    )
    for situation in patterns.SITUATIONS:
        memory = _situation(situation, user_messages)
        if memory is not None:
            add(memory)
    if semantics is not None:
        memories[:] = vetted(conversation, memories, semantics)
        if not conversation.among_several():
            for memory in user_memories(conversation, semantics):
                add(memory)
    return UserExtraction(memories=memories)


# The group of an update rule that names the value which stopped being true (patterns.FACT_UPDATES).
_OLD_VALUE = "old"
_VERB = "verb"
_LEADING_GERUND = re.compile(r"^[a-z]+ing\s+(?=\S)")
_MAX_CHANGE_CHARS = 200


def _apply(rule: FactRule, sentence: str, supposed: int) -> list[tuple[str, str | None]]:
    """The memories the rule finds in the sentence, each with the earlier value it says is no longer true; none in
    the condition or supposition it opens with, which ends at `supposed` (`_supposed_until`)."""
    found: list[tuple[str, str | None]] = []
    for match in compiled(rule.pattern).finditer(sentence):
        if match.start() < supposed:
            continue
        kept = kept_values(rule, match)
        if kept is None:
            continue
        values = {name: third_person(value, patterns.LEXICON) if value else "" for name, value in kept.items()}
        if _VERB in values:
            values[_VERB] = _third_person_verb(values[_VERB])
        replaces = _replaced_value(values.get(_OLD_VALUE, ""))
        found.append((sentence_case(squeeze(rule.template.format(**values))), replaces))
    return found


def _supposed_until(sentence: str) -> int:
    """Where the condition or supposition the sentence opens with ends (`patterns.SUPPOSED`: "Say I moved to Norway
    next year, …"): at its first comma, or the sentence's end; 0 when it opens with none. A sentence that opens so
    has no "I" for `patterns_text` to put back, so the offset holds in the text a pattern reads."""
    supposed = compiled(patterns.SUPPOSED)
    if supposed.match(sentence) is None:
        return 0
    comma = sentence.find(",")
    # "Hypothetically, if I moved to Japan, would…": a supposition that opens another runs to the end of that one.
    while comma >= 0 and supposed.match(sentence[comma + 1 :]) is not None:
        comma = sentence.find(",", comma + 1)
    return len(sentence) if comma < 0 else comma


def _replaced_value(old: str) -> str | None:
    """What to look for in the memories an update retires: "using Slack" is stated as "User uses Slack", so a
    leading gerund goes."""
    value = _LEADING_GERUND.sub("", old.strip())
    return value or None


def _third_person_verb(verb: str) -> str:
    """ "use" -> "uses", "watch" -> "watches", "go to" -> "goes to": the first word, conjugated."""
    first, _, rest = verb.partition(" ")
    irregular = {"do": "does", "go": "goes", "have": "has"}
    if first in irregular:
        conjugated = irregular[first]
    elif first.endswith(("s", "sh", "ch", "x", "z")):
        conjugated = first + "es"
    else:
        conjugated = first + "s"
    return f"{conjugated} {rest}".strip()


def _said(sentence: str) -> str:
    """The reason an update gives the fact it retires: the user's own words."""
    words = squeeze(sentence)
    if len(words) > _MAX_CHANGE_CHARS:
        words = words[: _MAX_CHANGE_CHARS - 1] + "…"
    return f'the user said: "{words}"'


def _situation(situation: Situation, messages: list[PromptMessage]) -> ExtractedUserMemory | None:
    evidence = [m.index for m in messages if any(compiled(trigger).search(m.content) for trigger in situation.triggers)]
    if not evidence:
        return None
    text = "\n".join(m.content for m in messages)
    thing = _named(situation, text) or next(
        (phrase for pattern, phrase in situation.objects if compiled(pattern).search(text)), None
    )
    if thing is None:
        return None
    setting = next((phrase for pattern, phrase in situation.settings if compiled(pattern).search(text)), "")
    content = situation.template.format(object=thing, setting=setting)
    return ExtractedUserMemory(
        content=sentence_case(content),
        type=UserMemoryKind(situation.type),
        importance=situation.importance,
        confidence=SITUATION_CONFIDENCE,
        evidence=evidence,
    )


def _named(situation: Situation, text: str) -> str | None:
    """The situation's object as the user named it ("our checkout service" -> "their checkout service")."""
    if situation.named is None:
        return None
    match = compiled(situation.named).search(text)
    if match is None:
        return None
    determiner, _, rest = squeeze(match["thing"]).partition(" ")
    return third_person(f"{determiner.lower()} {rest}", patterns.LEXICON)
