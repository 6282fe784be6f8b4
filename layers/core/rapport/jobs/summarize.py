"""The text of a compact or consolidated memory: written by the language model when one is configured, else
extractive (the members' own sentences). The prompts are here, paired with their response models."""

from __future__ import annotations

import json
from enum import StrEnum

from pydantic import BaseModel, Field

from rapport.domain.lifecycle.compression import extractive_summary
from rapport.domain.models import Domain, Memory
from rapport.errors import UpstreamError
from rapport.ports.language_model import LanguageModel

RULES_MODEL = "rules"  # the rule-based default has no rules for summaries: asking it would only fail


class SummaryMethod(StrEnum):
    LLM = "llm"
    EXTRACTIVE = "extractive"


class CompactSummary(BaseModel):
    summary: str = Field(
        description=(
            "One compact memory that keeps every distinct fact of the memories given, in the same voice "
            "(third person about the user for user memories; 'I'/'we' from the assistant's side for relational "
            "ones). No facts that are not in the memories; no commentary."
        )
    )


class MergedMemory(BaseModel):
    content: str = Field(
        description=(
            "One memory that says what the similar memories given say together: the shared fact or pattern plus "
            "any detail only one of them has. Same voice as the memories; nothing that is not in them."
        )
    )


_COMPRESS_SYSTEM = (
    "You compress an assistant's long-term memory about one person. The memories given have faded; write one "
    "compact memory that keeps what is worth keeping from all of them."
)
_MERGE_SYSTEM = (
    "You consolidate an assistant's memory about one person. The memories given say nearly the same thing; merge "
    "them into one."
)


def _prompt(domain: Domain, memory_type: str, memories: list[Memory]) -> str:
    payload = {
        "domain": domain.value,
        "type": memory_type,
        "memories": [{"content": m.content, "importance": m.importance} for m in memories],
    }
    return json.dumps(payload, ensure_ascii=False)


class Summarizer:
    """Falls back to the extractive text when the model fails, answers nothing usable, or is the rule-based one."""

    def __init__(self, language_model: LanguageModel | None, max_chars: int) -> None:
        usable = language_model is not None and language_model.name != RULES_MODEL
        self._model = language_model if usable else None
        self._max_chars = max_chars

    def compress(self, memories: list[Memory]) -> tuple[str, SummaryMethod]:
        fallback = extractive_summary(memories, self._max_chars)
        if self._model is None:
            return fallback, SummaryMethod.EXTRACTIVE
        try:
            answer = self._model.structured(
                system=_COMPRESS_SYSTEM,
                user=_prompt(memories[0].domain, memories[0].type, memories),
                response_model=CompactSummary,
            )
        except UpstreamError:
            return fallback, SummaryMethod.EXTRACTIVE
        return self._usable(answer.summary, fallback)

    def merge(self, representative: Memory, memories: list[Memory]) -> tuple[str, SummaryMethod]:
        """Extractively, the representative's own words: the members are alike, and the strongest says it best."""
        fallback = representative.content
        if self._model is None:
            return fallback, SummaryMethod.EXTRACTIVE
        try:
            answer = self._model.structured(
                system=_MERGE_SYSTEM,
                user=_prompt(representative.domain, representative.type, memories),
                response_model=MergedMemory,
            )
        except UpstreamError:
            return fallback, SummaryMethod.EXTRACTIVE
        return self._usable(answer.content, fallback)

    def _usable(self, text: str, fallback: str) -> tuple[str, SummaryMethod]:
        text = " ".join(text.split())
        if not text:
            return fallback, SummaryMethod.EXTRACTIVE
        return text[: self._max_chars], SummaryMethod.LLM
