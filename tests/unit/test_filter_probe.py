"""The filter probe's training: what it learns from (and never from), and that the probe shipped is the one its
inputs in the repository train."""

from __future__ import annotations

import json

import pytest

from bench import filter_probe, relational_probe
from bench.filter_sets import labelled
from rapport.domain.semantics import prototypes
from rapport.domain.semantics.matcher import MINILM, probe_path
from rapport.evaluation.extraction import DATA

pytestmark = pytest.mark.unit


def test_the_shipped_probe_was_trained_on_the_inputs_in_the_repository() -> None:
    shipped = json.loads(probe_path(MINILM, "filter").read_text(encoding="utf-8"))

    # A prototype, a dev candidate or an odd line of a set changed since: `python -m bench.filter_probe` trains it
    # again.
    assert shipped["inputs_sha256"] == relational_probe.inputs_sha256(filter_probe.examples())
    assert shipped["classes"] == ["allowed", "blocked", "quarantined", "reframed"]
    assert {len(row) for row in shipped["weights"]} == {384}


def test_it_never_learns_from_the_test_half_or_the_even_lines() -> None:
    learnt = {text for text, _ in filter_probe.examples()}
    kept: set[str] = set()
    for line in (DATA / "test.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "candidate" in record:
            kept.add(record["candidate"]["content"])
    for path in sorted(filter_probe.SETS.glob("*.txt")):
        kept |= {candidate.content for _, _, candidate in labelled(path, "even")}

    # A candidate word for word among the prototypes, the dev half or an odd line of a set is learnt from there.
    also_allowed = {sentence for sentences in prototypes.FILTER.values() for sentence in sentences}
    for path in sorted(filter_probe.SETS.glob("*.txt")):
        also_allowed |= {candidate.content for _, _, candidate in labelled(path, "odd")}
    for line in (DATA / "dev.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if "candidate" in record:
            also_allowed.add(record["candidate"]["content"])
    assert kept and not (learnt & (kept - also_allowed))


def test_each_prototype_label_stands_for_its_verdict() -> None:
    assert filter_probe.verdict_of("grievance") == "blocked"
    assert filter_probe.verdict_of("lesson_simpler") == "reframed"
    assert filter_probe.verdict_of("instruction") == "quarantined"
    assert filter_probe.verdict_of("constructive") == "allowed"
