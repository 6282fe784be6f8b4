"""What a recall asks and returns, and how a scored memory becomes a ranked hit: the same rules for every hit."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import NamedTuple

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
    query_match_of,
    relevance,
    score_from_standing,
    speaker_weight,
    standings_of,
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

    def score_from(self, standing: float, relation: float, context: float, speaker_weight: float) -> float:
        """`score` from a candidate's `standing_of` and the parts a recall adds to it: the same float."""
        return round(score_from_standing(standing, relation, context, speaker_weight, self.weights), SCORE_PLACES)

    def standings_of(
        self,
        matches: Sequence[float],
        ages_days: Sequence[float],
        importances: Sequence[float],
        strengths: Sequence[float],
    ) -> list[float]:
        """`standing_of` of each candidate, in the candidates' order (`scoring.standings_of`)."""
        return standings_of(matches, ages_days, importances, strengths, self.weights, self.half_life_days)

    def scores_from(
        self,
        standings: Sequence[float],
        relations: Sequence[float],
        contexts: Sequence[float],
        speaker_weights: Sequence[float],
    ) -> list[float]:
        """`score_from` of each candidate, in the candidates' order: the same floats, without a call each."""
        w_relation = self.weights.relation
        return [
            round(weight * (standing + w_relation * relation + context), SCORE_PLACES)
            for standing, relation, context, weight in zip(standings, relations, contexts, speaker_weights, strict=True)
        ]

    def evidence_from(self, match: float, context: float, speaker_weight: float) -> float:
        """`query_evidence_of` from the query match (`query_match_of`)."""
        return round(speaker_weight * (match + context), SCORE_PLACES)

    def speaker_weight(self, memory: Memory) -> float:
        """What whose words these are makes of a memory's score (`speaker_weight`)."""
        return speaker_weight(memory.trust is Trust.ASSISTANT_SAID, self.weights)

    def speaker_weights(self, memories: Sequence[Memory]) -> list[float]:
        """`speaker_weight` of each memory, in order."""
        said, person = speaker_weight(True, self.weights), speaker_weight(False, self.weights)
        return [said if memory.trust is Trust.ASSISTANT_SAID else person for memory in memories]

    def weighed(self, memory: Memory, signals: RecallSignals) -> RecallSignals:
        """The signals with what whose words these are makes of them (`speaker_weight`): what `hit` scores."""
        weight = self.speaker_weight(memory)
        return signals if weight == signals.speaker_weight else replace(signals, speaker_weight=weight)

    def hit(self, memory: Memory, signals: RecallSignals, score: float | None = None) -> RecallHit:
        """`score`: what `score` gives the weighed signals, from a caller that has it (`score_from`)."""
        signals = self.weighed(memory, signals)
        return RecallHit(
            memory=memory if memory.embedding is None else memory.without_embedding(),
            similarity=round(signals.similarity, SCORE_PLACES),
            score=self.score(signals) if score is None else score,
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
    return similarity >= strong_from(best, min_similarity, margin)


def strong_from(best: float, min_similarity: float, margin: float) -> float:
    """The least cosine `strong_by_meaning` holds strong for a query whose best cosine is `best`: one comparison per
    candidate for a caller that judges many."""
    return min(min_similarity, max(min_similarity - margin, best - margin))


# Keyword shares this close to the best one are the same evidence: relative BM25 gives near-identical texts that share
# the query's words near-identical shares, however common the words.
KEYWORD_TIE = 0.1


class Placed(NamedTuple):
    """A candidate as ranking sees it: its id, its score (as the hit would report it) and its cosine. Ranking and the
    keep rule work on these, so only the hits that are returned are built (a recall places ~60 candidates, and a
    tuple is made in a fraction of a frozen dataclass's time)."""

    memory_id: str
    score: float
    similarity: float
    # What the query gives the score (`query_evidence`): the score less what the memory scores matching nothing
    # (recency, importance, strength, the graph's relation). None when unknown, as for an order by rank: no hit is
    # then found to be above a strong match on those alone.
    evidence: float | None = None
    keyword: float = 0.0  # BM25 relative to the best keyword candidate, 0..1
    terms: frozenset[str] = frozenset()  # the query's words it holds
    # What its keywords give `evidence` (weighed as the score weighs them); its evidence less this is what its
    # meaning and its conversation give.
    keyword_evidence: float = 0.0


def query_evidence(scoring: RecallScoring, signals: RecallSignals) -> float:
    """What the query gives a candidate's score (`signals` as `RecallScoring.weighed`): its query match (cosine and
    keywords) and what its conversation adds for this query, weighed as the score weighs them. The rest of the score
    (recency, importance, strength, the graph's relation) it would get matching nothing."""
    return query_evidence_of(
        scoring, signals.similarity, signals.keyword, signals.context.total, signals.speaker_weight
    )


def query_evidence_of(
    scoring: RecallScoring, similarity: float, keyword: float, context: float, speaker_weight: float
) -> float:
    """`query_evidence` from the parts the weighed signals would hold."""
    return scoring.evidence_from(query_match_of(similarity, keyword, scoring.weights), context, speaker_weight)


def keyword_evidence_of(scoring: RecallScoring, keyword: float, speaker_weight: float) -> float:
    """What a keyword share gives `query_evidence_of`."""
    return keyword_evidences(scoring, [keyword], [speaker_weight])[0]


def keyword_evidences(
    scoring: RecallScoring, keywords: Sequence[float], speaker_weights: Sequence[float]
) -> list[float]:
    """`keyword_evidence_of` of each keyword share with its speaker weight."""
    weight = scoring.weights.keyword
    return [
        round(speaker * weight * keyword, SCORE_PLACES)
        for keyword, speaker in zip(keywords, speaker_weights, strict=True)
    ]


def placed_order(placed: Iterable[Placed]) -> list[Placed]:
    """The order `ranked` gives the hits: best score first, equal scores by id. Sorted by id, then by score from the
    best (a sort keeps the order of equal keys, reversed or not): two sorts on a field each, where a key of
    `(-score, id)` would call a function and build a tuple for every candidate."""
    order = sorted(placed, key=_FIRST)
    order.sort(key=_SECOND, reverse=True)
    return order


def by_meaning_order(similarity: Mapping[str, float]) -> list[str]:
    """The ids closest by cosine first, equal cosines by id (as `placed_order`, on cosines)."""
    pairs = sorted(similarity.items())
    pairs.sort(key=_SECOND, reverse=True)
    return [memory_id for memory_id, _ in pairs]


_FIRST, _SECOND = itemgetter(0), itemgetter(1)  # an id, and what it is ranked on (a `Placed`'s score)


def keeping_best_by_meaning(
    placed: list[Placed],
    limit: int,
    by_meaning: Sequence[str],
    share: float,
    min_similarity: float,
    margin: float = 0.0,
    tie: float = 0.0,
) -> list[Placed]:
    """The `limit` best of the ranked `placed`, boosts never burying a strong semantic match (`strong_by_meaning`):

    - the first `share` x `limit` ids of `by_meaning` (candidates best by cosine first) that are strong are kept in
      whatever the others score, and so is any strong one within `tie` of the best cosine (as close as the best
      by meaning, as far as the embedder can tell; up to `limit` of them): one pushed below the cut takes the place
      of the lowest-ranked one not so kept;
    - any other strong one below the cut takes the place of the lowest-ranked hit not kept that is above it only on
      what the query does not give (`lifted_over`), strong ones closer by cosine claiming first.

    Ranked by score still, so a kept one shows at its own score (usually last); with nothing to keep in, `placed`'s
    own order of its first `limit`."""
    top = placed[:limit]
    similar = {p.memory_id: p.similarity for p in placed}
    best = similar.get(by_meaning[0], -2.0) if by_meaning else -2.0
    at_least = strong_from(best, min_similarity, margin)
    strong = [i for i in by_meaning if similar.get(i, _NOT_PLACED) >= at_least]
    reserved = set(strong) & set(by_meaning[: int(limit * share)])
    if tie > 0:
        reserved.update(i for i in strong[:limit] if similar[i] >= best - tie)
    shown = {p.memory_id for p in top}
    missing = {i for i in reserved if i not in shown}
    if missing:
        rising = [p for p in placed[limit:] if p.memory_id in missing]
        leaving = {p.memory_id for p in [p for p in reversed(top) if p.memory_id not in reserved][: len(rising)]}
        top = placed_order([*(p for p in top if p.memory_id not in leaving), *rising])
        shown = {p.memory_id for p in top}
    others = [i for i in strong if i not in reserved]
    if all(i in shown for i in others):
        return top  # only a strong match below the cut claims a place
    return _claimed_by_meaning(placed, top, others, reserved, limit) or top


_NOT_PLACED = float("-inf")  # below any cosine, so an id `placed` does not hold is never strong


class Crowds(NamedTuple):
    """Keyword evidence that many candidates share, and so picks none of them out (`crowds_of`)."""

    # Within `KEYWORD_TIE` of the best keyword share, more of them than the answer has places: relative BM25 gives
    # each its full weight (at 100,000 memories dozens of near-identical ones share a common word of the question).
    tied: frozenset[str] = frozenset()
    # Holding exactly the same words of the query as more candidates than the answer has places: their keyword
    # shares may differ (a shorter text scores more), but the words found say no more of one than of the others.
    same_words: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.tied or self.same_words)


def crowds_of(placed: Sequence[Placed], limit: int) -> Crowds:
    """The candidates whose keyword evidence is a crowd's (`Crowds`); each crowd empty when it is not larger than
    `limit`."""
    best = max((p.keyword for p in placed), default=0.0)
    tied = frozenset(p.memory_id for p in placed if p.keyword > 0 and p.keyword >= best - KEYWORD_TIE)
    holding = Counter(p.terms for p in placed if p.terms)
    same_words = frozenset(p.memory_id for p in placed if p.terms and holding[p.terms] > limit)
    return Crowds(tied if len(tied) > limit else frozenset(), same_words)


def lifted_over(hit: Placed, match: Placed, crowds: Crowds) -> bool:
    """`hit` is above the strong semantic `match` only on what the query does not give:

    - what the query gives it is less than what it gives the match (the rest is recency, importance, strength, the
      graph);
    - or its words are a crowd's (`Crowds.same_words`), and what the query gives it beside them is less;
    - or its keyword share is a crowd's near-tie (`Crowds.tied`), and it is less close by cosine."""
    if hit.evidence is not None and match.evidence is not None:
        if hit.evidence < match.evidence:
            return True
        if hit.memory_id in crowds.same_words and hit.evidence - hit.keyword_evidence < match.evidence:
            return True
    return hit.memory_id in crowds.tied and hit.similarity < match.similarity


def _claimed_by_meaning(
    placed: list[Placed], top: list[Placed], strong: list[str], kept: Iterable[str], limit: int
) -> list[Placed] | None:
    """`top` with each of the `strong` ids (closest by cosine first) that is not in it in the place of the lowest-ranked
    hit lifted over it (`lifted_over`) that is neither kept nor itself a strong match; None when none claims one.
    A strong match is never displaced for another (cosine alone does not say which of two is the answer), so one
    sweep settles it: a claim only takes a weaker hit out, which leaves a later match fewer places to claim."""
    crowds = crowds_of(placed, limit)
    if not crowds and all(p.evidence is None for p in top):
        return None  # nothing can be found lifted: an order by rank, or a caller that gives no evidence
    by_id = {p.memory_id: p for p in placed}
    held = {*kept, *strong}
    lowest_first = placed_order(top)[::-1]
    shown = {p.memory_id for p in lowest_first}
    claimed = False
    for memory_id in strong:
        if memory_id in shown:
            continue
        match = by_id[memory_id]
        lifted = next((p for p in lowest_first if p.memory_id not in held and lifted_over(p, match, crowds)), None)
        if lifted is not None:
            shown.add(memory_id)
            lowest_first = placed_order([*(p for p in lowest_first if p is not lifted), match])[::-1]
            claimed = True
    return lowest_first[::-1] if claimed else None
