"""Sentences to labels: the nearest prototypes by cosine, a calibrated bar per label and a margin over the runner-up."""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from rapport.domain.semantics import prototypes

CLASSIFIERS: Mapping[str, prototypes.Prototypes] = {
    "relational": prototypes.RELATIONAL,
    "outcome": prototypes.OUTCOME,
    "user": prototypes.USER,
    "filter": prototypes.FILTER,
}


# Labels that make the same memory type: a margin is kept over the best label of another type (or a `none_*`), not
# over a sibling ("tell me where to start" is near both ways of answering, and either is a communication preference).
SAME_TYPE: Mapping[str, Mapping[str, str]] = {
    "relational": prototypes.RELATIONAL_TYPES,
    "user": prototypes.USER_KINDS,
}


class Encoder(Protocol):
    """What the layer needs of an embedder (the `Embedder` port has it): L2-normalised vectors, and a name that
    says which model made them, since a calibration holds for one model only."""

    @property
    def name(self) -> str: ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class Calibration:
    """`threshold`: the least cosine to the nearest prototype of the label; `margin`: how far ahead of the best
    prototype of any other label it must be. Per-label bars override the classifier's."""

    threshold: float
    margin: float
    by_label: Mapping[str, float] = field(default_factory=dict)

    def bar(self, label: str) -> float:
        return self.by_label.get(label, self.threshold)


# Calibrated on the development half of the labelled set (rapport/evaluation/extraction_set/dev.jsonl) with
# `rapport eval extraction --calibrate`, which also reports what these bars do cross-validated inside dev;
# docs/pipeline.md gives the procedure. Another embedder has no calibration,
# so the layer is off for it and the patterns answer alone.
MINILM = "all-MiniLM-L6-v2"
CALIBRATIONS: Mapping[str, Mapping[str, Calibration]] = {
    MINILM: {
        "relational": Calibration(threshold=0.4, margin=0.04, by_label={"approach_worked": 0.345}),
        "outcome": Calibration(threshold=0.3, margin=0.0),
        "user": Calibration(threshold=0.35, margin=0.08),
        "filter": Calibration(threshold=0.5, margin=0.0),
    }
}


def probe_path(model: str, classifier: str) -> Path:
    """Where the probe trained for a classifier over a model's vectors is kept (`bench/relational_probe.py`)."""
    return Path(__file__).parent / "probes" / f"{model}.{classifier}.json"


@functools.cache
def _probe(model: str, classifier: str) -> tuple[tuple[str, ...], Any, Any] | None:
    """A trained probe's types, weights (a row per type) and biases, or None where none was trained."""
    import numpy

    path = probe_path(model, classifier)
    if not path.is_file():
        return None
    probe = json.loads(path.read_text(encoding="utf-8"))
    weights = numpy.asarray(probe["weights"], dtype=numpy.float32)
    return tuple(probe["classes"]), weights, numpy.asarray(probe["bias"], dtype=numpy.float32)


@dataclass(frozen=True)
class Match:
    """The label a sentence takes (None when no label clears its bar by the margin), and why: `by_label` is each
    label's best cosine, what the callers that weigh near ties and calibration read."""

    label: str | None
    nearest: str
    score: float
    runner_up: str
    margin: float
    by_label: Mapping[str, float] = field(default_factory=dict, compare=False, repr=False)


# Prototype vectors depend only on the model: embedded once per process and model, whoever builds a layer.
_PROTOTYPES: dict[tuple[str, str], tuple[Any, tuple[str, ...]]] = {}
_PROTOTYPES_LOCK = threading.Lock()
_CACHED_TEXTS = 2048


class SemanticLayer:
    """Classifies sentences for the rule-based model. Thread-safe: the prototype matrices are built once under a
    lock, and recent sentence vectors are kept so the user and relational extractions of one conversation, and the
    filter after them, embed each sentence once."""

    def __init__(self, encoder: Encoder, calibrations: Mapping[str, Calibration]) -> None:
        import numpy  # the layer runs where the local model does; the Lambda layer carries neither

        self._np = numpy
        self._encoder = encoder
        self._calibrations = dict(calibrations)
        self._recent: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._embedding = threading.Lock()

    @property
    def name(self) -> str:
        return self._encoder.name

    def calibration(self, classifier: str) -> Calibration:
        return self._calibrations[classifier]

    def recalibrated(self, calibrations: Mapping[str, Calibration]) -> SemanticLayer:
        """The same encoder and cached vectors under other bars (the calibration search tries many)."""
        layer = SemanticLayer(self._encoder, calibrations)
        layer._recent = self._recent
        layer._lock = self._lock
        layer._embedding = self._embedding
        return layer

    def classify(self, classifier: str, texts: Sequence[str]) -> list[Match]:
        if not texts:
            return []
        matrix, labels = self._prototypes(classifier)
        vectors = self._vectors(list(texts))
        scores = vectors @ matrix.T  # cosines: every vector is L2-normalised
        calibration = self._calibrations[classifier]
        same = SAME_TYPE.get(classifier, {})
        return [self._match(row, labels, calibration, same) for row in scores]

    def probabilities(self, classifier: str, texts: Sequence[str]) -> list[dict[str, float]] | None:
        """Each text's probability of each type by the classifier's trained probe (a softmax over the sentence's
        vector, `bench/relational_probe.py`), or None where this model has no probe for it. Where prototypes are
        nearest by a sentence's topic, the probe has learnt which directions of the vector tell the types apart."""
        probe = _probe(self._encoder.name, classifier)
        if probe is None:
            return None
        if not texts:
            return []
        classes, weights, bias = probe
        vectors = self._vectors(list(texts))
        if vectors.shape[1] != weights.shape[1]:  # vectors of another width than the model's it was trained on
            return None
        logits = vectors @ weights.T + bias
        logits -= logits.max(axis=1, keepdims=True)
        odds = self._np.exp(logits)
        odds /= odds.sum(axis=1, keepdims=True)
        return [dict(zip(classes, row, strict=True)) for row in odds.tolist()]

    def _best_by_label(self, row: Any, labels: tuple[str, ...]) -> dict[str, float]:
        """A label's prototypes are contiguous (`_prototypes`), so its best cosine is one max over a slice."""
        names, starts = _groups(labels)
        return dict(zip(names, self._np.maximum.reduceat(row, starts).tolist(), strict=True))

    def _match(self, row: Any, labels: tuple[str, ...], calibration: Calibration, same: Mapping[str, str]) -> Match:
        best = self._best_by_label(row, labels)
        ranked = sorted(best.items(), key=lambda item: item[1], reverse=True)
        nearest, score = ranked[0]
        kind = same.get(nearest, nearest)
        runner_up, second = next(((n, v) for n, v in ranked[1:] if same.get(n, n) != kind), ranked[1])
        margin = score - second
        cleared = not nearest.startswith("none") and score >= calibration.bar(nearest) and margin >= calibration.margin
        return Match(nearest if cleared else None, nearest, float(score), runner_up, float(margin), best)

    def keep(self, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        """Vectors embedded elsewhere for texts the layer will classify (an interaction's sentences, embedded in the
        episodes' call), so classifying them costs no call of its own."""
        with self._lock:
            for text, vector in zip(texts, vectors, strict=True):
                self._recent[text] = self._np.asarray(vector, dtype=self._np.float32)
                self._recent.move_to_end(text)
            self._trim()

    def _prototypes(self, classifier: str) -> tuple[Any, tuple[str, ...]]:
        """Every classifier's prototypes are embedded in one call, the first time any of them is needed."""
        key = (self._encoder.name, classifier)
        with _PROTOTYPES_LOCK:
            if key not in _PROTOTYPES:
                tables = [
                    (name, CLASSIFIERS[name]) for name in CLASSIFIERS if (self._encoder.name, name) not in _PROTOTYPES
                ]
                texts = [sentence for _, table in tables for sentences in table.values() for sentence in sentences]
                matrix = self._np.asarray(self._encoder.embed(texts), dtype=self._np.float32)
                start = 0
                for name, table in tables:
                    labels = tuple(label for label, sentences in table.items() for _ in sentences)
                    _PROTOTYPES[(self._encoder.name, name)] = (matrix[start : start + len(labels)], labels)
                    start += len(labels)
            return _PROTOTYPES[key]

    def _vectors(self, texts: list[str]) -> Any:
        """One embedding call for the texts not seen recently, in one batch. The two extractions of one interaction
        run at once over the same sentences: embedding under a lock, the second finds the first's vectors."""
        with self._embedding:
            with self._lock:
                missing = list(dict.fromkeys(t for t in texts if t not in self._recent))
            fresh = self._encoder.embed(missing) if missing else []
            with self._lock:
                for text, vector in zip(missing, fresh, strict=True):
                    self._recent[text] = self._np.asarray(vector, dtype=self._np.float32)
                for text in texts:
                    if text in self._recent:
                        self._recent.move_to_end(text)
                rows = [self._recent.get(t) for t in texts]
                self._trim()
        if any(row is None for row in rows):  # pushed out by a burst of other callers in between: embed again
            again = iter(self._encoder.embed([t for t, row in zip(texts, rows, strict=True) if row is None]))
            rows = [row if row is not None else self._np.asarray(next(again), dtype=self._np.float32) for row in rows]
        return self._np.vstack([row for row in rows if row is not None])

    def _trim(self) -> None:
        while len(self._recent) > _CACHED_TEXTS:
            self._recent.popitem(last=False)


@functools.cache
def _groups(labels: tuple[str, ...]) -> tuple[tuple[str, ...], list[int]]:
    """The labels in order and where each one's run of prototypes starts."""
    names: list[str] = []
    starts: list[int] = []
    for position, label in enumerate(labels):
        if not names or names[-1] != label:
            names.append(label)
            starts.append(position)
    return tuple(names), starts


def semantic_layer(encoder: Encoder | None) -> SemanticLayer | None:
    """The layer for this encoder, or None (patterns alone) when it has no calibration or numpy is missing."""
    if encoder is None:
        return None
    calibrations = CALIBRATIONS.get(encoder.name)
    if calibrations is None:
        return None
    try:
        return SemanticLayer(encoder, calibrations)
    except ImportError:
        return None
