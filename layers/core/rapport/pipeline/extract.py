"""Step 2, extract (twice, in parallel): user memories and relational memories, each from its own prompt."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from rapport.domain.models import TYPES_BY_DOMAIN, Domain
from rapport.domain.prompts import extract_relational as relational_prompt
from rapport.domain.prompts import extract_user as user_prompt
from rapport.domain.prompts import payload
from rapport.domain.prompts.conversation import ConversationInput
from rapport.pipeline.asking import ask
from rapport.pipeline.context import PipelineContext
from rapport.pipeline.models import Candidate, ExtractionResult, PipelineState


def extract_user(ctx: PipelineContext, state: PipelineState) -> ExtractionResult:
    def candidate(m: Any) -> Candidate:
        return Candidate(
            domain=Domain.USER,
            type=m.type.value,
            content=m.content,
            importance=m.importance,
            confidence=m.confidence,
            slot=_slot(m.slot),
            correction=m.correction,
            evidence=m.evidence,
        )

    return _extract(
        ctx, state, Domain.USER, user_prompt.SYSTEM, user_prompt.TASK, user_prompt.UserExtraction, candidate
    )


def extract_relational(ctx: PipelineContext, state: PipelineState) -> ExtractionResult:
    def candidate(m: Any) -> Candidate:
        return Candidate(
            domain=Domain.RELATIONAL,
            type=m.type.value,
            content=m.content,
            importance=m.importance,
            confidence=m.confidence,
            evidence=m.evidence,
        )

    return _extract(
        ctx,
        state,
        Domain.RELATIONAL,
        relational_prompt.SYSTEM,
        relational_prompt.TASK,
        relational_prompt.RelationalExtraction,
        candidate,
    )


def _extract(
    ctx: PipelineContext,
    state: PipelineState,
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
        ctx.model,
        ctx.fallback,
        system=system,
        user=payload.render(task, _conversation(ctx, state)),
        response_model=response_model,
    )
    return ExtractionResult(
        domain=domain,
        candidates=_clean(ctx, [to_candidate(m) for m in answer.value.memories]),
        extractor=answer.model,
        fallback_reason=answer.fallback_reason,
    )


def _conversation(ctx: PipelineContext, state: PipelineState) -> BaseModel:
    interaction = ctx.store.get_interaction(state.tenant_id, state.user_id, state.interaction_id)
    return ConversationInput.of(interaction, ctx.settings.pipeline_max_prompt_chars)


def _slot(slot: str | None) -> str | None:
    """Slots name storage keys of the contradiction check: lower snake case, no separators of keys."""
    if not slot:
        return None
    cleaned = "_".join("".join(c if c.isalnum() else " " for c in slot.lower()).split())
    return cleaned[:64] or None


def _clean(ctx: PipelineContext, candidates: list[Candidate]) -> list[Candidate]:
    """Whatever a model proposes: trimmed, within the content limit, of a known type, each once, at most N."""
    kept: list[Candidate] = []
    seen: set[str] = set()
    for candidate in candidates:
        content = " ".join(candidate.content.split())
        key = content.lower()
        if not content or key in seen or candidate.type not in TYPES_BY_DOMAIN[candidate.domain]:
            continue
        if len(content) > ctx.settings.max_content_chars:
            continue  # a "memory" longer than a memory may be is a model that lost its way, not one to cut short
        seen.add(key)
        kept.append(candidate.model_copy(update={"content": content}))
        if len(kept) >= ctx.settings.pipeline_max_candidates:
            break
    return kept
