"""The LoCoMo harness end to end on a tiny conversation written for the test: ingest, recall, score, report."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.cli import main
from rapport.evaluation.locomo import load_locomo
from rapport.evaluation.locomo_run import run_locomo
from rapport.evaluation.report import markdown_table
from tests.integration.locomo_fixture import write_tiny_locomo

pytestmark = pytest.mark.integration


def test_loading_repairs_evidence_ids_and_counts_what_it_could_not(tmp_path: Path) -> None:
    conversations, defects = load_locomo(write_tiny_locomo(tmp_path / "tiny.json"))
    (conversation,) = conversations
    assert [s.number for s in conversation.sessions] == [1, 2]  # the dangling session_3 date is no session
    assert conversation.sessions[0].occurred_at.isoformat() == "2024-03-03T10:00:00+00:00"
    evidence = [q.evidence for q in conversation.questions]
    assert evidence[2] == frozenset({"D2:2"})  # "D:2:2"
    assert evidence[3] == frozenset({"D1:1", "D1:3"})  # "D1:1; D1:03"
    assert evidence[4] == frozenset({"D1:4"})  # "D9:9" does not exist
    assert evidence[5] == frozenset()
    assert defects.as_dict() == {
        "split": 1,
        "reformatted": 2,
        "unknown_dropped": 1,
        "questions_without_evidence": {3: 1},
    }
    assert conversation.turns[3].caption == "a photo of a red road bicycle"


def test_a_run_scores_every_question_with_evidence_through_recall(tmp_path: Path) -> None:
    conversations, defects = load_locomo(write_tiny_locomo(tmp_path / "tiny.json"))
    run = run_locomo(conversations, HashingEmbedder(1024), progress=False)
    result = run.report(defects)

    assert result["overall"]["n"] == 5  # categories 1–4 with evidence
    assert result["by_category"]["5"]["n"] == 1  # reported on its own
    assert set(result["baselines"]) == {"bm25", "dense", "hybrid_rrf"}
    # Seven turns in all: with ten hits every evidence turn is found, by the product and by each baseline.
    assert result["overall"]["recall@10"] == 1.0
    assert result["overall"]["all@10"] == 1.0
    assert 0.0 < result["overall"]["mrr"] <= 1.0
    # A distinctive word finds its turn first.
    cello = run.product[1]
    assert cello.reciprocal_rank == 1.0
    table = markdown_table(result)
    assert "| BM25 over raw turns |" in table and "single-hop" in table


def test_the_command_writes_json_and_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_tiny_locomo(tmp_path / "tiny.json")
    out = tmp_path / "result.json"
    code = main(["eval", "locomo", "--data", str(data), "--out", str(out), "--embedder", "hashing", "--quiet"])
    assert code == 0
    result = json.loads(out.read_text())
    assert set(result) >= {"overall", "by_category", "baselines", "measured_on"}
    # The day of the run (the day before, for a run that crossed midnight)
    today = datetime.now(UTC).date()
    assert date.fromisoformat(result["measured_on"]) in {today, today - timedelta(days=1)}
    assert set(result["overall"]) == {"recall@5", "recall@10", "all@10", "mrr", "n"}
    assert "| retriever |" in capsys.readouterr().out


def test_a_missing_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "locomo", "--data", str(tmp_path / "nope.json"), "--embedder", "hashing"]) == 2
    assert "no LoCoMo file" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"not": ', "is not JSON"),
        ('{"sample_id": "x"}', "LoCoMo is a list of samples"),
        ('[{"sample_id": "conv-9", "qa": []}]', "sample conv-9"),  # no conversation
        ('[{"sample_id": "conv-9", "conversation": {"speaker_a": "A", "speaker_b": "B"}, "qa": [{}]}]', "conv-9"),
    ],
)
def test_a_file_that_is_not_locomo_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, says: str
) -> None:
    data = tmp_path / "odd.json"
    data.write_text(content)
    assert main(["eval", "locomo", "--data", str(data), "--embedder", "hashing", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "cannot read the LoCoMo file" in err and says in err
