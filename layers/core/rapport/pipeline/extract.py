"""Step 2, extract (twice, in parallel): user memories and relational memories, each from its own prompt."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from rapport.domain.models import TYPES_BY_DOMAIN, Domain, Interaction
from rapport.domain.prompts import extract_relational as relational_prompt
from rapport.domain.prompts import extract_user as user_prompt
from rapport.domain.prompts import payload
from rapport.domain.prompts.conversation import ConversationInput
from rapport.domain.quarantine import withheld_messages
from rapport.pipeline.asking import ask
from rapport.ports.language_model import LanguageModel
from rapport.ports.pipeline import Candidate, ExtractionResult, PipelineState
from rapport.ports.store import MemoryStore
from rapport.settings import Settings


def user_candidate(m: Any) -> Candidate:
    """A user memory the extraction answered, as the filter step takes it."""
    return Candidate(
        domain=Domain.USER,
        type=m.type.value,
        content=m.content,
        importance=m.importance,
        confidence=m.confidence,
        slot=_slot(m.slot),
        correction=m.correction,
        replaces=_short(m.replaces, _MAX_REPLACED_CHARS),
        change=_short(m.change, _MAX_CHANGE_CHARS),
        evidence=m.evidence,
    )


def relational_candidate(m: Any) -> Candidate:
    """A relational memory the extraction answered, as the filter step takes it."""
    return Candidate(
        domain=Domain.RELATIONAL,
        type=m.type.value,
        content=m.content,
        importance=m.importance,
        confidence=m.confidence,
        evidence=m.evidence,
    )


class Extract:
    """`fallback` stands in when `model` twice answers with output that does not validate; None when `model` is
    the rules."""

    def __init__(
        self, model: LanguageModel, fallback: LanguageModel | None, store: MemoryStore, settings: Settings
    ) -> None:
        self.model = model
        self.fallback = fallback
        self._store = store
        self._settings = settings

    def user(self, state: PipelineState, interaction: Interaction | None = None) -> ExtractionResult:
        """`interaction`: the one the run has read already (in process); read from the store when not given."""
        return self._extract(
            state,
            interaction,
            Domain.USER,
            user_prompt.SYSTEM,
            user_prompt.TASK,
            user_prompt.UserExtraction,
            user_candidate,
        )

    def relational(self, state: PipelineState, interaction: Interaction | None = None) -> ExtractionResult:
        return self._extract(
            state,
            interaction,
            Domain.RELATIONAL,
            relational_prompt.SYSTEM,
            relational_prompt.TASK,
            relational_prompt.RelationalExtraction,
            relational_candidate,
        )

    def _extract(
        self,
        state: PipelineState,
        interaction: Interaction | None,
        domain: Domain,
        system: str,
        task: str,
        response_model: type[Any],
        to_candidate: Callable[[Any], Candidate],
    ) -> ExtractionResult:
        """One extraction: ask the model (rules when it fails), turn its memories into candidates, clean them."""
        if state.already_done:
            return ExtractionResult(domain=domain, extractor="none", skipped=True)
        answer = ask(
            self.model,
            self.fallback,
            system=system,
            user=payload.render(task, self._conversation(state, interaction)),
            response_model=response_model,
        )
        return ExtractionResult(
            domain=domain,
            candidates=self._clean([to_candidate(m) for m in answer.value.memories]),
            extractor=answer.model,
            fallback_reason=answer.fallback_reason,
        )

    def _conversation(self, state: PipelineState, interaction: Interaction | None) -> BaseModel:
        if interaction is None:
            interaction = self._store.get_interaction(state.scope, state.interaction_id)
        # What reads as instructions to the assistant never reaches an extractor, so no model (or rule) can turn it
        # into a fact or a lesson of the assistant's own; its episode keeps it, quarantined.
        withheld = withheld_messages(interaction.messages)
        return ConversationInput.of(interaction, self._settings.pipeline_max_prompt_chars, withheld)

    def _clean(self, candidates: list[Candidate]) -> list[Candidate]:
        """Whatever a model proposes: trimmed, within the content limit, of a known type, each once, at most N."""
        kept: list[Candidate] = []
        seen: set[str] = set()
        for candidate in candidates:
            content = " ".join(candidate.content.split())
            key = content.lower()
            if not content or key in seen or candidate.type not in TYPES_BY_DOMAIN[candidate.domain]:
                continue
            if len(content) > self._settings.max_content_chars:
                continue  # a "memory" longer than a memory may be is a model that lost its way, not one to cut short
            seen.add(key)
            kept.append(candidate.model_copy(update={"content": content}))
            if len(kept) >= self._settings.pipeline_max_candidates:
                break
        return kept


_MAX_REPLACED_CHARS = 120
_MAX_CHANGE_CHARS = 300


def _short(text: str | None, limit: int) -> str | None:
    """A model's free text, on one line and within bounds; None when empty."""
    cleaned = " ".join((text or "").split())[:limit]
    return cleaned or None


def _slot(slot: str | None) -> str | None:
    """Slots name storage keys of the contradiction check: lower snake case, no separators of keys."""
    if not slot:
        return None
    cleaned = "_".join("".join(c if c.isalnum() else " " for c in slot.lower()).split())
    return cleaned[:64] or None
