"""Recall at scale beside Mem0 open source: the same memories of one person, the same questions, interleaved runs.

Both systems get the same texts: the paraphrase facts (bench/paraphrase.py) among synthetic filler, loaded in turns
(a tenth into Rapport, the same tenth into Mem0). Adds are timed one call at a time on a sample at the start of each
tenth up to `per_call_until` memories (Rapport `MemoryService.remember`, which `POST /memories` runs, with nothing
else queued; Mem0 `add(infer=False)`); the rest of each tenth goes in bulk (Rapport `remember_many` in batches, as
`POST /memories/batch`, the texts' MiniLM vectors computed once beforehand; Mem0 straight into its FAISS store, since
its `add` rewrites the whole index file on every call). Rapport runs with its defaults: graph enrichment on, in the
background, drained before any question is asked, so recall reads a person's full graph. Mem0's process gets the
thread pools Rapport's has (one BLAS thread, half the cores for torch).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench import mem0_side, paraphrase
from bench.measure import TENANT, Spread, local_services, percentile
from bench.synthetic import SyntheticText
from rapport.clock import FixedClock
from rapport.composition.services import Services
from rapport.domain.models import Domain
from rapport.domain.recall import RecallQuery
from rapport.domain.scope import Scope
from rapport.evaluation.embedding_cache import CachedEmbedder, EmbeddingFile, default_cache_path, model_identity
from rapport.ports.embedder import Embedder
from rapport.services.memories import NewMemory

USER = "user-scale"
LIMIT = 10
BATCH = 500
RAPPORT_SAMPLE = 100  # adds timed one call at a time at the start of each tenth
MEM0_SAMPLE = 10  # fewer: each Mem0 add rewrites its whole index file
MEM0_BULK = 5_000  # texts a Mem0 bulk insert takes (untimed; each insert rewrites its index file)


class PrecomputedEmbedder:
    """MiniLM, but a text whose vector the benchmark computed already is answered from it: the bulk load need not
    embed the same 100,000 texts twice. Only texts handed in with `known` are: questions and timed adds embed."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.dimensions = inner.dimensions
        self.name = inner.name
        self.known: dict[str, list[float]] = {}

    def embed(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in self.known]
        computed = dict(zip(missing, self._inner.embed(missing), strict=True)) if missing else {}
        return [self.known[t] if t in self.known else computed[t] for t in texts]


@dataclass
class SystemRow:
    """One system at one size: latency spreads over the runs, and the paraphrase hits."""

    p50: Spread
    p95: Spread
    given_p50: Spread | None  # the query's vector given: the search alone
    given_p95: Spread | None
    hits: paraphrase.Hits


@dataclass
class SizeRow:
    memories: int
    rapport: SystemRow
    mem0: SystemRow | None
    cosine: paraphrase.Hits
    floor_p50: Spread
    floor_p95: Spread
    enrichment_drain_s: float  # waiting for background enrichment before the questions
    load_s: float = 0.0  # loading this size's new memories (both systems, per-call samples included) and the drain


@dataclass
class ScaleResult:
    sizes: list[SizeRow] = field(default_factory=list)
    # Adds a second over the per-call load, by tenth: Rapport's request path and Mem0's add.
    rapport_add_rates: list[float] = field(default_factory=list)
    mem0_add_rates: list[float] = field(default_factory=list)
    add_rates_at: list[int] = field(default_factory=list)  # memories stored when each sample began
    profile: str = ""  # Rapport recall at 10,000: top functions by cumulative time
    profile_size: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def texts_for(size: int, seed: int = 23, pairs: Sequence[tuple[str, str]] = paraphrase.PAIRS) -> list[str]:
    """`size` texts: the facts of `pairs` spread over the first thousand, synthetic filler around them."""
    filler = SyntheticText(seed=seed)
    texts = [filler.sentence() for _ in range(size)]
    step = max(1, min(size, 1000) // len(pairs))
    for position, (fact, _) in enumerate(pairs):
        texts[position * step] = fact
    return texts


def load_in_bulk(
    services: Services, embedder: PrecomputedEmbedder, texts: Sequence[str], vectors: np.ndarray
) -> list[str]:
    """`texts` stored as `POST /memories/batch` stores them, in batches of `BATCH`, a minute apart on the services'
    clock, their vectors answered from `vectors` rather than embedded again; the ids in order."""
    scope = Scope(TENANT, USER)
    ids: list[str] = []
    for first in range(0, len(texts), BATCH):
        part = texts[first : first + BATCH]
        embedder.known = dict(zip(part, vectors[first : first + BATCH].tolist(), strict=True))
        built = []
        for text in part:
            services.clock.advance(timedelta(minutes=1))
            built.append(services.memories.build(scope, NewMemory(content=text, domain=Domain.USER)))
        ids.extend(m.id for m in services.memories.remember_many(scope, built))
        embedder.known = {}
    return ids


def _spread_of(runs: Sequence[Sequence[float]], q: float) -> Spread:
    return Spread.of([percentile(seconds, q) for seconds in runs])


def floor_pass(matrix: np.ndarray, queries: np.ndarray, k: int = 50) -> list[float]:
    """The exact floor: one matrix product and a top-k per query over the person's vectors, the least any exact
    search spends; the seconds of each query's, once."""
    seconds = []
    for vector in queries:
        started = time.perf_counter()
        scores = matrix @ vector
        top = np.argpartition(-scores, min(k, len(scores) - 1))[:k]
        top[np.argsort(-scores[top])]
        seconds.append(time.perf_counter() - started)
    return seconds


def cosine_hits(matrix: np.ndarray, queries: np.ndarray, targets: list[int]) -> paraphrase.Hits:
    ranks = []
    for vector, target in zip(queries, targets, strict=True):
        order = np.argsort(-(matrix @ vector), kind="stable")[:LIMIT].tolist()
        ranks.append(order.index(target) + 1 if target in order else None)
    return paraphrase.Hits.of(ranks)


def measure_scale(
    sizes: Sequence[int],
    work: Path,
    minilm: Embedder,
    model_dir: Path,
    runs: int,
    log: Callable[[str], None],
    *,
    per_call_until: int = 10_000,
    profile_at: int = 10_000,
    bulk_vectors: Callable[[list[str]], list[list[float]]] | None = None,
) -> ScaleResult:
    """`bulk_vectors`: where the vectors of the bulk load and the "vector given" runs come from (default
    `minilm.embed`; `main` keeps them in a file of vectors beside the evaluation's, so only the first run embeds
    100,000 texts). What is timed never reads them: timed adds and questions go through `minilm` itself."""
    result = ScaleResult()
    largest = max(sizes)
    texts = texts_for(largest)
    questions = [question for _, question in paraphrase.PAIRS]
    fact_positions = [texts.index(fact) for fact, _ in paraphrase.PAIRS]
    log(f"  embedding {largest:,} texts once (the floor's and the cosine baseline's vectors)")
    embed_once = bulk_vectors or minilm.embed
    vectors = np.asarray(embed_once(texts), dtype=np.float32)
    query_vectors = np.asarray(embed_once(questions), dtype=np.float32)
    # Vectors read from the file load no model: load it now, so the first timed adds do not pay for it.
    minilm.embed(["warm up"])
    mem0 = mem0_side.Mem0Process(work / "mem0", model_dir) if mem0_side.available() else None
    scope = Scope(TENANT, USER)
    rapport_ids: list[str] = []
    mem0_ids: list[str] = []
    embedder = PrecomputedEmbedder(minilm)
    with local_services(work / "rapport", embedder) as services:
        clock = services.clock
        assert isinstance(clock, FixedClock)
        loaded = 0

        spent = {"rapport": 0.0, "mem0": 0.0}  # seconds each system's bulk load took

        def bulk(start: int, stop: int) -> None:
            began = time.perf_counter()
            rapport_ids.extend(load_in_bulk(services, embedder, texts[start:stop], vectors[start:stop]))
            spent["rapport"] += time.perf_counter() - began
            if mem0 is None:
                return
            began = time.perf_counter()
            # Mem0's FAISS store writes its whole index and docstore on every insert: in larger parts than Rapport's
            # batches, or rewriting a 100,000-vector index 200 times would be most of the benchmark's time.
            for first in range(start, stop, MEM0_BULK):
                last = min(stop, first + MEM0_BULK)
                answer = mem0.call("bulk", texts=texts[first:last], vectors=vectors[first:last].tolist(), user_id=USER)
                mem0_ids.extend(answer["ids"])
            spent["mem0"] += time.perf_counter() - began

        for size in sorted(sizes):
            started = time.perf_counter()
            while loaded < size:
                upto = min(size, loaded + max(1, size // 10))
                if upto <= per_call_until:
                    # The request path alone: enrichment of what went before has finished, as between a
                    # person's messages; each add's own enrichment then runs beside the next ones.
                    services.graph.flush(timeout=3600)
                    sample = texts[loaded : min(upto, loaded + RAPPORT_SAMPLE)]
                    began = time.perf_counter()
                    for text in sample:
                        clock.advance(timedelta(minutes=1))
                        rapport_ids.append(
                            services.memories.remember(scope, NewMemory(content=text, domain=Domain.USER)).id
                        )
                    result.rapport_add_rates.append(len(sample) / (time.perf_counter() - began))
                    result.add_rates_at.append(loaded)
                    if mem0 is not None:
                        timed = texts[loaded : loaded + min(len(sample), MEM0_SAMPLE)]
                        answer = mem0.call("add", texts=timed, user_id=USER)
                        result.mem0_add_rates.append(len(timed) / sum(answer["seconds"]))
                        mem0_ids.extend(answer["ids"])
                        if len(sample) > len(timed):
                            rest = texts[loaded + len(timed) : loaded + len(sample)]
                            part_vectors = vectors[loaded + len(timed) : loaded + len(sample)].tolist()
                            mem0_ids.extend(mem0.call("bulk", texts=rest, vectors=part_vectors, user_id=USER)["ids"])
                    bulk(loaded + len(sample), upto)
                else:
                    bulk(loaded, upto)
                loaded = upto
            drain_started = time.perf_counter()
            if not services.graph.flush(timeout=6 * 3600):
                raise RuntimeError("background enrichment did not finish")
            drained = time.perf_counter() - drain_started
            load_s = time.perf_counter() - started
            log(
                f"  {size:,} memories loaded in {load_s:.0f} s (bulk: Rapport {spent['rapport']:.0f} s, Mem0"
                f" {spent['mem0']:.0f} s so far; enrichment drain {drained:.0f} s)"
            )
            targets_r = [rapport_ids[p] for p in fact_positions]
            cosine = cosine_hits(vectors[:size], query_vectors, fact_positions)

            def rapport_pass(given: bool, targets: list[str] = targets_r) -> tuple[list[float], list[int | None]]:
                return _recall_pass(services.recall, scope, questions, query_vectors, targets, given=given)

            rapport_pass(False)  # warm caches
            r_runs, r_given, m_runs, m_given, f_runs = [], [], [], [], []
            ranks_r: list[int | None] = []
            ranks_m: list[int | None] = []
            for _ in range(runs):
                seconds, ranks_r = rapport_pass(False)
                r_runs.append(seconds)
                if mem0 is not None:
                    answer = mem0.call("search", queries=questions, user_id=USER, top_k=LIMIT, vectors=None)
                    m_runs.append(answer["seconds"])
                    targets_m = [mem0_ids[p] for p in fact_positions]
                    ranks_m = [paraphrase.rank_of(t, ids) for t, ids in zip(targets_m, answer["ids"], strict=True)]
                # The floor's runs beside Rapport's with the vector given, so the ratio of the two is measured under
                # the same moment's load (a busy or quiet spell of a shared machine moves both).
                f_runs.append(floor_pass(vectors[:size], query_vectors))
                r_given.append(rapport_pass(True)[0])
                if mem0 is not None:
                    given = mem0.call(
                        "search", queries=questions, user_id=USER, top_k=LIMIT, vectors=query_vectors.tolist()
                    )
                    m_given.append(given["seconds"])
            floor50, floor95 = _spread_of(f_runs, 50), _spread_of(f_runs, 95)
            rapport_row = SystemRow(
                _spread_of(r_runs, 50),
                _spread_of(r_runs, 95),
                _spread_of(r_given, 50),
                _spread_of(r_given, 95),
                paraphrase.Hits.of(ranks_r),
            )
            mem0_row = (
                SystemRow(
                    _spread_of(m_runs, 50),
                    _spread_of(m_runs, 95),
                    _spread_of(m_given, 50),
                    _spread_of(m_given, 95),
                    paraphrase.Hits.of(ranks_m),
                )
                if mem0 is not None
                else None
            )
            result.sizes.append(SizeRow(size, rapport_row, mem0_row, cosine, floor50, floor95, drained, load_s))
            log(
                f"  recall at {size:,}: Rapport p95 {rapport_row.p95.ms()} ms"
                + (f", Mem0 p95 {mem0_row.p95.ms()} ms" if mem0_row else "")
                + f", floor p50 {floor50.ms(2)} ms; hit@10 Rapport {rapport_row.hits.at10}, cosine {cosine.at10}"
            )
            if size == profile_at:
                result.profile, result.profile_size = _profile(lambda: rapport_pass(True)), size
    if mem0 is not None:
        mem0.close()
    return result


def _recall_pass(
    recall: Any, scope: Scope, questions: list[str], vectors: np.ndarray, targets: list[str], *, given: bool
) -> tuple[list[float], list[int | None]]:
    """Each question once: its seconds, and the rank of its fact among the hits."""
    seconds, ranks = [], []
    for question, vector, target in zip(questions, vectors, targets, strict=True):
        began = time.perf_counter()
        hits = recall.recall(scope, RecallQuery(query=question, limit=LIMIT), vector=vector.tolist() if given else None)
        seconds.append(time.perf_counter() - began)
        ranks.append(paraphrase.rank_of(target, [h.memory.id for h in hits]))
    return seconds, ranks


def _profile(recalls: Callable[[], object], top: int = 25) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    recalls()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    root = str(Path(__file__).resolve().parent.parent)
    lines = [line.replace(root + "/", "") for line in out.getvalue().splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("ncalls")), 0)
    return "\n".join(lines[start:])


def markdown(data: dict[str, Any] | None) -> list[str]:
    """The side-by-side section of docs/BENCHMARKS.md from `ScaleResult.as_dict()`."""
    out = ["## Recall at scale, beside Mem0 (one person, graph on)", ""]
    if not data or not data.get("sizes"):
        return [*out, "Not measured in this run (`make bench-scale`).", ""]

    def ms(spread: dict[str, float] | None, digits: int = 1) -> str:
        return Spread(**spread).ms(digits) if spread else "–"

    def hits(h: dict[str, int]) -> str:
        return f"{h['at1']} / {h['at5']} / {h['at10']}"

    out += [
        __doc__.split("\n\n", 1)[1].replace("\n", " ").strip(),
        "",
        "Latency in ms, median of the runs (min–max): p50 / p95 over the 50 paraphrase questions, limit 10. "
        '"query embedding included" is the whole call; "vector given" hands both systems the query\'s MiniLM '
        "vector (Mem0: its embedder returns it). The exact floor is one float32 matrix product and a top-50 over the "
        "same vectors on one thread, each of its runs timed just before Rapport's with the vector given. "
        "hit@1 / 5 / 10: questions out of 50 whose own fact came back that high; cosine is plain exact cosine over "
        "the same vectors.",
        "",
        "| memories | system | p50 | p95 | p50, vector given | p95, vector given | hit@1 / 5 / 10 |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for row in data["sizes"]:
        n = f"{row['memories']:,}"
        r = row["rapport"]
        out.append(
            f"| {n} | Rapport, defaults | {ms(r['p50'])} | {ms(r['p95'])} | {ms(r['given_p50'])} | "
            f"{ms(r['given_p95'])} | {hits(r['hits'])} |"
        )
        m = row.get("mem0")
        if m:
            out.append(
                f"| {n} | Mem0 (FAISS) | {ms(m['p50'])} | {ms(m['p95'])} | {ms(m['given_p50'])} | "
                f"{ms(m['given_p95'])} | {hits(m['hits'])} |"
            )
        out.append(
            f"| {n} | exact floor / cosine | | | {ms(row['floor_p50'], 2)} | {ms(row['floor_p95'], 2)} | "
            f"{hits(row['cosine'])} |"
        )
    rates = data.get("rapport_add_rates") or []
    mem0_rates = data.get("mem0_add_rates") or []
    at = data.get("add_rates_at") or []
    if rates and at:
        out += [
            "",
            f"Adds a second, one call at a time, sampled at the start of each tenth of the load up to {at[-1]:,} "
            f"stored ({RAPPORT_SAMPLE} adds for Rapport, {MEM0_SAMPLE} for Mem0; the rest of each tenth, and "
            "everything past 10,000, in bulk for both):",
            "",
            "| stored before the sample | " + " | ".join(f"{n:,}" for n in at) + " |",
            "|---|" + "---:|" * len(at),
            "| Rapport, defaults (request path; enrichment in the background) | "
            + " | ".join(f"{r:.0f}" for r in rates)
            + " |",
        ]
        if mem0_rates:
            out.append("| Mem0 `add(infer=False)` | " + " | ".join(f"{r:.0f}" for r in mem0_rates) + " |")
        out += [
            "",
            "Waiting for Rapport's background enrichment before the questions: "
            + ", ".join(f"{row['enrichment_drain_s']:.0f} s at {row['memories']:,}" for row in data["sizes"])
            + ". Loading each size's new memories into both systems, that wait included: "
            + ", ".join(f"{row.get('load_s', 0.0):.0f} s to {row['memories']:,}" for row in data["sizes"])
            + ".",
        ]
    for note in data.get("notes") or []:  # how a run departed from `make bench-scale`, when it did
        out += ["", note]
    if data.get("profile"):
        out += [
            "",
            f"### Where a recall's time goes at {data['profile_size']:,} memories",
            "",
            "cProfile over one pass of the 50 questions, the query vector given (recall's own work), top functions by "
            "cumulative time:",
            "",
            "```",
            data["profile"],
            "```",
        ]
    return [*out, ""]


RESULT = Path(__file__).resolve().parent / "results" / "scale.json"


def add_vectors_option(parser: argparse.ArgumentParser) -> None:
    """`--vectors`: where the bulk texts' MiniLM vectors are kept across runs."""
    parser.add_argument(
        "--vectors",
        type=Path,
        default=default_cache_path().with_name("scale-embeddings.sqlite3"),
        help="file of the bulk texts' MiniLM vectors kept across runs, beside the evaluation's; '-' embeds afresh",
    )


def kept_vectors(minilm: Embedder, path: Path) -> CachedEmbedder | None:
    """MiniLM answering from the `--vectors` file, or None for '-' (embed afresh)."""
    if str(path) == "-":
        return None
    return CachedEmbedder(minilm, EmbeddingFile(path, model_identity(minilm), minilm.dimensions))


def main() -> None:
    import json
    import sys
    import tempfile

    from rapport.adapters.local.minilm import MiniLmEmbedder, bundled_model_path

    parser = argparse.ArgumentParser(description="Rapport beside Mem0 at 1,000 to 100,000 memories of one person")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULT)
    add_vectors_option(parser)
    args = parser.parse_args()
    minilm = MiniLmEmbedder()
    bulk = kept_vectors(minilm, args.vectors)
    if not mem0_side.available():
        print("Mem0's environment is missing (make mem0-env): measuring Rapport alone", file=sys.stderr)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rapport-scale-") as work:
        result = measure_scale(
            [int(s) for s in args.sizes.split(",")],
            Path(work),
            minilm,
            bundled_model_path(),
            args.runs,
            lambda message: print(message, file=sys.stderr, flush=True),
            bulk_vectors=bulk.embed if bulk is not None else None,
        )
    if bulk is not None:
        bulk.close()
    data = result.as_dict() | {
        "elapsed_s": time.perf_counter() - started,
        "measured_on": f"{datetime.now(UTC):%Y-%m-%d}",
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.out} in {data['elapsed_s'] / 60:.1f} minutes", file=sys.stderr)


if __name__ == "__main__":
    main()
