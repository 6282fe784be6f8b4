"""The measurements behind docs/BENCHMARKS.md: recall latency, ingestion throughput, imports, sizes, server memory."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from bench.synthetic import SyntheticText
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, Message, MessageRole
from rapport.domain.recall import RecallQuery
from rapport.domain.rendering import embedding_text
from rapport.domain.scope import Scope
from rapport.ports.embedder import Embedder
from rapport.services.interactions import NewInteraction
from rapport.services.memories import NewMemory
from rapport.services.recall import Recall
from rapport.settings import LlmKind, PipelineMode, Settings, StoreBackend, VectorBackend

ROOT = Path(__file__).resolve().parent.parent
TENANT = "bench"
DIMENSIONS = 384  # MiniLM's width, so one populated store serves the hashing and the MiniLM query rows
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Spread:
    """The median of several runs' values, and their min and max."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        return cls(statistics.median(values), min(values), max(values))

    def ms(self, digits: int = 1) -> str:
        return f"{self.median * 1e3:.{digits}f} ({self.low * 1e3:.{digits}f}–{self.high * 1e3:.{digits}f})"

    def plain(self, digits: int = 1) -> str:
        return f"{self.median:.{digits}f} ({self.low:.{digits}f}–{self.high:.{digits}f})"


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def local_settings(data_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "data_dir": data_dir,
        "store": StoreBackend.SQLITE,
        "vector_backend": VectorBackend.EMBEDDED,
        "llm": LlmKind.RULES,
        "hashing_dimensions": DIMENSIONS,
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@contextmanager
def local_services(data_dir: Path, embedder: Embedder, **overrides: object) -> Iterator[Services]:
    services = build_services(local_settings(data_dir, **overrides), clock=FixedClock(START), embedder=embedder)
    try:
        yield services
    finally:
        # Background enrichment still queued would otherwise run on a closed store.
        services.graph.flush(timeout=600)
        for adapter in (services.store, services.index):
            close = getattr(adapter, "close", None)
            if close is not None:
                close()


def populate(services: Services, user_id: str, count: int, text: SyntheticText, batch: int = 1_000) -> None:
    """`count` memories for one end user, validated and embedded as `remember_many` does, then written straight to
    the store and the index: write-time graph enrichment (similarity and time links) would take longer than the rest
    of the benchmark at 100k, and recall's cost is what is measured here. One memory a minute, as a busy user's."""
    memories, store, index, embedder = services.memories, services.store, services.index, services.embedder
    clock = services.clock
    store.register_user(Scope(TENANT, user_id))
    for start in range(0, count, batch):
        built = []
        for _ in range(min(batch, count - start)):
            if isinstance(clock, FixedClock):
                clock.advance(timedelta(minutes=1))
            built.append(memories.build(Scope(TENANT, user_id), NewMemory(content=text.sentence(), domain=Domain.USER)))
        vectors = embedder.embed([embedding_text(m) for m in built])
        for memory, vector in zip(built, vectors, strict=True):
            embedded = memory.model_copy(update={"embedding": vector})
            store.put_memory(embedded)
            index.upsert(embedded)


def time_recalls(recall: Recall, user_id: str, queries: Sequence[str], limit: int = 10) -> list[float]:
    seconds = []
    for query in queries:
        started = time.perf_counter()
        recall.recall(Scope(TENANT, user_id), RecallQuery(query=query, limit=limit))
        seconds.append(time.perf_counter() - started)
    return seconds


@dataclass(frozen=True)
class LatencyRow:
    memories: int
    embedder: str
    p50: Spread
    p95: Spread
    floor_p50: Spread


def exact_floor(services: Services, user_id: str, queries: int, runs: int, k: int = 50) -> Spread:
    """One matrix product and a top-k over the user's vectors: what any exact search must at least spend."""
    rows = [m.embedding for m in services.store.iter_all_memories(TENANT) if m.user_id == user_id and m.embedding]
    matrix = np.asarray(rows, dtype=np.float32)
    rng = np.random.default_rng(1)
    per_run = []
    for _ in range(runs):
        times = []
        for _ in range(queries):
            vector = np.asarray(rng.standard_normal(matrix.shape[1]), dtype=np.float32)
            started = time.perf_counter()
            scores = matrix @ vector
            top = np.argpartition(-scores, min(k, len(scores) - 1))[:k]
            top[np.argsort(-scores[top])]
            times.append(time.perf_counter() - started)
        per_run.append(percentile(times, 50))
    return Spread.of(per_run)


def recall_latency(
    sizes: Sequence[int], work: Path, minilm: Embedder | None, queries: int, runs: int, log: Callable[[str], None]
) -> tuple[list[LatencyRow], Path]:
    """Latency at each size, hashing embedder (model out of the figure) and, when given, MiniLM for the query.
    Returns the data directory of the largest size, which the server-memory measurement reuses."""
    text = SyntheticText(seed=11)
    rows: list[LatencyRow] = []
    data_dir = work / "latency"
    hashing = HashingEmbedder(DIMENSIONS)
    populated = 0
    user_id = "user-latency"
    with local_services(data_dir, hashing, pipeline=PipelineMode.OFF) as services:
        for size in sorted(sizes):
            started = time.perf_counter()
            populate(services, user_id, size - populated, text)
            populated = size
            log(f"  {size:,} memories populated in {time.perf_counter() - started:.0f} s")
            asked = [text.query() for _ in range(queries)]
            floor = exact_floor(services, user_id, queries, runs)
            embedders: list[tuple[str, Embedder]] = [("hashing", hashing)]
            if minilm is not None:
                embedders.append(("MiniLM", minilm))
            for name, embedder in embedders:
                # The same store, index and settings; only the query's embedder differs.
                recall = Recall(services.store, services.index, embedder, services.settings, services.clock)
                time_recalls(recall, user_id, asked[:5])  # warm caches and, for MiniLM, load the model
                p50s, p95s = [], []
                for _ in range(runs):
                    seconds = time_recalls(recall, user_id, asked)
                    p50s.append(percentile(seconds, 50))
                    p95s.append(percentile(seconds, 95))
                rows.append(LatencyRow(size, name, Spread.of(p50s), Spread.of(p95s), floor))
                log(f"  recall at {size:,} with {name}: p50 {Spread.of(p50s).ms()} ms")
    return rows, data_dir


@dataclass(frozen=True)
class IngestRow:
    embedder: str
    per_second: Spread
    interactions: int


def ingestion(
    work: Path,
    embedders: Sequence[tuple[str, Embedder]],
    count: int,
    runs: int,
    overrides: dict[str, dict[str, object]] | None = None,
) -> list[IngestRow]:
    """Interactions per second through `InteractionService.record` with the local pipeline (rule-based, in process):
    history, two episodes, extraction, filter, store, edges, one user per run. `overrides`: settings per row name
    (the MiniLM row with the semantic layer off, say)."""
    rows = []
    text = SyntheticText(seed=5)
    for name, embedder in embedders:
        rates = []
        extra = (overrides or {}).get(name, {})
        for run in range(runs):
            folder = work / f"ingest-{name.replace(' ', '-').replace(',', '')}-{run}"
            with local_services(folder, embedder, pipeline=PipelineMode.LOCAL, **extra) as services:
                payloads = [
                    NewInteraction(
                        messages=[
                            Message(role=MessageRole.USER, content=f"I {text.sentence()}. I like {text.sentence()}."),
                            Message(role=MessageRole.ASSISTANT, content=f"Noted: {text.sentence()}."),
                        ],
                        session_id=f"s-{n // 10}",
                    )
                    for n in range(count)
                ]
                services.interactions.record(Scope(TENANT, "warm-up"), payloads[0])  # model load, first writes
                started = time.perf_counter()
                for payload in payloads:
                    services.interactions.record(Scope(TENANT, f"user-ingest-{run}"), payload)
                rates.append(count / (time.perf_counter() - started))
        rows.append(IngestRow(name, Spread.of(rates), count))
    return rows


@dataclass(frozen=True)
class ConcurrentRecallRow:
    clients: int
    per_second: Spread  # recalls a second, all clients together
    p50: Spread  # seconds, one recall as its client waits for it
    p95: Spread


def concurrent_recall(
    work: Path, embedder: Embedder, memories: int, clients: Sequence[int], recalls: int, runs: int
) -> list[ConcurrentRecallRow]:
    """Recalls with the query embedded (`Recall.recall`, as `GET …/memories?query=` runs it) from `clients` threads
    at once over one end user's `memories`, `recalls` in all per run: what a server's handler threads share is the
    process, its GIL and its cores. Each client takes its own queries; the first recall (the model's load) is not
    counted."""
    text = SyntheticText(seed=7)
    rows = []
    with local_services(work / "concurrent-recall", embedder) as services:
        populate(services, "user-concurrent", memories, text)
        scope = Scope(TENANT, "user-concurrent")
        queries = [text.sentence() for _ in range(recalls)]
        services.recall.recall(scope, RecallQuery(query=queries[0], limit=10))
        for count in clients:
            rates, p50s, p95s = [], [], []
            for _ in range(runs):
                latencies: list[float] = []

                def client(first: int, count: int = count, latencies: list[float] = latencies) -> None:
                    for query in queries[first::count]:
                        started = time.perf_counter()
                        services.recall.recall(scope, RecallQuery(query=query, limit=10))
                        latencies.append(time.perf_counter() - started)

                threads = [threading.Thread(target=client, args=(first,)) for first in range(count)]
                started = time.perf_counter()
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                rates.append(len(latencies) / (time.perf_counter() - started))
                p50s.append(percentile(latencies, 50))
                p95s.append(percentile(latencies, 95))
            rows.append(ConcurrentRecallRow(count, Spread.of(rates), Spread.of(p50s), Spread.of(p95s)))
    return rows


@dataclass(frozen=True)
class ImportRow:
    handler: str
    cumulative: Spread  # seconds, the handler module's cumulative import time
    process: Spread  # seconds, the whole interpreter start plus import


_IMPORT_LINE = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|\s+(\S.*)$")


def handler_imports(runs: int) -> list[ImportRow]:
    """`python -X importtime` on each functions/**/handler.py, as a cold-start proxy (no event handled)."""
    rows = []
    env = {
        **os.environ,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    for handler in sorted((ROOT / "functions").rglob("handler.py")):
        folder = handler.parent
        code = f"import sys; sys.path.insert(0, {str(folder)!r}); import handler"
        cumulative, process = [], []
        for _ in range(runs):
            started = time.perf_counter()
            result = subprocess.run(
                [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, env=env, check=False
            )
            elapsed = time.perf_counter() - started
            if result.returncode != 0:
                break
            lines = (_IMPORT_LINE.match(line) for line in result.stderr.splitlines())
            match = next((m for m in lines if m and m.group(3).strip() == "handler"), None)
            if match is None:
                break
            cumulative.append(int(match.group(2)) / 1e6)
            process.append(elapsed)
        name = str(folder.relative_to(ROOT / "functions"))
        if cumulative:
            rows.append(ImportRow(name, Spread.of(cumulative), Spread.of(process)))
    return rows


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts)


def function_sizes() -> dict[str, int]:
    functions = ROOT / "functions"
    return {str(h.parent.relative_to(functions)): folder_bytes(h.parent) for h in sorted(functions.rglob("handler.py"))}


def layer_size(work: Path, log: Callable[[str], None]) -> tuple[str, int | None, int]:
    """The Lambda layer as `cdk synth` bundles it: the lock's wheels for manylinux aarch64 / CPython 3.12 installed
    from the wheelhouse (filled once from PyPI), plus the `rapport` package itself."""
    from infra.constructs.core_layer import LOCK_FILE, PACKAGE_DIR, LockedLayerBundling, default_wheelhouse, locked_pins

    package = folder_bytes(PACKAGE_DIR)
    bundling = LockedLayerBundling(lock_file=LOCK_FILE, package_dir=PACKAGE_DIR, wheelhouse=default_wheelhouse())
    target = work / "layer"
    try:
        bundling.try_bundle(str(target), None)  # type: ignore[arg-type]  # the options are not read
    except RuntimeError as exc:
        log(f"  the layer did not build: {str(exc)[-300:]}")
        return "the locked layer (build failed; see log)", None, package
    label = (
        f"the layer as `cdk synth` builds it from layers/core/requirements.lock ({len(locked_pins())} pinned "
        "distributions for manylinux aarch64, Python 3.12, no gRPC or protobuf) with the package"
    )
    return label, folder_bytes(target / "python"), package


@dataclass(frozen=True)
class ServerMemory:
    memories: int
    rss_mb: float
    peak_mb: float
    recall_ms: float


def server_memory(data_dir: Path, user_id: str, memories: int, queries: int) -> ServerMemory | None:
    """RSS of `rapport serve` over a data directory holding `memories` memories, after a few recalls over HTTP."""
    port = free_port()
    env = {
        **os.environ,
        "RAPPORT_DATA_DIR": str(data_dir),
        "RAPPORT_EMBEDDER": "hashing",
        "RAPPORT_HASHING_DIMENSIONS": str(DIMENSIONS),
        "RAPPORT_API_KEYS": f"bench-key:{TENANT}",
        "RAPPORT_LLM": "rules",
        "RAPPORT_PIPELINE": "off",
    }
    rapport = Path(sys.executable).parent / "rapport"
    process = subprocess.Popen(
        [str(rapport), "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        base = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{base}/health", timeout=2).read()  # noqa: S310 (a local URL we built)
                break
            except OSError:
                time.sleep(0.5)
        else:
            return None
        text = SyntheticText(seed=3)
        seconds = []
        for _ in range(queries):
            query = urllib.parse.quote(text.query())
            request = urllib.request.Request(  # noqa: S310
                f"{base}/users/{user_id}/memories?query={query}&limit=10",
                headers={"Authorization": "Bearer bench-key"},
            )
            started = time.perf_counter()
            urllib.request.urlopen(request, timeout=60).read()  # noqa: S310
            seconds.append(time.perf_counter() - started)
        status = Path(f"/proc/{process.pid}/status").read_text()
        rss = _status_kb(status, "VmRSS") / 1024
        peak = _status_kb(status, "VmHWM") / 1024
        return ServerMemory(memories, rss, peak, percentile(seconds, 50) * 1e3)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def _status_kb(status: str, field: str) -> float:
    match = re.search(rf"^{field}:\s+(\d+) kB", status, re.MULTILINE)
    return float(match.group(1)) if match else float("nan")


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def workspace() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="rapport-bench-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
