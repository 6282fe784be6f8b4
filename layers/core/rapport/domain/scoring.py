"""Hybrid recall scoring: pure functions combining similarity, keywords, recency, importance and strength."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from rapport.domain.text import tokenize
from rapport.settings import RecallWeights


class MatchStrength(StrEnum):
    STRONG = "strong"
    MODERATE = "moderate"
    WEAK = "weak"


@dataclass(frozen=True)
class RecallSignals:
    """What recall knows about one candidate before it is ranked."""

    similarity: float  # cosine, -1..1
    keyword: float  # BM25 relative to the best keyword candidate, 0..1
    matched_terms: tuple[str, ...]
    query_terms: int
    age_days: float
    importance: float
    strength: float

    @property
    def coverage(self) -> float:
        """Share of the query's terms the memory contains: an absolute keyword signal, unlike relative BM25."""
        return len(self.matched_terms) / self.query_terms if self.query_terms else 0.0


def recency(age_days: float, half_life_days: float) -> float:
    """1.0 for a memory made now, 0.5 after one half-life."""
    return float(0.5 ** (max(age_days, 0.0) / half_life_days))


def hybrid_score(signals: RecallSignals, weights: RecallWeights, half_life_days: float) -> float:
    similarity = max(signals.similarity, 0.0)
    return (
        weights.vector * similarity
        + weights.keyword * signals.keyword
        + weights.recency * recency(signals.age_days, half_life_days)
        + weights.importance * signals.importance
        + weights.strength * signals.strength
    )


def relevance(signals: RecallSignals, weights: RecallWeights) -> float:
    """How well the memory matches the query itself, 0..1, ignoring age, importance and strength."""
    total = weights.vector + weights.keyword
    if total == 0:
        return 0.0
    return (weights.vector * max(signals.similarity, 0.0) + weights.keyword * signals.coverage) / total


def match_strength(relevance_value: float, strong: float, moderate: float) -> MatchStrength:
    if relevance_value >= strong:
        return MatchStrength.STRONG
    if relevance_value >= moderate:
        return MatchStrength.MODERATE
    return MatchStrength.WEAK


def match_reasons(signals: RecallSignals, half_life_days: float) -> list[str]:
    """Human-readable reasons, strongest signal first, so a client can show why a memory came back."""
    reasons: list[str] = []
    if signals.similarity > 0:
        reasons.append(f"similar in meaning ({signals.similarity:.2f})")
    if signals.matched_terms:
        reasons.append("shares terms: " + ", ".join(signals.matched_terms))
    if recency(signals.age_days, half_life_days) >= 0.9:
        reasons.append("recent")
    if signals.importance >= 0.7:
        reasons.append(f"important ({signals.importance:.2f})")
    if signals.strength >= 0.8:
        reasons.append(f"strong ({signals.strength:.2f})")
    return reasons


def matched_terms(query: str, content: str) -> tuple[str, ...]:
    """The query's terms (stemmed, stopwords dropped) that occur in the content, in query order."""
    content_terms = set(tokenize(content))
    return tuple(term for term in dict.fromkeys(tokenize(query)) if term in content_terms)
