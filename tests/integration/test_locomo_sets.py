"""The tuning and check sets of the LoCoMo evaluation: chosen by sample id, reported beside all conversations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.cli import main
from rapport.evaluation.embedding_cache import CachedEmbedder, EmbeddingFile
from rapport.evaluation.locomo import load_locomo
from rapport.evaluation.locomo_run import run_locomo
from rapport.evaluation.metrics import QuestionScore
from rapport.evaluation.report import markdown_table
from rapport.evaluation.splits import TUNING_IDS, members, parse_ids, set_of, summarise_sets
from tests.integration.locomo_fixture import tiny_locomo

pytestmark = pytest.mark.integration


def write_samples(path: Path, sample_ids: list[str], *, drop_questions_of: str | None = None) -> Path:
    """The tiny conversation once per sample id; `drop_questions_of` keeps only its first two questions, so the
    sets' figures differ from each other."""
    samples: list[dict[str, Any]] = []
    for sample_id in sample_ids:
        (sample,) = tiny_locomo()
        sample["sample_id"] = sample_id
        if sample_id == drop_questions_of:
            sample["qa"] = sample["qa"][:2]
        samples.append(sample)
    path.write_text(json.dumps(samples))
    return path


def test_the_split_is_by_sample_id_and_anything_unlisted_is_checked() -> None:
    assert TUNING_IDS == ("conv-26", "conv-30", "conv-41")
    assert [set_of(i) for i in ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43")] == [
        "tuning",
        "tuning",
        "tuning",
        "check",
        "check",
    ]
    # Held-back conversations carry other ids: all of them are the check set, and no empty tuning set is reported.
    assert members(["conv-44", "conv-47"]) == {"check": ["conv-44", "conv-47"]}
    assert parse_ids("conv-1, conv-2 conv-1,,") == ("conv-1", "conv-2")
    assert members(["a", "b"], parse_ids("")) == {"check": ["a", "b"]}


def test_set_summaries_average_over_their_own_questions_only() -> None:
    hit = QuestionScore(4, {5: 1.0, 10: 1.0}, True, 1.0)
    miss = QuestionScore(4, {5: 0.0, 10: 0.0}, False, 0.0)
    sets = summarise_sets({"conv-26": [hit, hit], "conv-42": [miss], "conv-43": [hit]})
    assert sets["tuning"]["conversations"] == ["conv-26"]
    assert sets["tuning"]["overall"]["recall@10"] == 1.0 and sets["tuning"]["overall"]["n"] == 2
    assert sets["check"]["conversations"] == ["conv-42", "conv-43"]
    assert sets["check"]["overall"]["recall@10"] == 0.5 and sets["check"]["by_category"]["4"]["n"] == 2


def test_a_run_reports_each_set_beside_all_conversations(tmp_path: Path) -> None:
    data = write_samples(tmp_path / "three.json", ["conv-26", "conv-42", "conv-43"], drop_questions_of="conv-43")
    conversations, defects = load_locomo(data)
    run = run_locomo(conversations, HashingEmbedder(1024), progress=False)
    result = run.report(defects)

    tuning, check = result["sets"]["tuning"], result["sets"]["check"]
    assert tuning["conversations"] == ["conv-26"] and check["conversations"] == ["conv-42", "conv-43"]
    assert tuning["overall"]["n"] == 5 and check["overall"]["n"] == 5 + 2
    assert result["overall"]["n"] == tuning["overall"]["n"] + check["overall"]["n"]
    # The baselines are split the same way, over the same questions.
    assert set(check["baselines"]) == {"bm25", "dense", "hybrid_rrf"}
    assert check["baselines"]["bm25"]["overall"]["n"] == check["overall"]["n"]
    assert tuning["baselines"]["hybrid_rrf"]["overall"]["n"] == tuning["overall"]["n"]

    table = markdown_table(result)
    assert "| tuning set (conv-26) | Rapport recall" in table
    assert "| check set (conv-42, conv-43) | BM25 over raw turns |" in table
    assert "| all conversations | Rapport recall" in table


def test_the_command_takes_other_tuning_ids_and_reports_held_back_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_samples(tmp_path / "held-back.json", ["conv-44", "conv-47"])
    out = tmp_path / "result.json"

    # A file of conversations held back: every one is in the check set.
    assert main(["eval", "locomo", "--data", str(data), "--out", str(out), "--embedder", "hashing", "--quiet"]) == 0
    result = json.loads(out.read_text())
    assert list(result["sets"]) == ["check"] and result["sets"]["check"]["conversations"] == ["conv-44", "conv-47"]
    assert "tuning set" not in capsys.readouterr().out

    # --tuning-ids names another tuning set.
    argv = ["eval", "locomo", "--data", str(data), "--out", str(out), "--embedder", "hashing", "--quiet"]
    assert main([*argv, "--tuning-ids", "conv-47", "--no-baselines"]) == 0
    result = json.loads(out.read_text())
    assert result["tuning_ids"] == ["conv-47"]
    assert result["sets"]["tuning"]["conversations"] == ["conv-47"]
    assert result["sets"]["check"]["conversations"] == ["conv-44"]
    assert "| tuning set (conv-47) |" in capsys.readouterr().out


def test_a_cached_run_gives_the_figures_of_an_uncached_one(tmp_path: Path) -> None:
    conversations, defects = load_locomo(write_samples(tmp_path / "two.json", ["conv-26", "conv-42"]))
    plain = run_locomo(conversations, HashingEmbedder(1024), progress=False).report(defects)
    path = tmp_path / "vectors.sqlite3"
    runs = []
    for _ in range(2):  # the first run fills the file (from the product's worker threads too), the second reads it
        embedder = CachedEmbedder(HashingEmbedder(1024), EmbeddingFile(path, "hashing-1024", 1024))
        runs.append((run_locomo(conversations, embedder, progress=False).report(defects), embedder.report()))
        embedder.close()
    (first, filled), (second, read) = runs
    assert filled["texts_embedded"] > 0 and filled["texts_from_cache"] > 0  # questions embedded ahead, in a batch
    assert read["texts_embedded"] == 0
    for key in ("overall", "by_category", "baselines", "sets"):
        assert first[key] == plain[key] and second[key] == plain[key]
