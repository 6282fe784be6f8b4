"""Cross-validating the semantic layer's bars inside the dev half: folds by conversation, held-out counts that add
up, per-label bars shrunk toward the classifier's, and a calibration that never reads the test half."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from rapport.domain.semantics import matcher
from rapport.domain.semantics.matcher import MINILM, Calibration, SemanticLayer
from rapport.evaluation import calibration, extraction_cv
from rapport.evaluation.calibration import label_type
from rapport.evaluation.extraction import HalfResult, Tally
from rapport.evaluation.extraction_cv import folds, merged
from rapport.settings import Settings


def records(per_scenario: int = 7) -> list[dict[str, Any]]:
    return [
        {"id": f"{scenario}-{i}", "scenario": scenario, "messages": [{"role": "user", "content": f"hello {i}"}]}
        for scenario in ("debugging", "format", "trip")
        for i in range(per_scenario)
    ]


def test_folds_hold_every_record_once_and_every_scenario_in_every_fold() -> None:
    given = records()
    parts = folds(given, 5)
    ids = [r["id"] for part in parts for r in part]
    assert sorted(ids) == sorted(r["id"] for r in given)
    assert len(set(ids)) == len(ids)
    sizes = [len(p) for p in parts]
    assert max(sizes) - min(sizes) <= 1
    for part in parts:
        assert {r["scenario"] for r in part} == {"debugging", "format", "trip"}


def test_a_records_fold_depends_on_its_id_not_on_the_files_order() -> None:
    given = records()
    shuffled = list(given)
    random.Random(7).shuffle(shuffled)
    assert [[r["id"] for r in p] for p in folds(given)] == [[r["id"] for r in p] for p in folds(shuffled)]


def test_fewer_than_two_folds_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2 folds"):
        folds(records(), 1)


def test_the_held_out_counts_add_up_over_the_folds() -> None:
    one, two = HalfResult("a"), HalfResult("b")
    one.by_type["fact"] = Tally(predicted=2, predicted_right=1, expected=3, expected_found=1)
    two.by_type["fact"] = Tally(predicted=1, predicted_right=1, expected=1, expected_found=1)
    one.invented_lessons.append({"id": "x", "type": "working_style", "content": "…"})
    total = merged("cv", [one, two])
    assert (total.by_type["fact"].precision(), total.by_type["fact"].recall()) == (2 / 3, 2 / 4)
    assert len(total.invented_lessons) == 1


class _Quiet:
    """An encoder that is never asked: the evaluations below are fakes that read only the bars."""

    name = "quiet"

    def embed(self, texts: list[str]) -> list[list[float]]:
        raise AssertionError("the fake evaluation embeds nothing")


def _rewarding_a_lower_bar(label: str) -> tuple[SemanticLayer, object]:
    bars = Calibration(threshold=0.45, margin=0.04)
    layer = SemanticLayer(_Quiet(), {"relational": bars, "outcome": bars, "user": bars, "filter": bars})

    def evaluate(trial: SemanticLayer) -> HalfResult:
        # Recall of working_style grows when its own bar is well below the classifier's; nothing else moves it.
        result = HalfResult("fake")
        bars = trial.calibration("relational")
        found = 10 if bars.bar(label) < bars.threshold - 0.02 else 5
        result.by_type["working_style"] = Tally(
            predicted=found, predicted_right=found, expected=10, expected_found=found
        )
        return result

    return layer, evaluate


def test_a_label_with_many_examples_gets_its_own_bar_and_one_with_few_barely_moves() -> None:
    layer, evaluate = _rewarding_a_lower_bar("working_style")
    many, _ = calibration.calibrate(layer, evaluate, examples={"working_style": 40})  # type: ignore[arg-type]
    few, _ = calibration.calibrate(layer, evaluate, examples={"working_style": 1})  # type: ignore[arg-type]
    assert many["relational"].bar("working_style") == pytest.approx(0.45 - 0.1 * 40 / 50)
    # One example carries a bar 1/11 of the way: 0.1/11 below the classifier's pays nothing, so none is kept.
    assert few["relational"].by_label == {}


def test_a_none_label_never_gets_a_bar_and_filter_labels_count_under_their_verdict() -> None:
    assert label_type("relational", "none_refusal") is None
    assert label_type("relational", "habit") == "interaction_pattern"
    assert label_type("filter", "refusal") == "verdict:blocked"
    assert label_type("filter", "lesson_shorter") == "verdict:reframed"


def test_calibrating_reads_the_dev_half_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a folder with a dev half and no test half, and an encoder under the shipped calibration's name
    class Encoder:
        name = MINILM

        def embed(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0] if "bullet" in t.lower() else [0.0, 1.0] for t in texts]

    monkeypatch.setattr("rapport.adapters.local.minilm.MiniLmEmbedder", Encoder)
    monkeypatch.setattr(matcher, "_PROTOTYPES", {})
    monkeypatch.setattr(calibration, "THRESHOLDS", (0.3, 0.5))
    monkeypatch.setattr(calibration, "MARGINS", (0.0,))
    monkeypatch.setattr(calibration, "PASSES", 1)
    dev = [{**r, "relational": [], "user": []} for r in records(2)]
    (tmp_path / "dev.jsonl").write_text("\n".join(json.dumps(r) for r in dev) + "\n")
    # When the bars are calibrated
    found = extraction_cv.calibrate_dev(tmp_path, Settings(), k=2)
    # Then the figures are the cross-validated ones and the in-sample ones, of dev only
    assert [h["half"] for h in found["halves"]] == ["dev (cross-validated)", "dev (bars fitted on it)"]
    assert found["halves"][0]["conversations"] == len(dev)
    assert len(found["fold_calibrations"]) == 2
    assert set(found["calibration"]) >= {"relational", "outcome", "user", "filter"}
