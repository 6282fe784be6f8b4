"""What a recall asks and returns, and how a scored memory becomes a ranked hit: the same rules for every hit."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, Field

from rapport.domain.models import DomainFilter, Memory, SourceKind
from rapport.domain.relations import PathStep
from rapport.domain.scoring import (
    MatchStrength,
    RecallSignals,
    TurnPlace,
    asks_question,
    hybrid_score,
    match_reasons,
    match_strength,
    relevance,
)
from rapport.settings import RecallWeights, Settings

SCORE_PLACES = 6  # a hit reports its score to six places, and hits are ranked by what they report


class RecallQuery(BaseModel):
    query: str
    domain: DomainFilter = DomainFilter.BOTH
    # Bounded by the recall use case (1..max_page_size, a setting), which answers an out-of-range one with a 400.
    limit: int = 5
    min_similarity: float = Field(0.0, ge=-1.0, le=1.0)
    memory_type: str | None = None
    include_archived: bool = False
    # Graph expansion (docs/graph.md): follow edges from the hits; None takes the graph settings' value.
    expand_relations: bool = False
    relation_limit: int | None = Field(None, ge=0, le=50)
    expansion_limit: int | None = Field(None, ge=0, le=200)
    expand_min_strength: float | None = Field(None, ge=0.0, le=1.0)
    expand_min_importance: float | None = Field(None, ge=0.0, le=1.0)


class RecallHit(BaseModel):
    memory: Memory
    similarity: float
    score: float
    match_strength: MatchStrength
    match_reasons: list[str]
    matched_terms: list[str]
    # Empty for a hit the query found; for one expansion reached, the edges followed from a seed hit to it.
    path: list[PathStep] = Field(default_factory=list)


@dataclass(frozen=True)
class RelationScore:
    """The graph's relation component of one memory: 0..1 from its edges, and the edge types that counted."""

    score: float = 0.0
    edge_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecallScoring:
    """Turns a memory's signals into its hit: the hits the query found and those expansion reached alike."""

    weights: RecallWeights
    half_life_days: float
    strong: float  # match strength thresholds on relevance
    moderate: float

    @classmethod
    def of(cls, settings: Settings) -> RecallScoring:
        return cls(
            weights=settings.weights,
            half_life_days=settings.recall_recency_half_life_days,
            strong=settings.strong_match_score,
            moderate=settings.moderate_match_score,
        )

    def score(self, signals: RecallSignals) -> float:
        return round(hybrid_score(signals, self.weights, self.half_life_days), SCORE_PLACES)

    def hit(self, memory: Memory, signals: RecallSignals) -> RecallHit:
        return RecallHit(
            memory=memory.without_embedding(),
            similarity=round(signals.similarity, SCORE_PLACES),
            score=self.score(signals),
            match_strength=match_strength(relevance(signals, self.weights), self.strong, self.moderate),
            match_reasons=match_reasons(signals, self.half_life_days),
            matched_terms=list(signals.matched_terms),
        )


def rank_key(hit: RecallHit) -> tuple[float, str]:
    """Best score first; equal scores by id, so the order never depends on the order things were read in."""
    return (-hit.score, hit.memory.id)


def ranked(hits: Iterable[RecallHit]) -> list[RecallHit]:
    return sorted(hits, key=rank_key)


def place_of(memory: Memory) -> TurnPlace:
    """A message's place in its conversation; a memory made from a conversation (pipeline) belongs to its sitting."""
    source = memory.source
    conversation = source.session_id or source.interaction_id
    if source.kind is not SourceKind.INTERACTION:
        return TurnPlace(conversation=conversation)
    return TurnPlace(
        conversation=conversation,
        interaction_id=source.interaction_id,
        message_index=source.message_index,
        speaker=source.speaker,
        asks=asks_question(memory.content),
    )
