"""Turn-level evidence recall: recall@k, all-evidence hit rate and MRR per question, averaged per category."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapport.evaluation.locomo import SCORED_CATEGORIES

CUTOFFS: tuple[int, ...] = (5, 10)
ALL_AT = 10  # "all@10": every evidence turn is behind the top 10 hits
MRR_DEPTH = 10  # reciprocal rank of the first hit that holds an evidence turn, 0 past this depth


@dataclass(frozen=True)
class QuestionScore:
    category: int
    recall: dict[int, float]  # k → |evidence ∩ turns behind the top k| / |evidence|
    all_hit: bool
    reciprocal_rank: float


def score_question(category: int, evidence: frozenset[str], ranked: Sequence[frozenset[str]]) -> QuestionScore:
    """`ranked` holds, per hit in rank order, the dialogue turns behind it (one for an episode, more for a fact)."""
    if not evidence:
        raise ValueError("a question without evidence cannot be scored")
    recall: dict[int, float] = {}
    for k in CUTOFFS:
        seen = frozenset().union(*ranked[:k]) if ranked[:k] else frozenset()
        recall[k] = len(evidence & seen) / len(evidence)
    behind_all = frozenset().union(*ranked[:ALL_AT]) if ranked[:ALL_AT] else frozenset()
    reciprocal_rank = 0.0
    for rank, turns in enumerate(ranked[:MRR_DEPTH], start=1):
        if evidence & turns:
            reciprocal_rank = 1.0 / rank
            break
    return QuestionScore(category, recall, evidence <= behind_all, reciprocal_rank)


def summarise(scores: Iterable[QuestionScore]) -> dict[str, float | int]:
    """Means over the given questions, keyed as in the JSON report."""
    chosen = list(scores)
    n = len(chosen)
    if n == 0:
        return {"recall@5": 0.0, "recall@10": 0.0, "all@10": 0.0, "mrr": 0.0, "n": 0}
    return {
        **{f"recall@{k}": round(sum(s.recall[k] for s in chosen) / n, 4) for k in CUTOFFS},
        "all@10": round(sum(s.all_hit for s in chosen) / n, 4),
        "mrr": round(sum(s.reciprocal_rank for s in chosen) / n, 4),
        "n": n,
    }


def summarise_by_category(scores: Sequence[QuestionScore]) -> tuple[dict[str, float | int], dict[str, dict]]:
    """Overall (the scored categories 1–4 only) and one summary per category present, 5 included."""
    overall = summarise(s for s in scores if s.category in SCORED_CATEGORIES)
    by_category = {
        str(category): summarise(s for s in scores if s.category == category)
        for category in sorted({s.category for s in scores})
    }
    return overall, by_category
