"""The emotion probe's training: what it learns from (and never from), and that the probe shipped is the one its
inputs in the repository train."""

from __future__ import annotations

import json

import pytest

from bench import relational_probe, signal_probe
from bench.signal_sets import labelled
from rapport.domain.semantics.matcher import MINILM, probe_path
from rapport.evaluation.extraction import DATA

pytestmark = pytest.mark.unit


def test_the_shipped_probe_was_trained_on_the_inputs_in_the_repository() -> None:
    shipped = json.loads(probe_path(MINILM, "emotion").read_text(encoding="utf-8"))

    # An odd line of a set or a dev message changed since: `python -m bench.signal_probe` trains it again.
    assert shipped["inputs_sha256"] == relational_probe.inputs_sha256(signal_probe.examples())
    assert shipped["classes"] == ["anxiety", "frustration", "none"]
    assert {len(row) for row in shipped["weights"]} == {384}


def test_it_never_learns_from_the_test_half_or_the_even_lines() -> None:
    learnt = {text for text, _ in signal_probe.examples()}
    kept: set[str] = set()
    for line in (DATA / "test.jsonl").read_text(encoding="utf-8").splitlines():
        kept |= {m["content"] for m in json.loads(line).get("messages", ()) if m["role"] == "user"}
    for path in sorted(signal_probe.SETS.glob("*.txt")):
        kept |= {message for _, _, message in labelled(path, "even")}
        if path.name in signal_probe.HELD | signal_probe.NOT_TAUGHT:
            kept |= {message for _, _, message in labelled(path, "odd")}
    also_learnt = {
        message
        for path in signal_probe.SETS.glob("*.txt")
        if path.name not in signal_probe.HELD | signal_probe.NOT_TAUGHT
        for _, _, message in labelled(path, "odd")
    }
    for line in (DATA / "dev.jsonl").read_text(encoding="utf-8").splitlines():
        also_learnt |= {m["content"] for m in json.loads(line).get("messages", ()) if m["role"] == "user"}

    # A message word for word on an odd line or in the dev half is learnt from there.
    assert kept and not (learnt & (kept - also_learnt))
