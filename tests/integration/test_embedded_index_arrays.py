"""The embedded index keeps a term's postings as arrays once a search read them, and a filter's allowed positions:
each must answer as the index rebuilt from its file would, after any mix of writes."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.thread_pools import CallerShare
from rapport.domain.models import Domain, MemoryStatus
from rapport.domain.scope import Scope
from rapport.domain.text import tokenize
from rapport.ports.vector_index import IndexHit
from tests.integration.test_vector_index_contract import memory, query

pytestmark = pytest.mark.integration

TENANT = "tenant-a"
SCOPE = Scope(TENANT, "user-1")
WORDS = "dog cat max walk park camping guitar concert painting lake beach job".split()
DIMENSIONS = 8
ROOT = Path(__file__).resolve().parents[2]


def vector(rng: random.Random) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(DIMENSIONS)]


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))


def searches(index: EmbeddedVectorIndex, probe: list[float]) -> list[list[IndexHit]]:
    both = (Domain.USER, Domain.RELATIONAL)
    return [
        index.knn_search(query(TENANT, k=7), probe),
        index.knn_search(query(TENANT, k=500), probe),
        index.knn_search(query(TENANT, k=5, domains=both, statuses=("active", "archived")), probe),
        *(index.keyword_search(query(TENANT, k=9), words) for words in ("dog walk", "concert guitar lake", "job")),
        index.keyword_search(query(TENANT, k=9, domains=both), "park beach"),
    ]


def test_after_any_writes_every_search_answers_as_the_index_rebuilt_from_its_file(tmp_path: Path) -> None:
    rng = random.Random(5)
    path = tmp_path / "vectors.sqlite3"
    index = EmbeddedVectorIndex(path, DIMENSIONS)
    live: list[str] = []
    probe = vector(rng)
    for step in range(400):
        roll = rng.random()
        if roll < 0.6 or not live:
            memory_id = f"m{step:04d}"
            live.append(memory_id)
        else:
            memory_id = rng.choice(live)
        if roll < 0.85:
            domain = rng.choice([Domain.USER, Domain.USER, Domain.RELATIONAL])
            status = MemoryStatus.ARCHIVED if rng.random() < 0.1 else MemoryStatus.ACTIVE
            index.upsert(memory(TENANT, memory_id, vector(rng), text(rng), domain=domain, status=status))
        else:
            live.remove(memory_id)
            index.delete(SCOPE, memory_id)
        if step % 25 == 0:
            searches(index, probe)  # the arrays are made here, and must follow the writes after
    rebuilt = EmbeddedVectorIndex(path, DIMENSIONS)
    try:
        assert searches(index, probe) == searches(rebuilt, probe)
    finally:
        index.close()
        rebuilt.close()


def test_knn_ranks_by_cosine_whether_the_filter_allows_every_entry_or_some(tmp_path: Path) -> None:
    rng = random.Random(11)
    index = EmbeddedVectorIndex(tmp_path / "vectors.sqlite3", DIMENSIONS)
    vectors = {f"m{n:03d}": vector(rng) for n in range(60)}
    for memory_id, embedding in vectors.items():
        index.upsert(memory(TENANT, memory_id, embedding))
    probe = vector(rng)

    def expected(ids: list[str], k: int) -> list[str]:
        unit = {i: np.asarray(vectors[i]) / np.linalg.norm(vectors[i]) for i in ids}
        return sorted(ids, key=lambda i: -float(unit[i] @ probe))[:k]

    every = [h.memory_id for h in index.knn_search(query(TENANT, k=10), probe)]
    assert every == expected(list(vectors), 10)
    # Half of them archived: the active half only, by the same ranking.
    archived = list(vectors)[::2]
    for memory_id in archived:
        index.upsert(memory(TENANT, memory_id, vectors[memory_id], status=MemoryStatus.ARCHIVED))
    some = [h.memory_id for h in index.knn_search(query(TENANT, k=10), probe)]
    assert some == expected([i for i in vectors if i not in archived], 10)
    assert len(index.knn_search(query(TENANT, k=100), probe)) == 30
    index.close()


def test_the_hits_the_index_builds_are_the_hits_pydantic_builds(tmp_path: Path) -> None:
    # Given hits of every search the index answers (built past pydantic's generic constructor)
    rng = random.Random(11)
    index = EmbeddedVectorIndex(tmp_path / "vectors.sqlite3", DIMENSIONS)
    for n in range(30):
        index.upsert(memory(TENANT, f"m{n:02d}", vector(rng), content=text(rng)))
    probe = vector(rng)
    hybrid = index.hybrid_search(query(TENANT, k=5), probe, "dog walk job", keyword_k=20)
    built = [*searches(index, probe)[0], *searches(index, probe)[3]]
    assert built
    assert set(IndexHit.model_fields) == {"memory_id", "score"}  # every field the index sets, and no other
    for hit in built:
        # Then each is what validating its fields makes, in every way a caller can see
        validated = IndexHit(memory_id=hit.memory_id, score=hit.score)
        assert type(hit) is IndexHit
        assert hit == validated and hash(hit) == hash(validated)
        assert hit.model_dump() == validated.model_dump() and repr(hit) == repr(validated)
        assert hit.model_fields_set == validated.model_fields_set
        assert hit.model_copy(update={"score": 0.5}) == IndexHit(memory_id=hit.memory_id, score=0.5)
        with pytest.raises(ValueError):
            hit.score = 0.0  # type: ignore[misc]  # frozen, as validated hits are
    assert hybrid == type(hybrid).model_validate(hybrid.model_dump())


def reference_keyword_search(entries: dict[str, str], text: str, k: int) -> list[tuple[str, float]]:
    """Okapi BM25 of every entry, one entry at a time in plain Python, best first and equal scores by id."""
    counts = {memory_id: Counter(tokenize(content)) for memory_id, content in entries.items()}
    size = len(counts)
    average = max(sum(sum(c.values()) for c in counts.values()) / size, 1e-9)
    terms = list(dict.fromkeys(tokenize(text)))
    scores: dict[str, float] = {}
    for memory_id, count in counts.items():
        score = 0.0
        for term in terms:
            holding = sum(1 for c in counts.values() if term in c)
            if not holding or term not in count:
                continue
            idf = math.log(1 + (size - holding + 0.5) / (holding + 0.5))
            tf = float(count[term])
            score += idf * tf * (1.2 + 1) / (tf + 1.2 * (1 - 0.75 + 0.75 * sum(count.values()) / average))
        if score > 0:
            scores[memory_id] = score
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]


def written_and_removed(
    directory: Path, texts: list[list[str]], removed: list[int]
) -> tuple[EmbeddedVectorIndex, dict[str, str]]:
    """An index holding an entry of each text, then without the `removed` ones, and the contents left by id."""
    index = EmbeddedVectorIndex(directory / "vectors.sqlite3", DIMENSIONS)
    entries = {f"m{n:02d}": " ".join(words_of) for n, words_of in enumerate(texts)}
    for memory_id, content in entries.items():
        index.upsert(memory(TENANT, memory_id, [1.0] * DIMENSIONS, content=content))
    for n in removed:
        if entries.pop(f"m{n:02d}", None) is not None:
            index.delete(SCOPE, f"m{n:02d}")
    return index, entries


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=1, max_size=40),
    st.lists(st.integers(0, 39), max_size=10),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    st.integers(1, 30),
)
def test_keyword_hits_are_bm25_best_first_with_equal_scores_by_id(
    tmp_path_factory: pytest.TempPathFactory, texts: list[list[str]], removed: list[int], words: list[str], k: int
) -> None:
    # Given an index after writes and removals (positions swapped into holes)
    index, entries = written_and_removed(tmp_path_factory.mktemp("bm25"), texts, removed)
    # Then its keyword hits are the plain BM25 ranking: the same ids, order and scores
    found = index.keyword_search(query(TENANT, k=k), " ".join(words))
    expected = reference_keyword_search(entries, " ".join(words), k) if entries else []
    assert [h.memory_id for h in found] == [memory_id for memory_id, _ in expected]
    assert [h.score for h in found] == pytest.approx([score for _, score in expected], rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), min_size=1, max_size=40),
    st.lists(st.integers(0, 39), max_size=10),
    st.lists(st.sampled_from([*WORDS, "unheard"]), min_size=1, max_size=4),
)
def test_the_keyword_ceiling_is_what_an_average_entry_holding_each_word_once_scores(
    tmp_path_factory: pytest.TempPathFactory, texts: list[list[str]], removed: list[int], words: list[str]
) -> None:
    # Given an index after writes and removals
    index, entries = written_and_removed(tmp_path_factory.mktemp("ceiling"), texts, removed)
    found = index.hybrid_search(query(TENANT, k=5), [1.0] * DIMENSIONS, " ".join(words), keyword_k=10)
    if not entries:
        assert found.keyword_ceiling is None  # nothing to hold term statistics of
        return
    # Then it is BM25 with a term frequency of one at the average length, summed over the query's words (a word no
    # entry holds counting with the largest idf), so no entry holding each word once scores above it
    counts = [Counter(tokenize(content)) for content in entries.values()]
    size, average = len(counts), sum(sum(c.values()) for c in counts) / len(counts)
    expected = 0.0
    for term in dict.fromkeys(tokenize(" ".join(words))):
        holding = sum(1 for c in counts if term in c)
        idf = math.log(1 + (size - holding + 0.5) / (holding + 0.5))
        expected += idf * 1.0 * (1.2 + 1) / (1.0 + 1.2 * (1 - 0.75 + 0.75 * average / average))
    assert found.keyword_ceiling == pytest.approx(expected, rel=1e-12)
    for memory_id, score in reference_keyword_search(entries, " ".join(words), 50):
        count = Counter(tokenize(entries[memory_id]))
        if all(count[t] <= 1 for t in count) and sum(count.values()) >= average:
            assert score <= found.keyword_ceiling * (1 + 1e-12)


def test_a_hybrid_search_gives_the_cosine_of_each_keyword_candidate_the_meaning_search_left_out(tmp_path: Path) -> None:
    # Given memories that share words with the query and point every way
    rng = random.Random(11)
    index = EmbeddedVectorIndex(tmp_path / "vectors.sqlite3", DIMENSIONS)
    stored = {f"m{n:03d}": (vector(rng), text(rng)) for n in range(120)}
    for memory_id, (embedding, content) in stored.items():
        index.upsert(memory(TENANT, memory_id, embedding, content))
    index.delete(SCOPE, "m007")
    probe = vector(rng)

    # When a hybrid search reads keywords deeper than its nearest
    found = index.hybrid_search(query(TENANT, k=5), probe, "dog walk park job", keyword_k=60)

    # Then each of the first k keyword hits (what a recall takes as candidates) outside the nearest has its cosine,
    # as the memory's own vector gives it, and the keyword hits past them (read for their scores alone) have none;
    # past them, the hits are those of the 60 best by keywords that are among the nearest, in order, with their scores
    meant = set(found.by_meaning)
    outside = set(list(found.by_keywords)[:5]) - meant
    deep = index.keyword_search(query(TENANT, k=60), "dog walk park job")
    expected = deep[:5] + [hit for hit in deep[5:] if hit.memory_id in meant]
    assert list(found.by_keywords.items()) == [(hit.memory_id, hit.score) for hit in expected]
    assert len(found.by_keywords) < 60
    assert outside and set(found.cosines) == outside
    unit = np.asarray(probe) / np.linalg.norm(probe)
    for memory_id, from_index in found.cosines.items():
        own = np.asarray(stored[memory_id][0])
        assert from_index == pytest.approx(float(own @ unit / np.linalg.norm(own)), abs=1e-5)


def unit_rows(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def clustered_index(path: Path, rng: np.random.Generator, *, half_precision_from: int) -> EmbeddedVectorIndex:
    """1,200 entries around 12 directions, many within float16's error of each other by cosine, a seventh archived."""
    index = EmbeddedVectorIndex(path, 48, half_precision_from=half_precision_from)
    centres = unit_rows(rng.standard_normal((12, 48)))
    for n in range(1_200):
        spread = (0.02, 0.05, 0.3)[n % 3]
        embedding = centres[n % 12] + spread * rng.standard_normal(48)
        status = MemoryStatus.ARCHIVED if n % 7 == 0 else MemoryStatus.ACTIVE
        index.upsert(memory(TENANT, f"m{n:04d}", embedding.tolist(), text(random.Random(n)), status=status))
    return index


def test_a_search_in_half_precision_first_answers_as_one_in_float32(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the same entries in an index that searches large segments float16 first and one that never does
    import torch

    from rapport.adapters.local import embedded_index

    half_passes = []
    kernel = embedded_index._half_kernel()
    assert kernel is not None  # the local extra brings torch

    class Counted(embedded_index._HalfKernel):
        def cosines(self, rows: np.ndarray, vector: np.ndarray, split: CallerShare) -> np.ndarray:
            half_passes.append(rows.shape)
            return super().cosines(rows, vector, split)

    monkeypatch.setattr(embedded_index, "_half_kernel", lambda: Counted(torch))
    monkeypatch.setattr(embedded_index, "_two_passes_faster", lambda segment, kernel: True)  # whatever this host's
    two_pass = clustered_index(tmp_path / "half.sqlite3", np.random.default_rng(3), half_precision_from=1_000)
    exact = clustered_index(tmp_path / "exact.sqlite3", np.random.default_rng(3), half_precision_from=10**9)
    centres = unit_rows(np.random.default_rng(3).standard_normal((12, 48)))
    try:
        compare_searches(two_pass, exact, centres)
        assert half_passes and all(shape == (1_200, 48) for shape in half_passes)
        # And the float16 copy follows the writes after it was made: new entries past the arrays' capacity, changed
        # ones, deleted ones (the last entry moved into each hole)
        rng = np.random.default_rng(4)
        for n in range(1_200, 2_300):
            embedding = (centres[n % 12] + 0.05 * rng.standard_normal(48)).tolist()
            for index in (two_pass, exact):
                index.upsert(memory(TENANT, f"m{n:04d}", embedding, "dog walk"))
        for n in range(0, 2_300, 9):
            for index in (two_pass, exact):
                index.delete(SCOPE, f"m{n:04d}")
        half_passes.clear()
        compare_searches(two_pass, exact, centres)
        assert half_passes and all(shape == (2_300 - 256, 48) for shape in half_passes)
    finally:
        two_pass.close()
        exact.close()


def compare_searches(two_pass: EmbeddedVectorIndex, exact: EmbeddedVectorIndex, centres: np.ndarray) -> None:
    both = (Domain.USER, Domain.RELATIONAL)
    for n, centre in enumerate(centres):
        probe = (centre + 0.01 * np.random.default_rng(n).standard_normal(48)).tolist()
        for q in (query(TENANT, k=5), query(TENANT, k=60), query(TENANT, k=40, statuses=("active", "archived"))):
            # When each is searched by meaning, alone and with keywords
            got, want = two_pass.knn_search(q, probe), exact.knn_search(q, probe)
            # Then the first answers with the float32 ranking and scores of the second (which has no ties that
            # either may order its own way)
            assert len({h.score for h in want}) == len(want)
            assert [h.memory_id for h in got] == [h.memory_id for h in want]
            assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-6)
            hybrid = two_pass.hybrid_search(q, probe, "dog walk park", keyword_k=80)
            reference = exact.hybrid_search(q, probe, "dog walk park", keyword_k=80)
            assert list(hybrid.by_meaning) == list(reference.by_meaning)
            assert hybrid.by_keywords == reference.by_keywords
            assert hybrid.cosines == pytest.approx(reference.cosines, abs=1e-6)
        assert two_pass.knn_search(query(TENANT, k=5, domains=both), probe)


def test_a_segment_searches_in_two_passes_only_where_they_measured_faster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from rapport.adapters.local import embedded_index

    # Given a host where the float16 kernel measures slower than one float32 pass
    passes: list[int] = []
    measured: list[int] = []

    class Counted(embedded_index._HalfKernel):
        def cosines(self, rows: np.ndarray, vector: np.ndarray, split: CallerShare) -> np.ndarray:
            passes.append(len(rows))
            return super().cosines(rows, vector, split)

    def measure(segment: object, kernel: object) -> bool:
        measured.append(len(segment))  # type: ignore[arg-type]
        return False

    monkeypatch.setattr(embedded_index, "_half_kernel", lambda: Counted(torch))
    monkeypatch.setattr(embedded_index, "_two_passes_faster", measure)
    slow = clustered_index(tmp_path / "slow.sqlite3", np.random.default_rng(3), half_precision_from=1_000)
    exact = clustered_index(tmp_path / "exact.sqlite3", np.random.default_rng(3), half_precision_from=10**9)
    centres = unit_rows(np.random.default_rng(3).standard_normal((12, 48)))
    try:
        # When it is searched, then it is searched in float32 alone, as the index that never runs two passes, with
        # no float16 copy kept, and measured once
        compare_searches(slow, exact, centres)
        assert passes == [] and measured == [1_200]
        assert all(segment.half is None for segment in slow._segments.values())
        # And measured again only once it has doubled
        rng = np.random.default_rng(4)
        for n in range(1_200, 2_400):
            slow.upsert(memory(TENANT, f"m{n:04d}", (centres[n % 12] + 0.05 * rng.standard_normal(48)).tolist(), "x"))
            if n == 2_000:
                slow.knn_search(query(TENANT, k=5), centres[0].tolist())
        slow.knn_search(query(TENANT, k=5), centres[0].tolist())
        assert measured == [1_200, 2_400] and passes == []
    finally:
        slow.close()
        exact.close()


def test_two_passes_are_chosen_by_their_time_against_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import torch

    from rapport.adapters.local import embedded_index

    segment = embedded_index._Segment(48)
    rng = np.random.default_rng(8)
    for n in range(300):
        segment.upsert(f"m{n}", "user", "active", "walk", unit_rows(rng.standard_normal((1, 48)))[0].astype(np.float32))

    class Slow(embedded_index._HalfKernel):
        def cosines(self, rows: np.ndarray, vector: np.ndarray, split: CallerShare) -> np.ndarray:
            time.sleep(0.05)
            return super().cosines(rows, vector, split)

    # A kernel that takes fifty milliseconds where one float32 pass over 300 rows takes microseconds loses
    assert not embedded_index._two_passes_faster(segment, Slow(torch))
    # And a float32 pass slowed as much wins nothing against the plain kernel
    one_pass = embedded_index._one_pass

    def slow_one_pass(*args: object) -> tuple[np.ndarray, np.ndarray]:
        time.sleep(0.05)
        return one_pass(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(embedded_index, "_one_pass", slow_one_pass)
    assert embedded_index._two_passes_faster(segment, embedded_index._HalfKernel(torch))


def test_without_torch_loaded_a_large_segment_is_searched_in_float32(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rapport.adapters.local import embedded_index

    monkeypatch.setattr(embedded_index, "_half_kernel", lambda: None)
    index = clustered_index(tmp_path / "vectors.sqlite3", np.random.default_rng(5), half_precision_from=1)
    probe = np.random.default_rng(6).standard_normal(48)
    try:
        hits = index.knn_search(query(TENANT, k=10), probe.tolist())
        stored = {h.memory_id: index.vectors(SCOPE, [h.memory_id])[h.memory_id] for h in hits}
        unit = probe / np.linalg.norm(probe)
        assert [h.score for h in hits] == pytest.approx([float(np.asarray(stored[h.memory_id]) @ unit) for h in hits])
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    finally:
        index.close()


def test_the_index_never_loads_torch_for_itself(tmp_path: Path) -> None:
    # Given a process without torch (a server with the hashing embedder), when a large segment is searched
    script = f"""
import sys
from pathlib import Path
from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.thread_pools import CallerShare
from tests.integration.test_vector_index_contract import memory, query
index = EmbeddedVectorIndex(Path({str(tmp_path / "vectors.sqlite3")!r}), 3, half_precision_from=2)
for n in range(5):
    index.upsert(memory("tenant-a", f"m{{n}}", [1.0, n, 0.5]))
hits = index.knn_search(query("tenant-a", k=2), [1.0, 4.0, 0.5])
print([h.memory_id for h in hits], "torch" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    # Then it answers in float32, and torch stays unloaded
    assert done.stdout.split() == ["['m4',", "'m3']", "False"]


def split_rows(
    monkeypatch: pytest.MonkeyPatch, cores: int, size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A machine of `cores` cores on which a product splits from 200 rows, and `size` unit rows and a unit probe."""
    from rapport.adapters.local import embedded_index, thread_pools

    monkeypatch.setattr(thread_pools, "CORES", thread_pools.Cores())
    monkeypatch.setattr(thread_pools.CORES, "count", cores)
    monkeypatch.setattr(embedded_index, "CORES", thread_pools.CORES)
    monkeypatch.setattr(embedded_index, "ROWS_PER_CORE", 100)
    rows = unit_rows(rng.standard_normal((size, 384))).astype(np.float32)
    return rows, unit_rows(rng.standard_normal((1, 384)))[0].astype(np.float32)


@pytest.mark.parametrize(("cores", "size"), [(2, 1_001), (3, 1_001), (3, 1_000), (5, 4_099), (4, 700)])
def test_a_product_split_across_cores_gives_the_scores_of_one_product(
    monkeypatch: pytest.MonkeyPatch, cores: int, size: int
) -> None:
    import threading

    from rapport.adapters.local import embedded_index

    rows, probe = split_rows(monkeypatch, cores, size, np.random.default_rng(5))
    parts: list[tuple[str, int]] = []
    matmul = np.matmul

    def traced(part: np.ndarray, *args: object, **kwargs: object) -> np.ndarray:
        parts.append((threading.current_thread().name, part.shape[0]))
        return matmul(part, *args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(embedded_index.np, "matmul", traced)
    split = embedded_index._product(rows, probe, CallerShare())

    # One part per core covering the rows, the first on this thread, the others on the pool's or, those the pool had
    # not started when this thread was done, on this one
    assert len(parts) == cores and sum(rows_of_part for _, rows_of_part in parts) == size
    here = threading.current_thread().name
    assert here in {name for name, _ in parts}
    assert all(name == here or name.startswith("rapport-cores") for name, _ in parts)
    # And the scores are those of the whole product, row for row, within float32's rounding (BLAS's own blocks give
    # a row's score in one product the last bit it has in another)
    assert split.dtype == np.float32 and np.allclose(split, rows @ probe, rtol=0, atol=1e-6)
    assert np.array_equal(np.argsort(-split)[:50], np.argsort(-(rows @ probe))[:50])
    # Too few rows for a part on each other core: one product on this thread
    parts.clear()
    assert np.array_equal(embedded_index._product(rows[:150], probe, CallerShare()), rows[:150] @ probe) and not parts


@pytest.mark.parametrize(("cores", "size"), [(2, 1_001), (3, 4_099), (4, 700)])
def test_the_float16_product_split_across_cores_gives_each_row_its_own_score(
    monkeypatch: pytest.MonkeyPatch, cores: int, size: int
) -> None:
    import threading

    import torch

    from rapport.adapters.local import embedded_index

    rows32, probe = split_rows(monkeypatch, cores, size, np.random.default_rng(6))
    rows = rows32.astype(np.float16)
    threads: list[str] = []
    mv = torch.mv

    def traced(part: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
        threads.append(threading.current_thread().name)
        return mv(part, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(torch, "mv", traced)
    kernel = embedded_index._HalfKernel(torch)
    split = kernel.cosines(rows, probe, CallerShare())

    # One part per core, the first on this thread, the others on the pool's or, those the pool had not started when
    # this thread was done, on this one
    here = threading.current_thread().name
    assert len(threads) == cores and here in threads
    assert all(name == here or name.startswith("rapport-cores") for name in threads)
    # And each row's score is its own float16 dot product, as one product over every row gives it
    whole = (torch.from_numpy(rows) @ torch.from_numpy(probe.astype(np.float16))).float().numpy()
    assert split.dtype == np.float32 and split.shape == (size,)
    assert np.allclose(split, whole, rtol=0, atol=2.0**-10)
    assert np.allclose(split, rows.astype(np.float32) @ probe, rtol=0, atol=embedded_index._HALF_ERROR)


def test_rows_are_evicted_with_a_buffer_bounded_whatever_their_size() -> None:
    from rapport.adapters.local import embedded_index

    assert embedded_index._Evicted(1_000)._scratch.nbytes == 8 * 2**20  # past a core's own caches
    assert embedded_index._Evicted(15 * 2**20)._scratch.nbytes == 30 * 2**20  # twice 10,000 rows of 384 floats
    assert embedded_index._Evicted(150 * 2**20)._scratch.nbytes == 64 * 2**20  # never more than a shared cache
