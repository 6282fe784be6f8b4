"""Boosts lift what matches, never bury what matches best by meaning: a paraphrase that shares no word with the
query keeps its place among many memories that share the query's words."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import numpy as np
import pytest

from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain
from rapport.domain.recall import RecallQuery
from rapport.domain.scope import Scope
from rapport.services.memories import NewMemory

pytestmark = pytest.mark.integration

S = Scope("tenant-a", "user-1")
DIMENSIONS = 64
QUESTION = "What kind of dog does my sibling have?"
FACT = "My sister adopted a beagle puppy last spring"


class MeaningEmbedder:
    """The fact is half-way to the question (cosine 0.5), every other text is orthogonal to it, so only the fact is
    a strong semantic match while the decoys share the question's words."""

    dimensions = DIMENSIONS
    name = "meaning-test"
    closeness = 0.5

    def __init__(self, closeness: float | None = None) -> None:
        if closeness is not None:
            self.closeness = closeness

    def embed(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            if text == QUESTION:
                vector = np.eye(DIMENSIONS)[0]
            elif FACT in text:  # cosine 0.5 to the question: a paraphrase, not a copy
                c = self.closeness
                vector = c * np.eye(DIMENSIONS)[0] + (1 - c * c) ** 0.5 * np.eye(DIMENSIONS)[1]
            else:
                seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "little")
                vector = np.random.default_rng(seed).standard_normal(DIMENSIONS)
                vector[0] = 0.0
            out.append((vector / np.linalg.norm(vector)).tolist())
        return out


def _with_embedder(services: Services, embedder: MeaningEmbedder) -> Services:
    from rapport.adapters.local.embedded_index import EmbeddedVectorIndex

    index = EmbeddedVectorIndex(services.settings.data_dir / "meaning-index.sqlite", DIMENSIONS)
    return build_services(services.settings, clock=services.clock, store=services.store, index=index, embedder=embedder)


@pytest.fixture
def meaning(services: Services) -> Services:
    return _with_embedder(services, MeaningEmbedder())


def test_a_strong_semantic_match_stays_in_the_top_k_among_keyword_decoys(meaning: Services, clock: FixedClock) -> None:
    # Given: the fact, then many later memories that share the question's words ("dog", "sibling", "kind")
    fact = meaning.memories.remember(S, NewMemory(content=FACT, domain=Domain.USER, importance=0.3)).id
    for n in range(40):
        clock.advance(timedelta(days=1))
        decoy = f"My sibling's dog is the kind that barks at the mailman, day {n}"
        meaning.memories.remember(S, NewMemory(content=decoy, domain=Domain.USER, importance=0.9))

    # When: asked in other words, for the five best
    hits = meaning.recall.recall(S, RecallQuery(query=QUESTION, limit=5))

    # Then: keyword, recency and importance lift every decoy above it, and it is still there
    kept = [h for h in hits if h.memory.id == fact]
    assert kept and kept[0].match_reasons[0].startswith("similar in meaning")
    assert len(hits) == 5


def test_by_score_alone_the_boosts_would_have_buried_it(meaning: Services, clock: FixedClock) -> None:
    # The same store: more than four decoys score above the fact, so the test above is about the rule, not an easy
    # case (the rule has more than one way to keep it in, so turning one off would not show that).
    fact = meaning.memories.remember(S, NewMemory(content=FACT, domain=Domain.USER, importance=0.3)).id
    for n in range(40):
        clock.advance(timedelta(days=1))
        decoy = f"My sibling's dog is the kind that barks at the mailman, day {n}"
        meaning.memories.remember(S, NewMemory(content=decoy, domain=Domain.USER, importance=0.9))
    hits = meaning.recall.recall(S, RecallQuery(query=QUESTION, limit=41))
    score = next(h.score for h in hits if h.memory.id == fact)
    assert sum(1 for h in hits if h.score > score) >= 5


def test_the_best_match_below_the_absolute_cut_is_kept_too(services: Services, clock: FixedClock) -> None:
    # Given: the fact only 0.35 close to the question (MiniLM's range for a paraphrase), still the closest there is
    close = _with_embedder(services, MeaningEmbedder(closeness=0.35))
    fact = close.memories.remember(S, NewMemory(content=FACT, domain=Domain.USER, importance=0.3)).id
    for n in range(40):
        clock.advance(timedelta(days=1))
        decoy = f"My sibling's dog is the kind that barks at the mailman, day {n}"
        close.memories.remember(S, NewMemory(content=decoy, domain=Domain.USER, importance=0.9))

    # When / Then: it is kept by being within the margin of the query's best
    assert fact in [h.memory.id for h in close.recall.recall(S, RecallQuery(query=QUESTION, limit=5))]
    # and with no margin the absolute cut alone lets the decoys bury it
    strict = build_services(
        close.settings.model_copy(update={"recall_semantic_margin": 0.0}),
        clock=close.clock,
        store=close.store,
        index=close.index,
        embedder=close.embedder,
    )
    assert fact not in [h.memory.id for h in strict.recall.recall(S, RecallQuery(query=QUESTION, limit=5))]


class RankedEmbedder(MeaningEmbedder):
    """One memory closest to the question (0.5), the fact next (0.45), every other text 0.33 close: a paraphrase
    search where only the first two are strong matches and none shares a word with the question."""

    nearest = "A pet store opened near my brother's flat"

    def embed(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            if text == QUESTION:
                closeness = 1.0
            elif self.nearest in text:
                closeness = 0.5
            elif FACT in text:
                closeness = 0.45
            else:
                closeness = 0.33
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=4).digest(), "little")
            rest = np.random.default_rng(seed).standard_normal(DIMENSIONS)
            rest[0] = 0.0
            rest /= np.linalg.norm(rest)
            vector = closeness * np.eye(DIMENSIONS)[0] + (1 - closeness**2) ** 0.5 * rest
            out.append((vector / np.linalg.norm(vector)).tolist())
        return out


def test_recency_and_importance_alone_do_not_bury_a_strong_match(services: Services, clock: FixedClock) -> None:
    # Given: the fact and the closest memory, then forty later, more important memories, less close by meaning and
    # sharing no word with the question: only recency and importance put them above the fact
    ranked = _with_embedder(services, RankedEmbedder())
    ranked.memories.remember(S, NewMemory(content=RankedEmbedder.nearest, domain=Domain.USER, importance=0.3))
    fact = ranked.memories.remember(S, NewMemory(content=FACT, domain=Domain.USER, importance=0.1)).id
    for n in range(40):
        clock.advance(timedelta(days=1))
        ranked.memories.remember(
            S, NewMemory(content=f"Went to the market for apples, day {n}", domain=Domain.USER, importance=0.9)
        )

    # When: asked for the five best (the reserve, a fifth of five, keeps only the closest)
    hits = ranked.recall.recall(S, RecallQuery(query=QUESTION, limit=5))

    # Then: the fact is there, at its own score
    ids = [h.memory.id for h in hits]
    assert fact in ids and len(hits) == 5
    # and by score alone it would not have been: more than four of the others score above it
    everything = ranked.recall.recall(S, RecallQuery(query=QUESTION, limit=40))
    score = next(h.score for h in everything if h.memory.id == fact)
    assert sum(1 for h in everything if h.score > score) >= 5
