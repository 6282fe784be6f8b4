"""The benchmark page: each result dated by the run that measured it, not by when its file was last touched, and
the concurrent-recall section measured and shown."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from bench import measure
from bench.run import _concurrent_section, _measured_on
from rapport.adapters.local.hashing_embedder import HashingEmbedder


def test_a_result_is_dated_by_its_run_and_an_older_one_by_its_file(tmp_path: Path) -> None:
    # Given a result written on one day, whose file a checkout touched later
    dated = tmp_path / "locomo.json"
    dated.write_text(json.dumps({"measured_on": "2026-11-30"}))
    os.utime(dated, (1_800_000_000, 1_800_000_000))  # 2027-01-15
    assert _measured_on(dated, json.loads(dated.read_text())) == "2026-11-30"
    # And a result from before runs wrote their day: its file's time is all there is
    undated = tmp_path / "scale.json"
    undated.write_text("{}")
    os.utime(undated, (1_800_000_000, 1_800_000_000))
    assert _measured_on(undated, {}) == "2027-01-15"


def test_recall_from_simultaneous_clients_is_measured_and_shown(tmp_path: Path) -> None:
    rows = measure.concurrent_recall(
        tmp_path, HashingEmbedder(measure.DIMENSIONS), memories=40, clients=(1, 3), recalls=9, runs=2
    )

    assert [row.clients for row in rows] == [1, 3]
    for row in rows:
        assert row.per_second.median > 0
        assert 0 < row.p50.low <= row.p50.median <= row.p95.high
    page = _concurrent_section({"rows": [asdict(row) for row in rows], "generated": "today"})
    assert "| clients | recalls/s | p50 ms | p95 ms |" in page
    assert [line.split("|")[1].strip() for line in page if line.startswith("| ") and "clients" not in line] == [
        "1",
        "3",
    ]
    assert _concurrent_section(None) == []
