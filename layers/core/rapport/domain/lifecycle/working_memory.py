"""Working memory rules: a session's last turns and running summary, kept within the token budget."""

from __future__ import annotations

import math
import re
from datetime import datetime

from pydantic import BaseModel, Field

from rapport.domain.models import Interaction, MessageRole
from rapport.settings import GovernanceSettings

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_FOLDED_CHARS = 200  # what a folded turn keeps: its first sentence, at most this long
_RECENT_INTERACTIONS = 50  # ids remembered so a repeated delivery of one interaction is not added twice


class Turn(BaseModel):
    role: MessageRole
    content: str
    name: str | None = None
    at: datetime
    interaction_id: str


class SessionContext(BaseModel):
    """What an assistant needs to carry on a conversation: the running summary and the latest turns verbatim."""

    session_id: str
    summary: str = ""
    turns: list[Turn] = Field(default_factory=list)
    folded_turns: int = 0  # how many turns the summary stands for
    started_at: datetime
    last_activity_at: datetime
    recent_interaction_ids: list[str] = Field(default_factory=list)


def estimate_tokens(text: str, chars_per_token: float) -> int:
    """A tokenizer-free estimate (English runs about four characters a token); generous by rounding up."""
    return math.ceil(len(text) / chars_per_token) if text else 0


def context_tokens(context: SessionContext, settings: GovernanceSettings) -> int:
    cpt = settings.chars_per_token
    return estimate_tokens(context.summary, cpt) + sum(estimate_tokens(t.content, cpt) for t in context.turns)


def _turn_cap_chars(settings: GovernanceSettings) -> int:
    # One turn alone may use what the lower bound leaves beside a full summary, so a single huge message can never
    # push the context past the budget.
    return max(int((settings.session_min_tokens - settings.session_summary_max_tokens) * settings.chars_per_token), 1)


def fold_line(turn: Turn) -> str:
    """A folded turn in the summary: who spoke, and the first sentence of what they said."""
    text = " ".join(turn.content.split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    if len(first) > _FOLDED_CHARS:
        first = first[: _FOLDED_CHARS - 1] + "…"
    return f"{turn.name or turn.role.value}: {first}"


def _bounded_summary(lines: list[str], settings: GovernanceSettings) -> str:
    """The newest summary lines that fit the summary's share of the budget; older ones give way."""
    kept: list[str] = []
    budget = settings.session_summary_max_tokens
    for line in reversed(lines):
        if estimate_tokens("\n".join([line, *kept]), settings.chars_per_token) > budget:
            break
        kept.insert(0, line)
    return "\n".join(kept)


def turns_of(interaction: Interaction, settings: GovernanceSettings) -> list[Turn]:
    cap = _turn_cap_chars(settings)
    return [
        Turn(
            role=m.role,
            content=m.content if len(m.content) <= cap else m.content[: cap - 1] + "…",
            name=m.name,
            at=interaction.occurred_at,
            interaction_id=interaction.id,
        )
        for m in interaction.messages
        if m.content.strip()
    ]


def add_interaction(
    context: SessionContext | None, interaction: Interaction, now: datetime, settings: GovernanceSettings
) -> SessionContext:
    """The session after this interaction: its turns appended, and, once past the upper bound, the oldest turns
    folded into the summary until the context is back under the lower bound. Adding the same interaction twice
    changes nothing."""
    session_id = interaction.session_id or ""
    if context is None:
        context = SessionContext(session_id=session_id, started_at=now, last_activity_at=now)
    if interaction.id in context.recent_interaction_ids:
        return context
    turns = [*context.turns, *turns_of(interaction, settings)]
    updated = context.model_copy(
        update={
            "turns": turns,
            "last_activity_at": max(now, context.last_activity_at),
            "recent_interaction_ids": [*context.recent_interaction_ids, interaction.id][-_RECENT_INTERACTIONS:],
        }
    )
    if context_tokens(updated, settings) <= settings.session_max_tokens:
        return updated
    return fold(updated, settings)


def fold(context: SessionContext, settings: GovernanceSettings) -> SessionContext:
    """Oldest turns into the summary until the context fits the lower bound (the newest turn always stays)."""
    lines = context.summary.split("\n") if context.summary else []
    turns = list(context.turns)
    folded = context.folded_turns
    current = context.model_copy()
    while len(turns) > 1 and context_tokens(current, settings) > settings.session_min_tokens:
        lines.append(fold_line(turns.pop(0)))
        folded += 1
        current = context.model_copy(
            update={"turns": turns, "summary": _bounded_summary(lines, settings), "folded_turns": folded}
        )
    return current
