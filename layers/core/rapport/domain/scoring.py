"""Hybrid recall scoring: pure functions composing every part of a memory's score, and the reasons behind it."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

from rapport.domain.text import term_set, tokenize, words
from rapport.settings import RecallContextWeights, RecallWeights


class MatchStrength(StrEnum):
    STRONG = "strong"
    MODERATE = "moderate"
    WEAK = "weak"


class ContextBoost(NamedTuple):
    """What the conversation adds to a candidate's query match, in score units, by reason. A tuple, not a frozen
    dataclass: recall makes one for each of its ~60 candidates, in a quarter of a dataclass's time."""

    answer: float = 0.0  # it answers a question that matches the query
    conversation: float = 0.0  # its conversation holds the best match for the query
    speaker: float = 0.0  # the query names the person who said it
    adjacent: float = 0.0  # a message right before or after it matches the query
    time: float = 0.0  # its dates meet a temporal question's (rapport.domain.temporal_recall)
    preference: float = 0.0  # an inference question meets what was extracted of the person (domain.feedback)

    @property
    def total(self) -> float:
        return self.answer + self.conversation + self.speaker + self.adjacent + self.time + self.preference


NO_CONTEXT = ContextBoost()


@dataclass(frozen=True)
class RecallSignals:
    """Everything recall knows about one memory when it scores it: every part of the score, and what explains it."""

    similarity: float  # cosine, -1..1
    keyword: float  # BM25 relative to the best keyword candidate, 0..1
    matched_terms: tuple[str, ...]
    query_terms: int
    age_days: float
    importance: float
    strength: float
    # The graph's relation score, 0..1 (rapport/graph/relation_score.py), and the edge types it counted; 0 and none
    # for a memory without counted edges, or whose edges recall did not read.
    relation: float = 0.0
    linked_by: tuple[str, ...] = ()
    # What the memory's conversation adds (context_boosts); nothing for a memory that is not among the candidates.
    context: ContextBoost = NO_CONTEXT
    # What whose words these are makes of the score: below 1 for the assistant's own replies, which are history of
    # the conversation, not what the person said (speaker_weight).
    speaker_weight: float = 1.0

    def linked(self, relation: float, linked_by: tuple[str, ...]) -> RecallSignals:
        """These signals with the graph's relation component: what `dataclasses.replace` makes, built field by field
        in a quarter of its time (recall makes one for each candidate whose edges it reads)."""
        return RecallSignals(
            self.similarity,
            self.keyword,
            self.matched_terms,
            self.query_terms,
            self.age_days,
            self.importance,
            self.strength,
            relation,
            linked_by,
            self.context,
            self.speaker_weight,
        )

    @property
    def coverage(self) -> float:
        """Share of the query's terms the memory contains: an absolute keyword signal, unlike relative BM25."""
        return len(self.matched_terms) / self.query_terms if self.query_terms else 0.0


def recency(age_days: float, half_life_days: float) -> float:
    """1.0 for a memory made now, 0.5 after one half-life."""
    return float(0.5 ** (max(age_days, 0.0) / half_life_days))


def hybrid_score(signals: RecallSignals, weights: RecallWeights, half_life_days: float) -> float:
    """The recall score of a memory's signals (`hybrid_score_of`)."""
    return hybrid_score_of(
        signals.similarity,
        signals.keyword,
        signals.age_days,
        signals.importance,
        signals.strength,
        signals.relation,
        signals.context.total,
        signals.speaker_weight,
        weights,
        half_life_days,
    )


def hybrid_score_of(
    similarity: float,
    keyword: float,
    age_days: float,
    importance: float,
    strength: float,
    relation: float,
    context: float,
    speaker_weight: float,
    weights: RecallWeights,
    half_life_days: float,
) -> float:
    """The recall score, composed here and nowhere else: the query match (similarity, keywords), recency, importance,
    strength and the relation component, each with its weight, plus what the conversation adds (in score units),
    times whose words they are. From the parts `RecallSignals` holds, for a caller that scores many candidates and
    builds the signals of the few it shows."""
    standing = standing_of(
        query_match_of(similarity, keyword, weights), age_days, importance, strength, weights, half_life_days
    )
    return score_from_standing(standing, relation, context, speaker_weight, weights)


def standings_of(
    matches: Sequence[float],
    ages_days: Sequence[float],
    importances: Sequence[float],
    strengths: Sequence[float],
    weights: RecallWeights,
    half_life_days: float,
) -> list[float]:
    """`standing_of` of each candidate, from its parts in the candidates' order: the same floats, summed in the same
    order, without a call per candidate (recall scores ~60 of them)."""
    w_recency, w_importance, w_strength = weights.recency, weights.importance, weights.strength
    return [
        match
        + w_recency * float(0.5 ** ((0.0 if age < 0.0 else age) / half_life_days))
        + w_importance * importance
        + w_strength * strength
        for match, age, importance, strength in zip(matches, ages_days, importances, strengths, strict=True)
    ]


def standing_of(
    match: float, age_days: float, importance: float, strength: float, weights: RecallWeights, half_life_days: float
) -> float:
    """The part of the score that one recall never changes, from the query match (`query_match_of`): the match,
    recency, importance and strength, weighed. Summed in the order `hybrid_score_of` adds its terms, so the score
    from it (`score_from_standing`) is the same float to the last bit: a recall that scores a candidate again when
    its relation or context changes adds those alone."""
    return (
        match
        + weights.recency * recency(age_days, half_life_days)
        + weights.importance * importance
        + weights.strength * strength
    )


def score_from_standing(
    standing: float, relation: float, context: float, speaker_weight: float, weights: RecallWeights
) -> float:
    """`hybrid_score_of` from the candidate's `standing_of`, its relation component and its context."""
    return speaker_weight * (standing + weights.relation * relation + context)


def speaker_weight(said_by_assistant: bool, weights: RecallWeights) -> float:
    """The person's own words count in full; the assistant's replies by `assistant_words`, so when both match, what
    the person said ranks first ("what do you remember about them" is about them)."""
    return weights.assistant_words if said_by_assistant else 1.0


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
    reasons += context_reasons(signals.context)
    if signals.speaker_weight < 1.0:
        reasons.append(f"the assistant's own reply (weighed {signals.speaker_weight:.2f})")
    if signals.relation > 0:
        reasons.append("linked: " + ", ".join(signals.linked_by))
    return reasons


def matched_terms(query: str, content: str) -> tuple[str, ...]:
    """The query's words (as written, stopwords dropped) whose stems occur in the content, in query order, once each."""
    return matched_in(query, term_set(content))


def matched_in(query: str, content_terms: frozenset[str]) -> tuple[str, ...]:
    """`matched_terms` against the content's stems (`term_set`), for a caller that keeps them."""
    return matched_among(query_terms(query), content_terms)


def matched_among(terms: tuple[tuple[str, str], ...], content_terms: frozenset[str]) -> tuple[str, ...]:
    """`matched_in` from the query's `query_terms`, for a caller that matches one query against many contents."""
    return tuple([word for stem, word in terms if stem in content_terms])


@functools.lru_cache(maxsize=1_024)
def query_terms(query: str) -> tuple[tuple[str, str], ...]:
    """Each distinct stem of the query with the first word written for it: one query is matched against every
    candidate."""
    found: dict[str, str] = {}
    for word in words(query):
        stem = tokenize(word)
        if stem:
            found.setdefault(stem[0], word)
    return tuple(found.items())


# Conversation context: a message is read in its conversation, as the person who said it.


@dataclass(frozen=True)
class TurnPlace:
    """Where a candidate sits in the conversation it came from; all None for a memory not made from a message."""

    conversation: str | None  # the session, or the interaction when there is no session
    interaction_id: str | None = None
    message_index: int | None = None
    speaker: str | None = None
    asks: bool = False  # the message asks something, so the message after it is likely its answer


def asks_question(text: str) -> bool:
    return "?" in text


def query_match(signals: RecallSignals, weights: RecallWeights) -> float:
    """The query-dependent part of the hybrid score: what the conversation context propagates."""
    return query_match_of(signals.similarity, signals.keyword, weights)


def query_match_of(similarity: float, keyword: float, weights: RecallWeights) -> float:
    """`query_match` from the two signals it reads, for a caller that has not built the signals yet."""
    return weights.vector * max(similarity, 0.0) + weights.keyword * keyword


def query_matches_of(similarities: Sequence[float], keywords: Sequence[float], weights: RecallWeights) -> list[float]:
    """`query_match_of` of each candidate, in the candidates' order: `max(s, 0.0)` written out, as it decides."""
    w_vector, w_keyword = weights.vector, weights.keyword
    return [
        w_vector * (0.0 if similarity < 0.0 else similarity) + w_keyword * keyword
        for similarity, keyword in zip(similarities, keywords, strict=True)
    ]


def named_speakers(query: str, speakers: Iterable[str]) -> frozenset[str]:
    """The speakers the query names (by first name, case-insensitive): "What did Caroline paint?" names Caroline."""
    query_words = set(words(query, keep_stopwords=True))
    named = set()
    for speaker in speakers:
        first = words(speaker, keep_stopwords=True)[:1]
        if first and first[0] in query_words:
            named.add(speaker)
    return frozenset(named)


def context_boosts(
    matches: Mapping[str, float],
    places: Mapping[str, TurnPlace],
    named: frozenset[str],
    weights: RecallContextWeights,
) -> dict[str, ContextBoost]:
    """Boosts for each candidate from the other candidates of its conversation, given each one's query match.

    - answer: a message right after a question inherits `answer` × the question's match: people ask "what pets do
      you have?" and the fact is in the reply, which shares few words with a later query about pets;
    - conversation: `conversation` × the best match in its conversation (its own included, so a memory outside any
      conversation gets the same lift from itself and stays comparable): evidence clusters in one sitting;
    - speaker: `speaker` when the query names who said it, and the candidates hold someone else's words too
      (naming the only speaker there is tells nothing);
    - adjacent: `adjacent` x the better match of the messages right before and after it: a topic runs over a few
      turns, and the detail asked for is often in the turn next to the one that names the topic.
    """
    by_message = {
        (place.interaction_id, place.message_index): memory_id
        for memory_id, place in places.items()
        if place.interaction_id is not None and place.message_index is not None
    }
    best_in: dict[str, float] = {}
    for memory_id, place in places.items():
        key = place.conversation or memory_id
        best_in[key] = max(best_in.get(key, 0.0), matches.get(memory_id, 0.0))
    speakers_present = {p.speaker for p in places.values() if p.speaker}
    informative = bool(named) and not speakers_present <= named
    answer_weight, adjacent_weight, conversation_weight = weights.answer, weights.adjacent, weights.conversation
    boosts: dict[str, ContextBoost] = {}
    for memory_id, place in places.items():
        answer = adjacent = 0.0
        interaction, index = place.interaction_id, place.message_index
        if interaction is not None and index is not None:
            previous = by_message.get((interaction, index - 1))
            following = by_message.get((interaction, index + 1))
            if previous is not None and places[previous].asks:
                answer = answer_weight * matches.get(previous, 0.0)
            # The better match of the neighbours there are (0 with none).
            neighbour = 0.0 if previous is None else matches.get(previous, 0.0)
            if following is not None:
                after = matches.get(following, 0.0)
                neighbour = after if previous is None else max(neighbour, after)
            adjacent = adjacent_weight * neighbour
        conversation = conversation_weight * best_in[place.conversation or memory_id]
        speaker = weights.speaker if informative and place.speaker in named else 0.0
        boosts[memory_id] = ContextBoost(answer, conversation, speaker, adjacent)
    return boosts


def context_reasons(boost: ContextBoost) -> list[str]:
    reasons = []
    if boost.answer > 0:
        reasons.append("answers a matching question")
    if boost.speaker > 0:
        reasons.append("said by the person asked about")
    if boost.time > 0:
        reasons.append("its dates fit the question")
    if boost.preference > 0:
        reasons.append("what the person is like, for a question asking what they would do")
    return reasons
