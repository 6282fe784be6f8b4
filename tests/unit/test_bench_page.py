"""The benchmark page dates each result by the run that measured it, not by when its file was last touched."""

from __future__ import annotations

import json
import os
from pathlib import Path

from bench.run import _measured_on


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
