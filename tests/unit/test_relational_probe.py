"""The relational probe's training: what it learns from (and never from), that it learns, and that the probe shipped
is the one its inputs in the repository train."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench import relational_probe
from bench.relational_sets import labelled
from rapport.domain.models import MessageRole
from rapport.domain.semantics import prototypes
from rapport.domain.semantics.matcher import MINILM, probe_path
from rapport.evaluation.extraction import DATA

pytestmark = pytest.mark.unit


def test_the_shipped_probe_was_trained_on_the_inputs_in_the_repository() -> None:
    shipped = json.loads(probe_path(MINILM, "relational").read_text(encoding="utf-8"))

    # A prototype, a labelled line or a trap changed since: `make relational-probe` trains it again.
    assert shipped["inputs_sha256"] == relational_probe.inputs_sha256(relational_probe.examples())
    assert shipped["model"] == MINILM
    assert len(shipped["weights"]) == len(shipped["classes"]) == len(shipped["bias"])
    assert {len(row) for row in shipped["weights"]} == {384}


def test_it_never_learns_from_the_test_half_the_even_lines_or_the_traps_kept_to_check_on() -> None:
    learnt = {text for text, _ in relational_probe.examples()}
    kept: set[str] = set()
    for line in (DATA / "test.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        kept |= {m["content"] for m in record.get("messages", ())}
    for path in sorted(relational_probe.SETS.glob("*.txt")):
        for _, conversation in labelled(path, "even"):
            kept |= {m.content for m in conversation.messages if m.role is MessageRole.USER}
    for name in ("written-after.txt", "written-last.txt"):
        kept |= {
            line.split(": ", 1)[1]
            for line in (relational_probe.ROOT / "lesson-traps" / name).read_text(encoding="utf-8").splitlines()
            if line.startswith("U: ") and " || " not in line
        }

    # A few plain sentences are word for word in the dev half or among the prototypes too ("I'm a high school
    # chemistry teacher."): learnt from there, not from here.
    also_allowed = {sentence for sentences in prototypes.RELATIONAL.values() for sentence in sentences}
    for line in (DATA / "dev.jsonl").read_text(encoding="utf-8").splitlines():
        also_allowed |= {m["content"] for m in json.loads(line).get("messages", ())}
    # And a short message two writers both wrote ("thanks") is on an odd line of a set the probe learns from.
    for path in sorted(relational_probe.SETS.glob("*.txt")):
        if path.name not in relational_probe.NOT_TAUGHT:
            for _, conversation in labelled(path, "odd"):
                also_allowed |= {m.content for m in conversation.messages if m.role is MessageRole.USER}
    assert kept and not (learnt & (kept - also_allowed))


def test_it_learns_to_tell_the_types_apart() -> None:
    rng = np.random.default_rng(0)
    centres = {"approach_effectiveness": np.eye(6)[0], "none": np.eye(6)[1], "working_style": np.eye(6)[2]}
    kinds = [kind for kind in centres for _ in range(20)]
    vectors = [centres[kind] + 0.1 * rng.standard_normal(6) for kind in kinds]

    classes, weights, bias = relational_probe.train(vectors, kinds)

    assert classes == sorted(centres)
    logits = np.asarray(vectors) @ np.asarray(weights).T + np.asarray(bias)
    assert [classes[i] for i in logits.argmax(axis=1)] == kinds
