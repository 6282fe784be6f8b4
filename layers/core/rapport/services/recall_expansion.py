"""What recall does for a question gathered across the history: the ranking spread over sittings, and the bounded
second pass that feeds the first hits back as a query (docs/recall.md, "A second pass for multi-hop questions")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rapport.domain.feedback import bridging_terms, feedback_vector, fused_order, spread_by_sitting
from rapport.domain.models import Memory
from rapport.domain.recall import Placed, placed_order
from rapport.settings import RecallAcrossSettings


@dataclass(frozen=True)
class FeedbackQuery:
    """The second pass's query: the question's words with the names its first hits carry, and its vector moved
    towards theirs."""

    text: str
    vector: list[float]


class AcrossHistory:
    """The rules of `RecallAcrossSettings` over one recall's candidates; the searching itself is the use case's."""

    def __init__(self, settings: RecallAcrossSettings) -> None:
        self._settings = settings

    @property
    def second_pass(self) -> bool:
        return self._settings.second_pass

    def spread(self, placed: Sequence[Placed], sittings: Mapping[str, str], depth: int) -> list[Placed]:
        """`placed` (best score first) taken from each sitting in turn (`sittings`: each id's), the first `depth`
        chosen one by one; each keeps its cosine and carries the score it was chosen at, so the order holds when the
        keep rule (`keeping_best_by_meaning`) re-sorts it."""
        if len(set(sittings.values())) == len(placed):
            # One candidate a sitting: no penalty is ever taken, so each keeps its place and score.
            return [Placed(p.memory_id, p.score, p.similarity) for p in placed]
        similarity = {p.memory_id: p.similarity for p in placed}
        chosen = spread_by_sitting(
            [(p.memory_id, p.score) for p in placed], sittings.__getitem__, self._settings.sitting_spread, depth
        )
        return placed_order(Placed(i, score, similarity[i]) for i, score in chosen)

    def feedback(
        self, text: str, vector: list[float], ranked: Sequence[str], memories: Mapping[str, Memory]
    ) -> FeedbackQuery:
        """The second query from the first pass's best `seeds` hits: the question's vector moved towards theirs
        (Rocchio), and for keywords the names and titles they hold that the question does not (the speakers aside:
        they are in all their messages), or the question's words when they hold none."""
        seeds = [memories[i] for i in ranked[: self._settings.seeds]]
        speakers = {m.source.speaker for m in memories.values() if m.source.speaker}
        terms = bridging_terms(text, (m.content for m in seeds), speakers, self._settings.bridging_terms)
        moved = feedback_vector(vector, [m.embedding for m in seeds if m.embedding], self._settings.feedback_weight)
        # The bridging names alone: the question's own words ran in the first pass, and with them again the second
        # ranking would be the first one over.
        return FeedbackQuery(text=" ".join(terms) if terms else text, vector=moved)

    def fuse(self, first: Sequence[str], second: Sequence[str]) -> list[str]:
        settings = self._settings
        return fused_order(first, second, keep=settings.keep, second_weight=settings.second_weight)
