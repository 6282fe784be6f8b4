"""Embedded `VectorIndex`: exact cosine search and BM25 in process, persisted in a SQLite file beside the store."""

from __future__ import annotations

import math
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import pairwise
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

import numpy as np

from rapport.adapters.local.thread_pools import CORES, CallerShare, across_cores
from rapport.domain.models import Domain, Memory
from rapport.domain.rendering import search_text
from rapport.domain.scope import DEFAULT_AGENT, Scope
from rapport.domain.text import tokenize
from rapport.errors import InvalidInputError, StorageError
from rapport.ports.vector_index import HybridHits, IndexHit, IndexQuery, RelationshipTally

_BM25_K1 = 1.2
_BM25_B = 0.75

# From this many entries a search by meaning may run in two passes (`_nearest`): half-precision scores of every
# entry, then float32 scores of those that can be among the best. Where the product is bound by memory, float16 rows
# are half the bytes (on one host ~0.5 against ~1.4 ms at 10,000 entries, ~5 against ~15 ms at 100,000); where the
# CPU's float16 kernel is slow, they cost more than float32's (on another, 1.5 against 0.9 ms at 10,000). So a
# segment times both on its own rows and keeps the faster (`_Segment.half_kernel`), again each time it has doubled.
HALF_PRECISION_FROM = 4_096
# Two passes are kept only when they take at most this share of one float32 pass's time: the measurement is a few
# searches, and a tie is not worth the float16 copy's memory.
_HALF_MUST_TAKE = 0.9
# The most a float16 score of unit vectors can be off its float32 score, with room to spare: each factor rounded to
# float16 (relative 2^-11, so at most 2 * 2^-11 over the sum of |products|, which Cauchy-Schwarz holds to 1), the
# score rounded to float16 (2^-12), float32 accumulation over a few hundred terms (~2^-15): about 1.3e-3 in all.
_HALF_ERROR = 2.0**-8

# A search's float32 product over at least twice this many rows is split across the machine's cores (`_product`):
# the product is bound by memory, and each core brings its own share of the bandwidth (on two cores 0.77 against
# 0.53 ms at 10,000 entries, 14 against 9 ms at 100,000); below, handing half to another thread costs more than it
# saves.
ROWS_PER_CORE = 2_048

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    tenant_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    domain TEXT NOT NULL,
    status TEXT NOT NULL,
    content TEXT NOT NULL,
    embedding BLOB NOT NULL,
    PRIMARY KEY (tenant_id, user_id, memory_id)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass
class _Segment:
    """The entries of one tenant × end user: every search is fenced to one, so each has its own matrix.

    Everything a search reads per entry is a numpy array by position (vector, domain and status codes, length), and
    postings map a term to {position: term frequency}, so both searches are array arithmetic over the entries they
    touch rather than a Python pass over every entry."""

    dimensions: int
    ids: list[str] = field(default_factory=list)
    positions: dict[str, int] = field(default_factory=dict)
    term_counts: list[Counter[str]] = field(default_factory=list)
    half_from: int = HALF_PRECISION_FROM
    matrix: np.ndarray = field(init=False)
    # The matrix in float16, row for row, for the first pass of a search: made by the first search that runs one (or
    # times one), and kept with the matrix while two passes are the faster (none for a segment never searched so).
    half: np.ndarray | None = field(default=None, init=False)
    # Whether two passes beat one on this host and these rows, and at how many entries that was measured.
    _half_faster: bool = field(default=False, init=False)
    _half_measured_at: int = field(default=0, init=False)
    # How a search's product over these rows is split between the calling thread and the pool's (`_split_product`).
    split: CallerShare = field(default_factory=CallerShare, init=False)
    domain_codes: np.ndarray = field(init=False)
    status_codes: np.ndarray = field(init=False)
    lengths: np.ndarray = field(init=False)
    codes: dict[str, int] = field(default_factory=dict)  # domain and status values, each a small integer
    postings: dict[str, dict[int, int]] = field(default_factory=dict)
    total_length: int = 0
    # A term's postings as (positions, term frequencies) arrays, made when a search first reads the term and dropped
    # when a write changes its postings: a common word's postings are thousands of entries, read query after query.
    _posting_arrays: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    # The domain/status mask of a filter and its positions (None: all), dropped on every write (recomputed from the
    # code arrays in microseconds).
    _masks: dict[tuple[frozenset[str], frozenset[str]], tuple[np.ndarray, np.ndarray | None]] = field(
        default_factory=dict
    )

    def __post_init__(self) -> None:
        self.matrix = np.zeros((16, self.dimensions), dtype=np.float32)
        self.domain_codes = np.zeros(16, dtype=np.int16)
        self.status_codes = np.zeros(16, dtype=np.int16)
        self.lengths = np.zeros(16, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.ids)

    def _code(self, value: str) -> int:
        return self.codes.setdefault(value, len(self.codes))

    def _grow(self) -> None:
        capacity = self.matrix.shape[0] * 2
        self.matrix = np.concatenate([self.matrix, np.zeros_like(self.matrix)])[:capacity]
        if self.half is not None:
            self.half = np.concatenate([self.half, np.zeros_like(self.half)])[:capacity]
        self.domain_codes = np.concatenate([self.domain_codes, np.zeros_like(self.domain_codes)])
        self.status_codes = np.concatenate([self.status_codes, np.zeros_like(self.status_codes)])
        self.lengths = np.concatenate([self.lengths, np.zeros_like(self.lengths)])

    def upsert(self, memory_id: str, domain: str, status: str, content: str, vector: np.ndarray) -> None:
        self._masks.clear()
        if memory_id in self.positions:
            self.remove(memory_id)
        position = len(self.ids)
        if position == self.matrix.shape[0]:
            self._grow()
        self.matrix[position] = vector
        if self.half is not None:
            self.half[position] = vector
        self.domain_codes[position] = self._code(domain)
        self.status_codes[position] = self._code(status)
        self.ids.append(memory_id)
        self.positions[memory_id] = position
        counts = Counter(tokenize(content))
        self.term_counts.append(counts)
        length = sum(counts.values())
        self.lengths[position] = length
        self.total_length += length
        for term, tf in counts.items():
            self.postings.setdefault(term, {})[position] = tf
            self._posting_arrays.pop(term, None)

    def remove(self, memory_id: str) -> bool:
        position = self.positions.pop(memory_id, None)
        if position is None:
            return False
        self._masks.clear()
        counts = self.term_counts[position]
        self.total_length -= int(self.lengths[position])
        for term in counts:
            self._posting_arrays.pop(term, None)
            posting = self.postings.get(term)
            if posting is not None:
                posting.pop(position, None)
                if not posting:
                    del self.postings[term]
        last = len(self.ids) - 1
        if position != last:
            # Swap the last entry into the hole so the arrays stay dense; its postings follow it.
            moved = self.ids[last]
            self.matrix[position] = self.matrix[last]
            if self.half is not None:
                self.half[position] = self.half[last]
            self.domain_codes[position] = self.domain_codes[last]
            self.status_codes[position] = self.status_codes[last]
            self.lengths[position] = self.lengths[last]
            self.ids[position] = moved
            self.term_counts[position] = self.term_counts[last]
            self.positions[moved] = position
            for term in self.term_counts[position]:
                self._posting_arrays.pop(term, None)
                posting = self.postings[term]
                posting[position] = posting.pop(last)
        self.ids.pop()
        self.term_counts.pop()
        return True

    def allowed_mask(self, query: IndexQuery) -> np.ndarray:
        """Which positions the query's domains (of its assistant) and statuses allow (read-only: shared until the
        next write)."""
        return self._filter(query)[0]

    def _filter(self, query: IndexQuery) -> tuple[np.ndarray, np.ndarray | None]:
        key = (frozenset(_shelf(d, query.agent_id) for d in query.domains), frozenset(query.statuses))
        found = self._masks.get(key)
        if found is None:
            size = len(self.ids)
            domains, statuses = ([self.codes[v] for v in values if v in self.codes] for values in key)
            mask = np.isin(self.domain_codes[:size], domains) & np.isin(self.status_codes[:size], statuses)
            found = self._masks[key] = (mask, None if bool(mask.all()) else np.flatnonzero(mask))
        return found

    def _postings_of(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        arrays = self._posting_arrays.get(term)
        if arrays is None:
            posting = self.postings.get(term)
            if not posting:
                return None
            arrays = self._posting_arrays[term] = (
                np.fromiter(posting.keys(), dtype=np.int64, count=len(posting)),
                np.fromiter(posting.values(), dtype=np.float64, count=len(posting)),
            )
        return arrays

    def allowed_positions(self, query: IndexQuery) -> np.ndarray | None:
        """The positions `allowed_mask` allows, or None when it allows every entry (read-only, as the mask)."""
        return self._filter(query)[1]

    def cosines(self, positions: np.ndarray, vector: np.ndarray) -> np.ndarray:
        """The float32 cosines of the entries at `positions` to the unit `vector`."""
        return self.matrix[positions] @ vector

    def half_kernel(self) -> _HalfKernel | None:
        """What searches this segment float16 first (`_nearest`): None below `half_from` entries, in a process that
        has not loaded torch, or where two passes measured slower than one on these rows, and the search is
        float32's alone. Measured when the segment first reaches `half_from` and each time it has doubled since; the
        float16 copy is dropped while one pass is the faster."""
        size = len(self.ids)
        if size < self.half_from:
            return None
        kernel = _half_kernel()
        if kernel is None:
            return None
        if size >= 2 * self._half_measured_at:
            self._half_faster = _two_passes_faster(self, kernel)
            self._half_measured_at = size
            if not self._half_faster:
                self.half = None
        return kernel if self._half_faster else None

    def half_rows(self) -> np.ndarray:
        """The entries' float16 rows, the copy made now if no search has made it yet."""
        if self.half is None:
            self.half = self.matrix.astype(np.float16)
        return self.half[: len(self.ids)]

    def keyword_ceiling(self, terms: list[str]) -> float:
        """What `bm25` gives an entry of average length holding each of the terms once: the sum of their idf (a term
        no entry holds has the largest)."""
        return sum(_idf(len(self.ids), len(self.postings.get(term) or ())) for term in terms)

    def bm25(self, terms: list[str]) -> np.ndarray:
        """Okapi BM25 of every entry for the terms (0 where none occurs), accumulated term by term."""
        size = len(self.ids)
        scores = np.zeros(size, dtype=np.float64)
        average_length = max(self.total_length / size if size else 1.0, 1e-9)
        for term in terms:
            arrays = self._postings_of(term)
            if arrays is None:
                continue
            where, tf = arrays
            idf = _idf(size, len(where))
            norm = tf + _BM25_K1 * (1 - _BM25_B + _BM25_B * self.lengths[where] / average_length)
            scores[where] += idf * tf * (_BM25_K1 + 1) / norm
        return scores


def _idf(size: int, holding: int) -> float:
    """BM25's inverse document frequency of a term `holding` of `size` entries hold."""
    return math.log(1 + (size - holding + 0.5) / (holding + 0.5))


def _nearest(segment: _Segment, query: IndexQuery, vector: np.ndarray) -> list[IndexHit]:
    """The `query.k` entries the query's filter allows with the best float32 cosines to the unit `vector`, best
    first (`_nearest_positions`)."""
    ranked, ranked_scores, _ = _nearest_positions(segment, query, vector)
    ids = segment.ids
    return [_hit(ids[i], score) for i, score in zip(ranked.tolist(), ranked_scores.tolist(), strict=True)]


class _Nearest(NamedTuple):
    positions: np.ndarray  # of the nearest, best first
    scores: np.ndarray  # their float32 cosines
    every: np.ndarray | None  # every entry's float32 cosine, by position, where the search computed them all


def _nearest_positions(segment: _Segment, query: IndexQuery, vector: np.ndarray) -> _Nearest:
    """The positions of the `query.k` entries the query's filter allows with the best float32 cosines to the unit
    `vector`, best first, and those cosines. On a large segment a first pass over the float16 rows keeps those
    within twice their error of its k-th best: each of the float32 k best is among them (it scores at least the k-th
    float32 score, which is at least the k-th float16 one less the error, and its float16 score is within the error
    of its own), so the second pass, float32 over those alone, answers exactly as one float32 pass over every entry."""
    allowed = segment.allowed_positions(query)
    if allowed is not None and allowed.size == 0:
        return _Nearest(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32), None)
    kernel = segment.half_kernel()
    if kernel is None:
        return _one_pass(segment, allowed, query.k, vector)
    return _two_passes(segment, kernel, allowed, query.k, vector)


def _one_pass(segment: _Segment, allowed: np.ndarray | None, k: int, vector: np.ndarray) -> _Nearest:
    """The positions of the `k` best float32 cosines among `allowed` (None: every entry), best first, and theirs."""
    scores = _product(segment.matrix[: len(segment)], vector, segment.split)
    if allowed is None:
        # Every entry allowed (the usual filter): the partition runs on the scores as they are, as it would on
        # `scores[arange(size)]`, without the copy.
        chosen = np.argpartition(-scores, min(k, scores.size) - 1)[:k]
    else:
        k = min(k, allowed.size)
        chosen = allowed[np.argpartition(-scores[allowed], k - 1)[:k]]
    ranked = chosen[np.argsort(-scores[chosen], kind="stable")]
    return _Nearest(ranked, scores[ranked], scores)


def _product(rows: np.ndarray, vector: np.ndarray, split: CallerShare) -> np.ndarray:
    """`rows @ vector` in float32, split across the cores (`_split_product`). The scores are the unsplit product's
    within float32's rounding, not always to the bit: BLAS's kernel takes a matrix's rows in blocks and groups whose
    bounds depend on how many rows it is given, so even one product's score of a row can change in its last bit when
    rows are added. Recall ranks on scores to six places (`domain.recall.SCORE_PLACES`)."""
    scores = np.empty(rows.shape[0], dtype=np.float32)
    if _split_product(
        rows.shape[0], split, lambda start, stop: np.matmul(rows[start:stop], vector, out=scores[start:stop])
    ):
        return scores
    return rows @ vector


def _split_product(size: int, split: CallerShare, part: Callable[[int, int], object]) -> bool:
    """`part(start, stop)` over rows `0..size` in a part per core when there are `ROWS_PER_CORE` of them for each
    (`across_cores`: numpy and torch release the GIL for a product), each part writing its own slice of the scores;
    the calling thread's part as `split` sizes it (the segment's: its rows decide what a part costs against a
    thread's wake). False, and nothing run, when the rows are too few to split."""
    parts = min(CORES.count, size // ROWS_PER_CORE)
    if parts < 2:
        return False
    bounds = split.bounds(size, parts)
    across_cores([partial(part, start, stop) for start, stop in pairwise(bounds)], split)
    return True


def _two_passes(
    segment: _Segment, kernel: _HalfKernel, allowed: np.ndarray | None, k: int, vector: np.ndarray
) -> _Nearest:
    """What `_one_pass` answers, float16 over every entry first, float32 over those within the error of its k-th."""
    half = kernel.cosines(segment.half_rows(), vector, segment.split)
    if allowed is not None:
        half = half[allowed]
    k = min(k, half.size)
    near = np.flatnonzero(half >= kernel.kth_largest(half, k) - 2 * _HALF_ERROR)
    pool = near if allowed is None else allowed[near]
    scores = segment.cosines(pool, vector)
    chosen = np.argpartition(-scores, k - 1)[:k] if pool.size > k else np.arange(pool.size)
    order = chosen[np.argsort(-scores[chosen], kind="stable")]
    return _Nearest(pool[order], scores[order], None)


def _two_passes_faster(segment: _Segment, kernel: _HalfKernel, rounds: int = 9, k: int = 50) -> bool:
    """Whether two passes search this segment in at most `_HALF_MUST_TAKE` of one pass's time: both timed in
    turn on the same rows for a unit vector drawn at random, the fastest of `rounds` each (a search's own k is near
    recall's pool; the first pass's cost does not depend on it). The fastest, not the median: a busy machine only
    ever adds time, so the fastest of each is the closest to what each kernel costs, where the medians of a few
    rounds on two busy cores chose either way from one measurement to the next.

    Each is timed with the rows out of the cache (`_Evicted`), as a search meets them: searched back to back, 10,000
    rows stay in the cache and the two kernels tie (0.48 against 0.47 ms on one host), where within recalls, between
    which the rows leave it, two passes took 1.77 against 1.99 ms for the whole recall."""
    vector = np.random.default_rng(len(segment)).standard_normal(segment.dimensions).astype(np.float32)
    vector /= np.linalg.norm(vector)
    segment.half_rows()  # the copy is made before the clock starts, as a search that keeps it finds it made
    evicted = _Evicted(segment.matrix[: len(segment)].nbytes)
    one, two = [], []
    for _ in range(rounds):
        evicted.now()
        started = time.perf_counter()
        _one_pass(segment, None, k, vector)
        one.append(time.perf_counter() - started)
        evicted.now()
        started = time.perf_counter()
        _two_passes(segment, kernel, None, k, vector)
        two.append(time.perf_counter() - started)
    return min(two) <= _HALF_MUST_TAKE * min(one)


class _Evicted:
    """A scratch buffer written over to push a segment's rows out of the CPU's caches before a timed search: twice
    the rows' bytes, within 8 MiB (more than a core's own caches) and 64 MiB (more than a shared last-level cache;
    rows larger than that never stay in one anyway)."""

    def __init__(self, rows_bytes: int) -> None:
        size = min(max(2 * rows_bytes, 8 * 2**20), 64 * 2**20)
        self._scratch = np.zeros(size // 8, dtype=np.float64)

    def now(self) -> None:
        self._scratch += 1.0


def _best_by_keywords(segment: _Segment, query: IndexQuery, terms: list[str], k: int) -> list[tuple[float, str]]:
    """The `k` entries the filter allows with the best BM25 for the terms, best first, equal scores by id: each as its
    negated score and its id (what `_hit` is built from)."""
    scores = segment.bm25(terms)
    matched = np.flatnonzero((scores > 0) & segment.allowed_mask(query))
    if matched.size > k:
        # The k best without sorting every match (a common word can match most of a large store), and every entry
        # tied with the k-th, so equal scores are ordered by id, not by where they sit in the arrays.
        best = matched[np.argpartition(-scores[matched], k - 1)[:k]]
        matched = matched[scores[matched] >= scores[best].min()]
    ids = segment.ids
    # (-score, id) pairs sort best first, equal scores by id, as tuples compare: no key function per pair. Put in
    # score order by numpy first, the sort only orders equal scores by id (a nearly sorted list costs it one pass).
    negated = -scores[matched]
    order = np.argsort(negated, kind="stable")
    found = list(zip(negated[order].tolist(), [ids[p] for p in matched[order].tolist()], strict=True))
    found.sort()
    return found[:k]


class _HalfKernel:
    """torch's float16 product and its top-k: numpy's float16 product has no BLAS behind it (forty times slower than
    its float32 one), and at 100,000 scores `torch.topk` finds the k-th best in a third of `np.partition`'s time."""

    def __init__(self, torch: ModuleType) -> None:
        self._torch = torch

    def cosines(self, rows: np.ndarray, vector: np.ndarray, split: CallerShare) -> np.ndarray:
        """float16 `rows` times the unit `vector` (rounded to float16), as float32 scores, split across the cores as
        float32's product is (`_split_product`): torch runs on half the cores (`thread_pools.model_threads`), so one
        product would leave the others idle (on two cores 4.7-6.4 against 3.3-3.5 ms at 100,000 rows). Each score is
        a row's own dot product, whichever part computes it."""
        torch = self._torch
        matrix, query = torch.from_numpy(rows), torch.from_numpy(vector.astype(np.float16))
        scores = torch.empty(rows.shape[0], dtype=torch.float16)
        if not _split_product(
            rows.shape[0], split, lambda start, stop: torch.mv(matrix[start:stop], query, out=scores[start:stop])
        ):
            scores = matrix @ query
        return scores.float().numpy()

    def kth_largest(self, values: np.ndarray, k: int) -> float:
        return float(self._torch.topk(self._torch.from_numpy(values), k, sorted=False).values.min())


def _half_kernel() -> _HalfKernel | None:
    """torch's kernel where the process has torch already (the local extra's MiniLM brings it), else None: the index
    then searches in float32 alone. It never loads torch for itself: a server running the hashing embedder would pay
    a few hundred MB and a second or two of import for its searches alone."""
    if "torch" not in sys.modules:
        return None
    import torch  # loaded already: this waits for a load another thread may be in the middle of, and returns it

    return _HalfKernel(torch)


_new_object = object.__new__
_set_slot = object.__setattr__


def _hit(memory_id: str, score: float) -> IndexHit:
    """What `IndexHit.model_construct(memory_id=…, score=…)` builds (every field set, no extra, no private state), in
    a third of its time: a recall builds a hundred-odd hits, and `model_construct`'s generic pass over the fields was
    a fifth of the index's time past the matrix product. `test_embedded_index_arrays.py` holds the two equal."""
    hit = _new_object(IndexHit)
    _set_slot(hit, "__dict__", {"memory_id": memory_id, "score": score})
    _set_slot(hit, "__pydantic_fields_set__", {"memory_id", "score"})  # a set of its own: `model_copy` adds to it
    _set_slot(hit, "__pydantic_extra__", None)
    _set_slot(hit, "__pydantic_private__", None)
    return hit


def _shelf(domain: Domain, agent_id: str) -> str:
    """What an entry's `domain` column holds: the domain, and for a named assistant's relational memory the assistant
    too (`relational@coach`), so a search of one assistant's relationship is the same mask as a search of a domain.
    An entry written before assistants had names is the default assistant's."""
    if domain is Domain.RELATIONAL and agent_id != DEFAULT_AGENT:
        return f"{domain.value}{_AGENT_MARK}{agent_id}"
    return domain.value


_AGENT_MARK = "@"
# Scores one product of `knn_search_many` holds at most (float32: 64 MB), whatever the segment's size: at 100,000
# entries ~170 vectors a product, enough rows for the product to run at arithmetic speed (fewer ran twice as long).
_SCORES_PER_PRODUCT = 1 << 24


def _float32_at_least(value: float) -> np.float32:
    """The least float32 not below `value`: a float32 score passes it exactly when the score, as a Python float,
    is not below `value` (as the callers of `knn_search` compare)."""
    floor = np.float32(value)
    return floor if float(floor) >= value else np.nextafter(floor, np.float32(np.inf))


class EmbeddedVectorIndex:
    """Exact search: at one end user's scale (up to ~10^5 memories) a matrix product beats an ANN graph's upkeep."""

    def __init__(self, path: Path, dimensions: int, *, half_precision_from: int = HALF_PRECISION_FROM) -> None:
        """`half_precision_from`: the entries from which a person's search by meaning runs its float16 first pass
        (`_nearest`)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self._dimensions = dimensions
        self._half_from = half_precision_from
        self._lock = threading.RLock()
        self._segments: dict[tuple[str, str], _Segment] = {}
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA secure_delete=ON")  # as the store: erased entries leave no bytes behind
        self._conn.executescript(_SCHEMA)
        self._check_dimensions()
        self._load()
        self._data_version = self._committed_elsewhere()

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _check_dimensions(self) -> None:
        row = self._conn.execute("SELECT value FROM meta WHERE key='dimensions'").fetchone()
        if row is None:
            self._conn.execute("INSERT INTO meta (key, value) VALUES ('dimensions', ?)", (str(self._dimensions),))
        elif int(row[0]) != self._dimensions:
            raise StorageError(
                f"the index at this data directory holds {row[0]}-dimensional vectors but the embedder makes "
                f"{self._dimensions}: run `rapport reindex` after changing embedders"
            )

    def _load(self) -> None:
        rows = self._conn.execute(
            "SELECT tenant_id, user_id, memory_id, domain, status, content, embedding FROM entries"
        )
        for tenant_id, user_id, memory_id, domain, status, content, blob in rows:
            vector = np.frombuffer(blob, dtype=np.float32)
            self._segment(Scope(tenant_id, user_id)).upsert(memory_id, domain, status, content, vector)

    def _committed_elsewhere(self) -> int:
        """SQLite's data_version: it changes when another connection (another process: `rapport jobs run` beside
        `rapport serve`) commits to the file, and not for this connection's own writes."""
        return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    def _refreshed_segment(self, scope: Scope) -> _Segment | None:
        """The user's segment, reloaded first when another process has written the file since it was read. Call
        with the lock held. One integer read per search; a reload only after someone else wrote."""
        version = self._committed_elsewhere()
        if version != self._data_version:
            self._segments.clear()
            self._load()
            self._data_version = version
        return self._segments.get((scope.tenant_id, scope.user_id))

    def _segment(self, scope: Scope) -> _Segment:
        key = (scope.tenant_id, scope.user_id)
        segment = self._segments.get(key)
        if segment is None:
            segment = self._segments[key] = _Segment(self._dimensions, half_from=self._half_from)
        return segment

    def _vector(self, embedding: list[float] | None) -> np.ndarray:
        if embedding is None:
            raise InvalidInputError("a memory must be embedded before it is indexed")
        vector = np.asarray(embedding, dtype=np.float32)
        if vector.shape != (self._dimensions,):
            raise InvalidInputError(f"embedding has {vector.shape[0]} dimensions; this index holds {self._dimensions}")
        norm = float(np.linalg.norm(vector))
        if not np.isfinite(norm):
            raise InvalidInputError("embedding holds NaN or infinite values")
        # Unit length, so a dot product is the cosine whatever the embedder returned (as in the OpenSearch adapter).
        return vector / norm if norm > 0 else vector

    def upsert(self, memory: Memory) -> None:
        vector = self._vector(memory.embedding)
        text = search_text(memory)
        with self._lock:
            try:
                self._conn.execute(
                    "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        memory.tenant_id,
                        memory.user_id,
                        memory.id,
                        _shelf(memory.domain, memory.agent_id),
                        memory.status.value,
                        text,
                        vector.tobytes(),
                    ),
                )
            except sqlite3.Error as exc:
                raise StorageError(f"local index write failed: {exc}") from exc
            shelf = _shelf(memory.domain, memory.agent_id)
            self._segment(memory.scope).upsert(memory.id, shelf, memory.status.value, text, vector)

    def delete(self, scope: Scope, memory_id: str) -> None:
        with self._lock:
            self._conn.execute(
                "DELETE FROM entries WHERE tenant_id=? AND user_id=? AND memory_id=?",
                (scope.tenant_id, scope.user_id, memory_id),
            )
            segment = self._segments.get((scope.tenant_id, scope.user_id))
            if segment is not None:
                segment.remove(memory_id)

    def delete_user(self, scope: Scope) -> int:
        with self._lock:
            removed = self._conn.execute(
                "DELETE FROM entries WHERE tenant_id=? AND user_id=?", (scope.tenant_id, scope.user_id)
            ).rowcount
            self._segments.pop((scope.tenant_id, scope.user_id), None)
            # The write-ahead log still holds the vectors and contents written before: checkpoint and truncate it.
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return int(removed)

    def count(self, scope: Scope) -> int:
        with self._lock:
            segment = self._refreshed_segment(scope)
            return len(segment) if segment else 0

    def relationship_tallies(self, tenant_id: str) -> dict[str, RelationshipTally]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT domain, count(DISTINCT user_id), count(*) FROM entries WHERE tenant_id=? AND domain>=?"
                " AND domain<? GROUP BY domain",
                (tenant_id, Domain.RELATIONAL.value, f"{Domain.RELATIONAL.value}{chr(ord(_AGENT_MARK) + 1)}"),
            ).fetchall()
        tallies: dict[str, RelationshipTally] = {}
        for shelf, people, memories in rows:
            _, _, agent = str(shelf).partition(_AGENT_MARK)
            tallies[agent or DEFAULT_AGENT] = RelationshipTally(people=int(people), relational_memories=int(memories))
        return tallies

    def vectors(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, list[float]]:
        with self._lock:
            segment = self._refreshed_segment(scope)
            if not segment:
                return {}
            positions = segment.positions
            # Copied out of the matrix: a later write may grow or reorder it under a caller still holding the rows.
            return {i: segment.matrix[positions[i]].tolist() for i in dict.fromkeys(memory_ids) if i in positions}

    def knn_search(self, query: IndexQuery, vector: list[float]) -> list[IndexHit]:
        query_vector = self._vector(vector)
        with self._lock:
            segment = self._refreshed_segment(Scope(query.tenant_id, query.user_id))
            return _nearest(segment, query, query_vector) if segment else []

    def knn_search_many(
        self, query: IndexQuery, vectors: Sequence[list[float]], *, min_score: float | None = None
    ) -> list[list[IndexHit]]:
        """One matrix product per chunk of vectors instead of one matrix-vector product each: the latter reads the
        whole matrix from memory for every vector, the former once per chunk, so a batch costs arithmetic rather
        than memory traffic. Equal scores rank by position, where `knn_search` leaves their order to the partition."""
        answers: list[list[IndexHit]] = [[] for _ in vectors]
        if not vectors:
            return answers
        queries = np.stack([self._vector(vector) for vector in vectors])
        with self._lock:
            segment = self._refreshed_segment(Scope(query.tenant_id, query.user_id))
            if not segment:
                return answers
            size = len(segment)
            allowed = segment.allowed_mask(query)
            k = min(query.k, int(np.count_nonzero(allowed)))
            if k < 1:
                return answers
            rows = segment.matrix[:size]
            floor = None if min_score is None else _float32_at_least(min_score)
            step = max(1, _SCORES_PER_PRODUCT // size)
            for start in range(0, len(queries), step):
                scores = queries[start : start + step] @ rows.T
                scores[:, ~allowed] = -np.inf
                for offset, row in enumerate(scores):
                    kept = np.flatnonzero(row >= floor) if floor is not None else np.arange(size)
                    if kept.size > k:
                        kept = kept[np.argpartition(-row[kept], k - 1)[:k]]
                        kept.sort()
                    ranked = kept[np.argsort(-row[kept], kind="stable")]
                    answers[start + offset] = [
                        IndexHit(memory_id=segment.ids[i], score=float(row[i])) for i in ranked.tolist()
                    ]
            return answers

    def hybrid_search(self, query: IndexQuery, vector: list[float], text: str, *, keyword_k: int) -> HybridHits:
        # In process there is no request to save, but one pass: the segment refreshed once, the query vector made
        # once, and the cosines of the keyword hits a caller takes as candidates (the first `k`) computed from their
        # float32 rows here, as a hit's score is: no vector of a keyword-only candidate read from the store and summed
        # in Python. Hits built here, so not checked again.
        query_vector = self._vector(vector)
        terms = list(dict.fromkeys(tokenize(text)))
        with self._lock:
            segment = self._refreshed_segment(Scope(query.tenant_id, query.user_id))
            if not segment:
                return HybridHits.model_construct(by_meaning={}, by_keywords={}, cosines={})
            nearest = _nearest_positions(segment, query, query_vector)
            ids = segment.ids
            by_meaning = dict(zip([ids[i] for i in nearest.positions.tolist()], nearest.scores.tolist(), strict=True))
            by_keywords = _best_by_keywords(segment, query, terms, keyword_k) if terms else []
            positions = segment.positions
            unmeant = [i for _, i in by_keywords[: query.k] if i not in by_meaning]
            at = np.array([positions[i] for i in unmeant], dtype=np.int64)
            # The search's own scores where it computed every entry's: the float32 product the hits' come from.
            found = nearest.every[at] if nearest.every is not None else segment.cosines(at, query_vector)
            cosines = dict(zip(unmeant, found.tolist(), strict=True))
            ceiling = segment.keyword_ceiling(terms)
        # Past the first `k`, only the hits found by meaning too: the rest would be read for their scores alone, by
        # a caller that takes only the first `k` as candidates (the port allows it).
        keywords = {i: -negated for negated, i in by_keywords[: query.k]}
        keywords.update((i, -negated) for negated, i in by_keywords[query.k :] if i in by_meaning)
        return HybridHits.model_construct(
            by_meaning=by_meaning, by_keywords=keywords, cosines=cosines, keyword_ceiling=ceiling
        )

    def keyword_search(self, query: IndexQuery, text: str) -> list[IndexHit]:
        terms = list(dict.fromkeys(tokenize(text)))
        if not terms:
            return []
        with self._lock:
            segment = self._refreshed_segment(Scope(query.tenant_id, query.user_id))
            ranked = _best_by_keywords(segment, query, terms, query.k) if segment else []
        return [_hit(memory_id, -negated) for negated, memory_id in ranked]
