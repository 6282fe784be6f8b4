"""What a recall asks and returns, and how a scored memory becomes a ranked hit: the same rules for every hit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from pydantic import BaseModel, Field

from rapport.domain.models import DomainFilter, Memory, SourceKind, Trust
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
    speaker_weight,
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

    def weighed(self, memory: Memory, signals: RecallSignals) -> RecallSignals:
        """The signals with what whose words these are makes of them (`speaker_weight`): what `hit` scores."""
        weight = speaker_weight(memory.trust is Trust.ASSISTANT_SAID, self.weights)
        return signals if weight == signals.speaker_weight else replace(signals, speaker_weight=weight)

    def hit(self, memory: Memory, signals: RecallSignals) -> RecallHit:
        signals = self.weighed(memory, signals)
        return RecallHit(
            memory=memory if memory.embedding is None else memory.without_embedding(),
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


def strong_by_meaning(similarity: float, best: float, min_similarity: float, margin: float) -> bool:
    """A strong semantic match for this query: at least `min_similarity` close, or up to `margin` below that and no
    more than `margin` short of the query's best cosine (the closest the query comes to anything it could find).
    The second half is what an embedder's compressed range needs: MiniLM puts a paraphrase at 0.3..0.4 to its
    question while unrelated memories stay near 0.1..0.3, so the best match can sit below an absolute cut."""
    if similarity >= min_similarity:
        return True
    return similarity >= min_similarity - margin and similarity >= best - margin


@dataclass(frozen=True)
class Placed:
    """A candidate as ranking sees it: its id, its score (as the hit would report it) and its cosine. Ranking and the
    keep rule work on these, so only the hits that are returned are built (a recall scores ~100 candidates)."""

    memory_id: str
    score: float
    similarity: float


def placed_order(placed: Iterable[Placed]) -> list[Placed]:
    """The order `ranked` gives the hits: best score first, equal scores by id."""
    return sorted(placed, key=lambda p: (-p.score, p.memory_id))


def keeping_best_by_meaning(
    placed: list[Placed],
    limit: int,
    by_meaning: Sequence[str],
    share: float,
    min_similarity: float,
    margin: float = 0.0,
) -> list[Placed]:
    """The `limit` best of the ranked `placed`, where the first `share` x `limit` ids of `by_meaning` (candidates
    best by cosine first) that are strong semantic matches (`strong_by_meaning`) are kept in: one pushed below the
    cut by another's boosts takes the place of the lowest-ranked one not so kept. Ranked by score still, so a kept
    one is simply last."""
    top = placed[:limit]
    similar = {p.memory_id: p.similarity for p in placed}
    best = similar.get(by_meaning[0], -2.0) if by_meaning else -2.0
    reserved = [
        i
        for i in by_meaning[: int(limit * share)]
        if i in similar and strong_by_meaning(similar[i], best, min_similarity, margin)
    ]
    shown = {p.memory_id for p in top}
    missing = {i for i in reserved if i not in shown}
    if not missing:
        return top
    kept = set(reserved)
    rising = [p for p in placed[limit:] if p.memory_id in missing]
    leaving = {p.memory_id for p in [p for p in reversed(top) if p.memory_id not in kept][: len(rising)]}
    return placed_order([*(p for p in top if p.memory_id not in leaving), *rising])
