"""Recall: hybrid search over one end user's memories, one use case read top to bottom (docs/recall.md)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import islice
from typing import NamedTuple

from rapport.clock import Clock
from rapport.domain.feedback import asks_across, asks_inference
from rapport.domain.lifecycle.decay import decay_anchor, decay_rate, decayed_to, epoch_micros, strength_since
from rapport.domain.models import Domain, Memory, Trust, recalled_statuses
from rapport.domain.recall import (
    SCORE_PLACES,
    Placed,
    RecallHit,
    RecallQuery,
    RecallScoring,
    RelationScore,
    by_meaning_order,
    keeping_best_by_meaning,
    keyword_evidence_of,
    keyword_evidences,
    place_of,
    placed_order,
    query_evidence,
)
from rapport.domain.rendering import search_text
from rapport.domain.scope import Scope
from rapport.domain.scoring import (
    NO_CONTEXT,
    ContextBoost,
    RecallSignals,
    TurnPlace,
    context_boosts,
    matched_among,
    matched_in,
    named_speakers,
    query_matches_of,
    query_terms,
)
from rapport.domain.temporal_recall import temporal_question, time_boosts
from rapport.domain.text import term_set, tokenize
from rapport.domain.vectors import cosine
from rapport.errors import InvalidInputError
from rapport.ports.embedder import Embedder
from rapport.ports.graph import MemoryGraph, RecallEdges
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import IndexQuery, VectorIndex
from rapport.services.recall_expansion import AcrossHistory
from rapport.settings import RecallWeights, Settings


class _Candidate(NamedTuple):
    """A memory the index found for the query, with what the search itself says about it. The memory is as stored,
    and without its vector when the index gave its cosine: only the few returned are decayed to now (`_shown`),
    the strength they will show is `strength`."""

    memory: Memory
    similarity: float  # cosine to the query
    keyword: float  # BM25 relative to the best keyword candidate, 0..1
    terms: tuple[str, ...]  # the query's words it contains
    strength: float  # decayed to now
    place: TurnPlace  # its place in its conversation (`place_of`)
    age_days: float  # since it happened (or was made), as of now


@dataclass(frozen=True)
class _Forms:
    """What recall reads of a memory whatever the query: its searchable stems, its place in its conversation, and
    the moments its strength and its age are measured from (`epoch_micros`)."""

    stems: frozenset[str]
    place: TurnPlace
    decays_from: int  # its `decay_anchor`
    happened: int  # when it happened, or was made

    @classmethod
    def of(cls, memory: Memory) -> _Forms:
        return cls(
            term_set(search_text(memory)),
            place_of(memory),
            epoch_micros(decay_anchor(memory)),
            epoch_micros(memory.occurred_at or memory.created_at),
        )


class _FormsByMemory:
    """Each memory's `_Forms`, kept by the instance: a store that shares its decoded memories (the local one) hands
    recall the same instances query after query, and a memory is immutable, so what was read of an instance holds
    for as long as it is the instance. Another instance of the same memory (a store that decodes on every read, a
    changed memory) is read afresh. The instance is held with its forms, so its `id` is not reused meanwhile."""

    def __init__(self, size: int = 8_192) -> None:
        self._size = size
        self._kept: dict[int, tuple[Memory, _Forms]] = {}
        self._lock = threading.Lock()

    def of(self, memory: Memory) -> _Forms:
        kept = self._kept.get(id(memory))
        if kept is not None and kept[0] is memory:
            return kept[1]
        forms = _Forms.of(memory)
        if memory.embedding is None:  # one read with its vector is not the shared instance, and weighs 100 times more
            with self._lock:
                self._kept[id(memory)] = (memory, forms)
                if len(self._kept) > self._size:
                    del self._kept[next(iter(self._kept))]  # the oldest kept
        return forms


_UNLINKED = RelationScore()


@dataclass
class _Scored:
    """The candidates as recall scores them, position by position: what its conversation adds to each (`contexts`),
    the graph's relation component (of those whose edges were read), whose words each is (`weights`), and each score,
    as `RecallScoring.score` gives the signals `signals` builds. A recall scores ~60 candidates and shows ~10, so
    signals are built for those it shows, and a score again only where a part changes (`link`, `lean`): from each
    one's query match (`matches`) and the part of its score no recall changes (`standings`), computed once."""

    scoring: RecallScoring
    candidates: list[_Candidate]
    query_terms: int
    contexts: list[ContextBoost]
    relations: list[RelationScore]
    weights: list[float]
    matches: list[float]
    standings: list[float]
    scores: list[float]
    added: list[float]  # each context's total

    @classmethod
    def of(
        cls,
        scoring: RecallScoring,
        candidates: list[_Candidate],
        contexts: list[ContextBoost],
        query_terms: int,
        matches: list[float] | None = None,
    ) -> _Scored:
        """`matches`: each candidate's query match (`_query_matches`), when the caller has them already."""
        if matches is None:
            matches = _query_matches(candidates, scoring.weights)
        weights = scoring.speaker_weights([c.memory for c in candidates])
        standings = scoring.standings_of(
            matches,
            [c.age_days for c in candidates],
            [c.memory.importance for c in candidates],
            [c.strength for c in candidates],
        )
        added = [context.total for context in contexts]
        linked = [_UNLINKED] * len(candidates)
        scored = cls(scoring, candidates, query_terms, contexts, linked, weights, matches, standings, [], added)
        scored.scores = scoring.scores_from(standings, [relation.score for relation in linked], added, weights)
        return scored

    def _score(self, n: int, weight: float) -> float:
        return self.scoring.score_from(self.standings[n], self.relations[n].score, self.added[n], weight)

    def unweighed_scores(self) -> list[float]:
        """Each score as the person's own words would have it, in the candidates' order."""
        return [
            score if weight == 1.0 else self._score(n, 1.0)
            for n, (score, weight) in enumerate(zip(self.scores, self.weights, strict=True))
        ]

    def link(self, n: int, relation: RelationScore) -> None:
        self.relations[n] = relation
        self.scores[n] = self._score(n, self.weights[n])

    def lean(self, n: int, context: ContextBoost) -> None:
        self.contexts[n] = context
        self.added[n] = context.total
        self.scores[n] = self._score(n, self.weights[n])

    def evidences(self) -> list[float]:
        """What the query gives each score (`query_evidence`), in the candidates' order."""
        evidence_from = self.scoring.evidence_from
        return list(map(evidence_from, self.matches, self.added, self.weights))

    def placed(self, position: dict[str, int]) -> list[Placed]:
        """The candidates as ranking sees them (`Placed`), best score first; `position`: their ids in their order."""
        candidates = self.candidates
        keywords = [c.keyword for c in candidates]
        return placed_order(
            map(
                Placed,
                position,  # its ids, in the candidates' order
                self.scores,
                [round(c.similarity, SCORE_PLACES) for c in candidates],
                self.evidences(),
                keywords,
                [frozenset(c.terms) for c in candidates],
                keyword_evidences(self.scoring, keywords, self.weights),
            )
        )

    def signals(self, n: int, *, weighed: bool = True) -> RecallSignals:
        """The signals the score is of; `weighed`: with whose words they are (what `RecallScoring.weighed` makes)."""
        c, relation = self.candidates[n], self.relations[n]
        return RecallSignals(
            c.similarity,
            c.keyword,
            c.terms,
            self.query_terms,
            c.age_days,
            c.memory.importance,
            c.strength,
            relation.score,
            relation.edge_types,
            self.contexts[n],
            self.weights[n] if weighed else 1.0,
        )


@dataclass(frozen=True)
class _Asked:
    """The query as one recall scores against it."""

    text: str
    vector: list[float]
    terms: int  # distinct query terms
    now: datetime


class Recall:
    def __init__(
        self,
        store: MemoryStore,
        index: VectorIndex,
        embedder: Embedder,
        settings: Settings,
        clock: Clock,
        graph: MemoryGraph | None = None,
    ) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder
        self._settings = settings
        self._clock = clock
        self._graph = graph
        self._scoring = RecallScoring.of(settings)
        self._forms = _FormsByMemory()
        self._across = AcrossHistory(settings.recall_across)
        # A question gathered across the history is scored as of the whole of it (docs/recall.md).
        self._across_scoring = (
            replace(self._scoring, weights=settings.weights.model_copy(update={"recency": 0.0, "strength": 0.0}))
            if settings.recall_across.whole_history
            else self._scoring
        )

    def query_vector(self, query: str) -> list[float]:
        """The query's embedding as `recall` computes it: a caller recalling one text several ways embeds it once."""
        return self._embedder.embed([self._checked_text(query)])[0]

    def recall(self, scope: Scope, query: RecallQuery, *, vector: list[float] | None = None) -> list[RecallHit]:
        """The `limit` best memories for the query, then (`expand_relations`) what the graph reached from them.
        `vector` is the query's embedding when the caller has it already (`query_vector`)."""
        self._check_limit(query.limit)
        text = self._checked_text(query.query)
        if vector is None:
            vector = self._embedder.embed([text])[0]
        asked = _Asked(text=text, vector=vector, terms=len(dict.fromkeys(tokenize(text))), now=self._clock.now())
        across = asks_across(text)
        # The second pass for such a question moves its vector towards its first hits' (feedback): it needs theirs.
        candidates = self._candidates(scope, query, asked, every_vector=across and self._across.second_pass)
        edges = self._graph.edges_for_recall(scope) if self._graph is not None else None
        hits = self._ranked(scope, query, asked, candidates, edges)
        if edges is not None and query.expand_relations:
            hits += edges.expand(query, hits, lambda memory, relation: self._reached(memory, relation, asked))
        return hits

    def _ranked(
        self,
        scope: Scope,
        query: RecallQuery,
        asked: _Asked,
        candidates: list[_Candidate],
        edges: RecallEdges | None,
    ) -> list[RecallHit]:
        """The hits among the candidates: each scored (for a question across the history, as of the whole of it),
        with its conversation's context, the graph's relation component and, for an inference question, the person's
        preferences; then the best, or for a question across the history, the best gathered from each sitting."""
        matches = _query_matches(candidates, self._settings.weights)
        contexts = self._contexts(candidates, matches, asked)
        across = asks_across(asked.text)
        scoring = self._across_scoring if across else self._scoring
        scored = _Scored.of(scoring, candidates, contexts, asked.terms, matches)
        ids = [c.memory.id for c in candidates]
        position = {memory_id: n for n, memory_id in enumerate(ids)}
        by_meaning = by_meaning_order({c.memory.id: c.similarity for c in candidates})
        if edges is not None:
            self._with_relation(edges, scored, query.limit, ids, [position[i] for i in by_meaning])
        if self._settings.recall_inference_boost > 0 and asks_inference(asked.text):
            self._with_preferences(scored)
        if across:
            return self._best_across(scope, query, asked, scored, position, by_meaning)
        return self._best(scored, query.limit, asked.now, position, by_meaning)

    def _best(
        self, scored: _Scored, limit: int, now: datetime, position: dict[str, int], by_meaning: list[str]
    ) -> list[RecallHit]:
        """The `limit` hits to return, boosts never burying a strong semantic match (`keeping_best_by_meaning`):
        ranked on scores alone, and only those returned built as hits. `position`: each candidate's place, by id, in
        the candidates' order; `by_meaning`: their ids closest by cosine first, equal cosines by id
        (`by_meaning_order`)."""
        chosen = self._kept(scored.placed(position), by_meaning, limit)
        return self._hits(scored, now, [position[memory_id] for memory_id in chosen])

    def _hits(self, scored: _Scored, now: datetime, chosen: Iterable[int]) -> list[RecallHit]:
        """The candidates at the `chosen` positions as hits, at the scores ranking gave them."""
        candidates, scoring = scored.candidates, scored.scoring
        return [scoring.hit(self._shown(candidates[n], now), scored.signals(n), scored.scores[n]) for n in chosen]

    def _best_across(
        self,
        scope: Scope,
        query: RecallQuery,
        asked: _Asked,
        scored: _Scored,
        position: dict[str, int],
        by_meaning: list[str],
    ) -> list[RecallHit]:
        """The `limit` hits for a question gathered across the history (docs/recall.md, "A second pass for multi-hop
        questions"): `scored` as of the whole history (`_across_scoring`), taken from each sitting in turn, and with
        the second pass on, fused with what the first hits lead to: one more index search, and one store read of what
        only it found. Strong semantic matches keep their places throughout (`keeping_best_by_meaning`)."""
        candidates = scored.candidates
        sittings = {c.memory.id: c.place.conversation or c.memory.id for c in candidates}
        spread = self._across.spread(scored.placed(position), sittings, 2 * query.limit)
        order = self._kept(spread, by_meaning, query.limit, every=self._across.second_pass)
        if not (self._across.second_pass and order):
            return self._hits(scored, asked.now, [position[memory_id] for memory_id in order[: query.limit]])
        scoring = scored.scoring
        memories = {c.memory.id: c.memory for c in candidates}
        weighed = {c.memory.id: scored.signals(n) for n, c in enumerate(candidates)}
        similarity = {c.memory.id: c.similarity for c in candidates}
        fed = self._across.feedback(asked.text, asked.vector, order, memories)
        again = replace(asked, text=fed.text, vector=fed.vector, terms=len(dict.fromkeys(tokenize(fed.text))))
        found = self._candidates(scope, query, again, known=memories, every_vector=True)
        found_signals = self._signals(found, again)
        found_weighed = {c.memory.id: scoring.weighed(c.memory, found_signals[c.memory.id]) for c in found}
        order = self._across.fuse(order, [p.memory_id for p in _placed(found, found_weighed, scoring)])
        for candidate in found:
            if candidate.memory.id not in memories:  # found by the second pass alone: scored against the question
                alone = self._alone(candidate, asked)
                memories[alone.memory.id] = alone.memory
                similarity[alone.memory.id] = alone.similarity
                weighed[alone.memory.id] = scoring.weighed(alone.memory, self._signals_of(alone, asked))
        by_rank = [Placed(i, float(-n), round(similarity[i], SCORE_PLACES)) for n, i in enumerate(order)]
        order = self._kept(by_rank, by_meaning_order(similarity), query.limit)
        return [
            scoring.hit(decayed_to(memories[i], asked.now, self._settings.governance), weighed[i])
            for i in order[: query.limit]
        ]

    def _kept(self, placed: list[Placed], by_meaning: list[str], limit: int, *, every: bool = False) -> list[str]:
        """The ids of the first `limit` of `placed` in order, with the keep rule (`keeping_best_by_meaning`) applied,
        `by_meaning` their ids closest by cosine first (`by_meaning_order`); `every`: the rest of `placed` after
        them, in its order."""
        settings = self._settings
        chosen = keeping_best_by_meaning(
            placed,
            limit,
            by_meaning,
            settings.recall_semantic_share,
            settings.recall_semantic_min_similarity,
            settings.recall_semantic_margin,
            settings.recall_semantic_tie,
        )
        kept = [p.memory_id for p in chosen]
        if not every:
            return kept
        shown = set(kept)
        return kept + [p.memory_id for p in placed if p.memory_id not in shown]

    def _alone(self, found: _Candidate, asked: _Asked) -> _Candidate:
        """A memory the second pass found, as the question itself sees it: its cosine and shared words, no keyword
        part (BM25 ranked it for another text)."""
        memory = found.memory
        return _Candidate(
            memory,
            similarity=cosine(asked.vector, memory.embedding),
            keyword=0.0,
            terms=matched_in(asked.text, self._forms.of(memory).stems),
            strength=found.strength,
            place=found.place,
            age_days=found.age_days,
        )

    def _shown(self, candidate: _Candidate, now: datetime) -> Memory:
        """A candidate as a hit shows it: decayed to now, as every reader sees a memory (its strength computed)."""
        return decayed_to(candidate.memory, now, self._settings.governance, strength=candidate.strength)

    def _with_preferences(self, scored: _Scored) -> None:
        """An inference question ("would she enjoy…") leans on what was extracted of the person, their preferences,
        goals and facts, not on one message: those get `recall_inference_boost` (docs/recall.md, "Open-domain
        questions")."""
        boost = self._settings.recall_inference_boost
        for n, c in enumerate(scored.candidates):
            if c.memory.trust is Trust.EXTRACTED and c.memory.domain is Domain.USER:
                scored.lean(n, scored.contexts[n]._replace(preference=boost))

    # validation

    def _check_limit(self, limit: int) -> None:
        if not 1 <= limit <= self._settings.max_page_size:
            raise InvalidInputError(f"limit must be between 1 and {self._settings.max_page_size}; got {limit}")

    def _checked_text(self, query: str) -> str:
        text = query.strip()
        if not text:
            raise InvalidInputError("query is empty: send the text to recall by")
        if len(text) > self._settings.max_content_chars:
            raise InvalidInputError(
                f"query has {len(text)} characters; the limit is {self._settings.max_content_chars}"
            )
        return text

    # candidates

    def _candidates(
        self,
        scope: Scope,
        query: RecallQuery,
        asked: _Asked,
        known: dict[str, Memory] | None = None,
        *,
        every_vector: bool = False,
    ) -> list[_Candidate]:
        """The `k` nearest by cosine and the `k` best by BM25, read from the store (the source of truth), less what
        the query's filters or a lagging index let through and what nothing ties to the query. `known`: memories
        this recall has read already, which are not read again. Only a candidate whose cosine the index did not give
        is read with its vector, or each one with `every_vector`."""
        statuses = [s.value for s in recalled_statuses(query.include_archived)]
        pool = max(self._settings.recall_candidate_pool, query.limit * 4)
        index_query = IndexQuery(
            tenant_id=scope.tenant_id,
            user_id=scope.user_id,
            domains=query.domain.domains(),
            statuses=tuple(statuses),
            k=pool,
            agent_id=scope.agent_id,
        )
        # Keyword scores are read deeper than the pool (docs/recall.md): a memory found by meaning keeps its BM25
        # score when it ranks past the pool by keywords alone; only the pool's best by keywords become candidates.
        # Both searches go in one request to the index.
        found_by = self._index.hybrid_search(
            index_query, asked.vector, asked.text, keyword_k=max(pool, self._settings.recall_keyword_depth)
        )
        vector_hits = found_by.by_meaning
        cosines = {**found_by.cosines, **vector_hits}  # what the index knows of each one's cosine
        keyword_hits = found_by.by_keywords
        found = {*vector_hits, *islice(keyword_hits, pool)}
        # Keyword scores are shares of the best one, but of no less than `recall_keyword_floor` of what holding every
        # word of the query would score (docs/recall.md): a best match on one common word is not full evidence.
        best_keyword = max(keyword_hits.values(), default=0.0)
        if found_by.keyword_ceiling is not None:
            best_keyword = max(best_keyword, self._settings.recall_keyword_floor * found_by.keyword_ceiling)
        candidates: list[_Candidate] = []
        known = known or {}
        unread = [i for i in found if i not in known]
        vectors = None if every_vector else {i for i in unread if i not in cosines}
        read = self._store.get_memories(scope, unread, vectors=vectors) if unread or not known else []
        governance = self._settings.governance
        user_rate, relational_rate = decay_rate(Domain.USER, governance), decay_rate(Domain.RELATIONAL, governance)
        now_micros = epoch_micros(asked.now)
        allowed = frozenset(recalled_statuses(query.include_archived))
        memory_type, min_similarity = query.memory_type, query.min_similarity
        words, forms_of = query_terms(asked.text), self._forms.of
        for memory in [*(known[i] for i in found if i in known), *read]:
            if memory_type is not None and memory.type != memory_type:
                continue
            if memory.status not in allowed or not memory.visible_to(scope):
                continue  # the store decides, since a lagging index (a stream, another process) may not
            similarity = cosines.get(memory.id)
            if similarity is None:
                similarity = cosine(asked.vector, memory.embedding)  # a keyword-only candidate the index left out
            if similarity < min_similarity:
                continue
            forms = forms_of(memory)
            terms = matched_among(words, forms.stems)
            if similarity <= 0.0 and not terms:
                continue  # nothing ties it to the query: returning it would be noise
            keyword = keyword_hits.get(memory.id, 0.0) / best_keyword if best_keyword > 0 else 0.0
            # Scored as of now.
            rate = user_rate if memory.domain is Domain.USER else relational_rate
            strength = strength_since(memory.strength, forms.decays_from, now_micros, rate)
            age = (now_micros - forms.happened) / 10**6 / 86_400  # as `_age_days`
            candidates.append(_Candidate(memory, similarity, keyword, terms, strength, forms.place, age))
        return candidates

    # signals

    def _signals_of(self, candidate: _Candidate, asked: _Asked, context: ContextBoost | None = None) -> RecallSignals:
        memory = candidate.memory
        return RecallSignals(
            similarity=candidate.similarity,
            keyword=candidate.keyword,
            matched_terms=candidate.terms,
            query_terms=asked.terms,
            age_days=candidate.age_days,
            importance=memory.importance,
            strength=candidate.strength,
            context=context or NO_CONTEXT,
        )

    def _contexts(self, candidates: list[_Candidate], matched: list[float], asked: _Asked) -> list[ContextBoost]:
        """What each candidate's conversation adds, read from the candidates alone (answers, sittings, speakers,
        neighbours: docs/recall.md) and their query matches (`_query_matches`), in the candidates' order."""
        matches = {c.memory.id: match for c, match in zip(candidates, matched, strict=True)}
        places = {c.memory.id: c.place for c in candidates}
        named = named_speakers(asked.text, {p.speaker for p in places.values() if p.speaker})
        boosts = context_boosts(matches, places, named, self._settings.recall_context)
        # A temporal question also matches on dates (docs/recall.md, "Time as data").
        question = temporal_question(asked.text, asked.now)
        if question is not None:
            dates = {c.memory.id: c.memory.mentioned_dates for c in candidates}
            timed = time_boosts(question, matches, dates, self._settings.recall_time)
            boosts = {i: b._replace(time=timed[i]) if i in timed else b for i, b in boosts.items()}
        return [boosts[c.memory.id] for c in candidates]

    def _signals(self, candidates: list[_Candidate], asked: _Asked) -> dict[str, RecallSignals]:
        """Each candidate's signals, with what its conversation adds (`_contexts`)."""
        contexts = self._contexts(candidates, _query_matches(candidates, self._settings.weights), asked)
        return {c.memory.id: self._signals_of(c, asked, b) for c, b in zip(candidates, contexts, strict=True)}

    def _with_relation(
        self, edges: RecallEdges, scored: _Scored, limit: int, ids: list[str], by_meaning: list[int]
    ) -> None:
        """The relation component of the `relation_score_pool` candidates that score best without it, and of the
        `limit` closest by cosine: edges cost reads, so they are read for the likeliest hits only, and for the strong
        semantic matches, whose boosts are all weighed so that others' do not bury them (an old memory can rank
        past the pool on recency and strength alone). Not for one that cannot be returned whatever its edges: a full
        relation score adds at most its weight, so one that would stay below the `limit`-th best even then is left
        out (the `limit`-th best only rises when relation scores are added)."""
        # Best first, equal ones by id, as `by_meaning` is ordered: (negated value, id, position) triples compare as
        # that key would (ids differ).
        by_score = [
            n for *_, n in sorted(zip([-u for u in scored.unweighed_scores()], ids, range(len(ids)), strict=True))
        ]
        weighed = scored.scores
        best = sorted(weighed, reverse=True)
        cut = best[limit - 1] if len(best) >= limit else float("-inf")
        reach = self._settings.weights.relation
        likeliest = dict.fromkeys([*by_score[: self._settings.graph.relation_score_pool], *by_meaning[:limit]])
        read = [n for n in likeliest if weighed[n] + reach >= cut]
        position = {ids[n]: n for n in read}
        for memory_id, relation in edges.relation_scores(list(position)).items():
            scored.link(position[memory_id], relation)

    def _reached(self, memory: Memory, relation: RelationScore, asked: _Asked) -> RecallHit:
        """A memory expansion reached, scored as a candidate is, keyword part aside (BM25 did not rank it) and with
        no conversation context (that is read from the candidates)."""
        forms = self._forms.of(memory)  # of the instance read, which a store may share, not of the copy shown
        memory = decayed_to(memory, asked.now, self._settings.governance)
        candidate = _Candidate(
            memory,
            similarity=cosine(asked.vector, memory.embedding),
            keyword=0.0,
            terms=matched_in(asked.text, forms.stems),
            strength=memory.strength,
            place=forms.place,
            age_days=_age_days(memory, asked.now),
        )
        return self._scoring.hit(memory, _linked(self._signals_of(candidate, asked), relation))


def _query_matches(candidates: list[_Candidate], weights: RecallWeights) -> list[float]:
    """Each candidate's query match (`query_match_of`), in the candidates' order."""
    return query_matches_of([c.similarity for c in candidates], [c.keyword for c in candidates], weights)


def _age_days(memory: Memory, now: datetime) -> float:
    """Days since the memory happened (or was made), as recency reads it."""
    return (now - (memory.occurred_at or memory.created_at)).total_seconds() / 86_400


def _linked(signals: RecallSignals, relation: RelationScore) -> RecallSignals:
    return signals.linked(relation.score, relation.edge_types)


def _placed(candidates: list[_Candidate], weighed: dict[str, RecallSignals], scoring: RecallScoring) -> list[Placed]:
    """The candidates as ranking sees them, best score first."""
    return placed_order(
        Placed(
            c.memory.id,
            scoring.score(weighed[c.memory.id]),
            round(c.similarity, SCORE_PLACES),
            evidence=query_evidence(scoring, weighed[c.memory.id]),
            keyword=c.keyword,
            terms=frozenset(c.terms),
            keyword_evidence=keyword_evidence_of(scoring, c.keyword, weighed[c.memory.id].speaker_weight),
        )
        for c in candidates
    )
