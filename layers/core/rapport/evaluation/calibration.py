"""Calibrating the semantic layer's bars on labelled conversations: a grid over each classifier's threshold and
margin, one classifier at a time, then a bar per label, shrunk toward its classifier's by how few examples of the
label's type there are; what scores best on the labelled memories and verdicts is kept."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from rapport.domain.semantics import prototypes
from rapport.domain.semantics.matcher import CLASSIFIERS, Calibration, SemanticLayer
from rapport.evaluation.extraction import RELATIONAL_TYPES, USER_KINDS, HalfResult

THRESHOLDS = tuple(round(0.25 + 0.05 * i, 2) for i in range(8))  # 0.25 … 0.60
MARGINS = (0.0, 0.04, 0.08, 0.12)
PASSES = 1  # a second pass moved no bar on dev, and cross-validation runs the search six times
# A label's own bar moves from its classifier's by at most this much, and only as far as its examples carry it:
# offset x n / (n + SHRINKAGE) for n labelled examples of its type, so a type seen three times keeps nearly the
# classifier's bar (a bar fitted to three sentences is fitted to those sentences).
LABEL_OFFSETS = (-0.1, -0.05, 0.05, 0.1)
SHRINKAGE = 10
# Precision comes first (a wrong memory is worse than a missing one): the score counts reaching the targets, then F1.
TARGET_PRECISION, TARGET_RECALL = 0.9, 0.8
INVENTED_LESSON_COST = 0.25


def objective(result: HalfResult) -> float:
    reached, f1s = [], []
    for name in (*RELATIONAL_TYPES, *USER_KINDS):
        tally = result.by_type.get(name)
        if tally is None:
            continue
        precision, recall = tally.precision(), tally.recall()
        if recall is None:
            continue
        p = precision if precision is not None else 0.0
        reached.append((min(p, TARGET_PRECISION) / TARGET_PRECISION + min(recall, TARGET_RECALL) / TARGET_RECALL) / 2)
        f1s.append(0.0 if p + recall == 0 else 2 * p * recall / (p + recall))
    judged = sum(sum(row.values()) for row in result.confusion.values())
    right = sum(row.get(expected, 0) for expected, row in result.confusion.items())
    filter_accuracy = right / judged if judged else 1.0
    return _mean(reached) + _mean(f1s) + filter_accuracy - INVENTED_LESSON_COST * len(result.invented_lessons)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def label_type(classifier: str, label: str) -> str | None:
    """The labelled type a label's matches are counted under (None: a `none_*` label, which has no bar)."""
    if label.startswith("none"):
        return None
    if classifier == "relational":
        return prototypes.RELATIONAL_TYPES.get(label)
    if classifier == "outcome":
        return "collaboration_outcome"
    if classifier == "user":
        return prototypes.USER_KINDS.get(label)
    if label in prototypes.BLOCKING:
        return "verdict:blocked"
    if label in prototypes.LESSONS:
        return "verdict:reframed"
    return {"instruction": "verdict:quarantined", "correction": "verdict:allowed"}.get(label)


def calibrate(
    layer: SemanticLayer,
    evaluate: Callable[[SemanticLayer], HalfResult],
    on_step: Callable[[str, Calibration, float], None] | None = None,
    examples: Mapping[str, int] | None = None,
) -> tuple[dict[str, Calibration], float]:
    """`evaluate` runs the labelled records with a layer; the layer's cached vectors make each run cheap.
    `examples`: labelled memories per type in those records (`label_type`), for the per-label bars; without it
    only the classifiers' bars are searched."""
    current = {name: replace(layer.calibration(name), by_label={}) for name in CLASSIFIERS}
    best_score = objective(evaluate(layer.recalibrated(current)))

    def keep_if_better(trial: dict[str, Calibration], name: str) -> None:
        nonlocal best_score, current
        score = objective(evaluate(layer.recalibrated(trial)))
        if score > best_score + 1e-9:
            best_score, current = score, trial
            if on_step is not None:
                on_step(name, trial[name], score)

    for _ in range(PASSES):
        for name in CLASSIFIERS:
            for threshold in THRESHOLDS:
                for margin in MARGINS:
                    keep_if_better({**current, name: replace(current[name], threshold=threshold, margin=margin)}, name)
    if examples is None:
        return current, best_score
    for name, table in CLASSIFIERS.items():
        for label in table:
            kind = label_type(name, label)
            if kind is None:
                continue
            weight = examples.get(kind, 0) / (examples.get(kind, 0) + SHRINKAGE)
            base = current[name]
            for offset in LABEL_OFFSETS:
                bar = round(base.threshold + weight * offset, 3)
                if bar == base.threshold:
                    continue
                by_label = {**current[name].by_label, label: bar}
                keep_if_better({**current, name: replace(current[name], by_label=by_label)}, name)
    return current, best_score


def as_code(calibrations: dict[str, Calibration]) -> str:
    lines = []
    for name, c in calibrations.items():
        labels = f", by_label={dict(sorted(c.by_label.items()))}" if c.by_label else ""
        lines.append(f'        "{name}": Calibration(threshold={c.threshold}, margin={c.margin}{labels}),')
    return "\n".join(lines)


def summary(calibrations: dict[str, Calibration], score: float) -> dict[str, Any]:
    return {
        "score": round(score, 4),
        **{
            n: {"threshold": c.threshold, "margin": c.margin, "by_label": dict(sorted(c.by_label.items()))}
            for n, c in calibrations.items()
        },
    }


def examples_of(records: Sequence[dict[str, Any]]) -> Counter[str]:
    """How many labelled memories (and filter verdicts) of each type the records hold (`label_type`'s names)."""
    counted: Counter[str] = Counter()
    for record in records:
        for item in record.get("relational", ()):
            counted[item["type"]] += 1
        for item in record.get("user", ()):
            counted[item["kind"]] += 1
        if "candidate" in record:
            counted[f"verdict:{record['verdict']}"] += 1
    return counted


__all__: Sequence[str] = ("as_code", "calibrate", "examples_of", "label_type", "objective", "summary")
