"""Cross-validation of the semantic layer's bars inside the development half: calibrate on k-1 folds, measure on the
one left out, so the figures say what bars found on some conversations do on others (the dev half's own score,
with bars searched on it, says only how well they fit it)."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rapport.domain.rules.model import RulesLanguageModel
from rapport.domain.semantics.matcher import Calibration, SemanticLayer
from rapport.evaluation.calibration import as_code, calibrate, examples_of, summary
from rapport.evaluation.extraction import ExtractionEvaluation, HalfResult, LabelledSetError, load
from rapport.ports.signals import SignalDetector
from rapport.settings import Settings

FOLDS = 5


def folds(records: Sequence[dict[str, Any]], k: int = FOLDS) -> list[list[dict[str, Any]]]:
    """k folds by conversation, each scenario dealt round the folds in the order of a hash of its ids: every fold
    sees every scenario, and a record's fold depends on its id alone, not on the file's order."""
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds; got {k}")
    by_scenario: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_scenario[str(record.get("scenario", "candidate" if "candidate" in record else ""))].append(record)
    dealt: list[list[dict[str, Any]]] = [[] for _ in range(k)]
    turn = 0
    for scenario in sorted(by_scenario):
        for record in sorted(by_scenario[scenario], key=lambda r: hashlib.sha256(str(r["id"]).encode()).hexdigest()):
            dealt[turn % k].append(record)
            turn += 1
    return dealt


def merged(half: str, results: Sequence[HalfResult]) -> HalfResult:
    """The folds' held-out results as one: counts add up, so precision and recall are over all of dev."""
    total = HalfResult(half)
    for result in results:
        total.conversations += result.conversations
        total.messages += result.messages
        for name, tally in result.by_type.items():
            into = total.by_type.setdefault(name, type(tally)())
            into.predicted += tally.predicted
            into.predicted_right += tally.predicted_right
            into.expected += tally.expected
            into.expected_found += tally.expected_found
        for expected, row in result.confusion.items():
            total.confusion.setdefault(expected, Counter()).update(row)
        for name, tally in result.signals.items():
            into = total.signals.setdefault(name, type(tally)())
            into.expected += tally.expected
            into.expected_found += tally.expected_found
        total.invented_lessons += result.invented_lessons
        total.crisis_raising_sentiment += result.crisis_raising_sentiment
        total.misses += result.misses
    return total


@dataclass(frozen=True)
class CrossValidation:
    held_out: HalfResult  # every dev record measured once, by bars calibrated without it
    calibrations: list[dict[str, Any]]  # what each fold's calibration found (how stable the bars are)


def cross_validate(
    layer: SemanticLayer,
    records: Sequence[dict[str, Any]],
    detector: SignalDetector,
    settings: Settings,
    *,
    k: int = FOLDS,
    on_step: Callable[[str], None] | None = None,
) -> CrossValidation:
    parts = folds(records, k)
    results: list[HalfResult] = []
    found: list[dict[str, Any]] = []
    for number, held in enumerate(parts, start=1):
        training = [r for i, part in enumerate(parts, start=1) if i != number for r in part]
        bars, score = calibrate_on(layer, training, detector, settings)
        found.append(summary(bars, score))
        trial = layer.recalibrated(bars)
        model = RulesLanguageModel(settings.pipeline_max_candidates, trial)
        results.append(ExtractionEvaluation(model, detector, settings).run(f"fold {number}", held))
        if on_step is not None:
            on_step(f"fold {number}/{k}: calibrated on {len(training)} records, measured on {len(held)}")
    return CrossValidation(merged("dev (cross-validated)", results), found)


def calibrate_on(
    layer: SemanticLayer, records: Sequence[dict[str, Any]], detector: SignalDetector, settings: Settings
) -> tuple[dict[str, Calibration], float]:
    """The bars that score best on `records` (signals left out: no bar moves them)."""
    without_signals = [{**r, "signals": {}} for r in records]

    def evaluate(trial: SemanticLayer) -> HalfResult:
        model = RulesLanguageModel(settings.pipeline_max_candidates, trial)
        return ExtractionEvaluation(model, detector, settings).run("calibration", without_signals)

    return calibrate(layer, evaluate, examples=examples_of(records))


def calibrate_dev(
    data: Path, settings: Settings, *, k: int = FOLDS, on_step: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """`rapport eval extraction --calibrate`: the dev half alone (the test half is not read). The figures reported
    are the cross-validated ones; the bars to ship are then calibrated on all of dev, and printed as code."""
    from rapport.adapters.local.minilm import MiniLmEmbedder
    from rapport.adapters.local.vader import RuleSignalDetector
    from rapport.domain.semantics.matcher import semantic_layer

    records = load(data / "dev.jsonl")
    layer = semantic_layer(MiniLmEmbedder())
    if layer is None:
        raise LabelledSetError("the semantic layer is off for this embedder (no calibration, or no numpy)")
    detector = RuleSignalDetector(semantics=layer)
    checked = cross_validate(layer, records, detector, settings, k=k, on_step=on_step)
    bars, score = calibrate_on(layer, records, detector, settings)
    if on_step is not None:
        on_step("calibrated on all of dev (paste into rapport/domain/semantics/matcher.py):\n" + as_code(bars))
    fitted = ExtractionEvaluation(
        RulesLanguageModel(settings.pipeline_max_candidates, layer.recalibrated(bars)), detector, settings
    ).run("dev (bars fitted on it)", records)
    return {
        "model": f"rules + semantic layer ({layer.name}), {k}-fold cross-validation inside dev",
        "halves": [checked.held_out.as_dict(), fitted.as_dict()],
        "calibration": summary(bars, score),
        "fold_calibrations": checked.calibrations,
        "dev_misses": checked.held_out.misses,
    }
