"""Reference retrievers over the raw turns, outside the product: BM25 alone, dense alone, and their RRF hybrid."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from rapport.evaluation.locomo import Session, Turn
from rapport.ports.embedder import Embedder

_WORD = re.compile(r"\w+")
# The usual Okapi constants (rank_bm25's defaults) and the usual RRF constant: a plain, untuned reference.
BM25_K1 = 1.5
BM25_B = 0.75
RRF_K = 60


def render_raw_turn(session: Session, turn: Turn) -> str:
    """The reference rendering: `[date] Speaker said, "text"`, the image caption appended when there is one."""
    text = turn.text if turn.caption is None else f"{turn.text} [shares a photo: {turn.caption}]"
    return f'[{session.date_text}] {turn.speaker} said, "{text}"'


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class Bm25Ranker:
    """Okapi BM25 with plain lower-cased word tokens: no stemming, no stopwords, nothing learnt from the data."""

    def __init__(self, documents: Sequence[str]) -> None:
        self._counts = [Counter(_words(d)) for d in documents]
        self._lengths = np.array([sum(c.values()) for c in self._counts], dtype=np.float64)
        self._average = float(self._lengths.mean()) if len(documents) else 1.0
        frequency: Counter[str] = Counter()
        for counts in self._counts:
            frequency.update(counts.keys())
        n = len(documents)
        self._idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in frequency.items()}

    def scores(self, query: str) -> np.ndarray:
        scores = np.zeros(len(self._counts), dtype=np.float64)
        norm = BM25_K1 * (1 - BM25_B + BM25_B * self._lengths / max(self._average, 1e-9))
        for term in set(_words(query)):
            idf = self._idf.get(term)
            if idf is None:
                continue
            tf = np.array([c.get(term, 0) for c in self._counts], dtype=np.float64)
            scores += idf * tf * (BM25_K1 + 1) / (tf + norm)
        return scores


class DenseRanker:
    """Cosine over one embedding per rendered turn."""

    def __init__(self, documents: Sequence[str], embedder: Embedder) -> None:
        self._embedder = embedder
        self._matrix = np.asarray(embedder.embed(list(documents)), dtype=np.float32)

    def scores_many(self, queries: Sequence[str]) -> np.ndarray:
        vectors = np.asarray(self._embedder.embed(list(queries)), dtype=np.float32)
        return np.asarray(vectors @ self._matrix.T, dtype=np.float64)


def top_k(scores: np.ndarray, k: int) -> list[int]:
    """Positions of the k best scores, best first, ties by position (stable)."""
    order = np.argsort(-scores, kind="stable")
    return [int(i) for i in order[:k]]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[int]:
    """Σ 1/(k + rank) over the rankings; the classic parameter-free fusion of Cormack et al. (2009)."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, position in enumerate(ranking, start=1):
            fused[position] = fused.get(position, 0.0) + 1.0 / (k + rank)
    return sorted(fused, key=lambda p: (-fused[p], p))
