"""The constructive filter's decisions: what it allowed, blocked or reframed, and why, kept so they can be audited."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel

from rapport.domain.models import Domain
from rapport.domain.scope import DEFAULT_AGENT, Scope


class Verdict(StrEnum):
    ALLOWED = "allowed"
    BLOCKED = "blocked"
    REFRAMED = "reframed"
    # Reads as instructions to the assistant: stored as it was but quarantined (never recalled) until restored.
    QUARANTINED = "quarantined"


class FilterDecision(BaseModel):
    """One candidate memory and what the filter did with it. `original` is what the extractor proposed; `content` is
    what was stored (the reframe, the original, or None when blocked). A quarantined one stored `original` as a
    quarantined memory (`memory_id`): an extracted candidate, or an episode (type `episode`) whose message read as
    instructions; restoring it lifts the quarantine."""

    id: str
    tenant_id: str
    user_id: str
    interaction_id: str
    domain: Domain
    type: str
    verdict: Verdict
    reason: str
    original: str
    content: str | None = None
    importance: float = 0.5
    decided_by: str  # the model that judged, e.g. "rules" or "openai:gpt-4o-mini"
    fallback_reason: str | None = None  # set when the rule-based filter stood in for an answer that did not validate
    memory_id: str | None = None  # the memory stored for it (allowed / reframed), or the existing one it reinforced
    restored_memory_id: str | None = None  # the memory a restore stored from `original`
    restored_at: datetime | None = None
    decided_at: datetime
    agent_id: str = DEFAULT_AGENT  # the assistant whose interaction it judged

    def visible_to(self, scope: Scope) -> bool:
        """A decision about a fact is every assistant's to see; one about a relational memory, its assistant's."""
        return self.domain is Domain.USER or self.agent_id == scope.agent_id
