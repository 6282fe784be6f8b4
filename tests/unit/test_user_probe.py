"""The user probe's training: what it learns from (and never from), and that the probe shipped is the one its
inputs in the repository train."""

from __future__ import annotations

import json

import pytest

from bench import relational_probe, user_probe
from bench.relational_sets import labelled
from rapport.domain.models import MessageRole
from rapport.domain.semantics import prototypes
from rapport.domain.semantics.matcher import MINILM, probe_path
from rapport.evaluation.extraction import DATA

pytestmark = pytest.mark.unit


def test_the_shipped_probe_was_trained_on_the_inputs_in_the_repository() -> None:
    shipped = json.loads(probe_path(MINILM, "user").read_text(encoding="utf-8"))

    # A prototype or a labelled line changed since: `make relational-probe` trains it again.
    assert shipped["inputs_sha256"] == relational_probe.inputs_sha256(user_probe.examples())
    assert shipped["classes"] == ["event", "fact", "goal", "none", "preference"]
    assert {len(row) for row in shipped["weights"]} == {384}


def test_it_never_learns_from_the_test_half_the_even_lines_or_the_sets_kept_to_check_on() -> None:
    learnt = {text for text, _ in user_probe.examples()}
    kept: set[str] = set()
    for line in (DATA / "test.jsonl").read_text(encoding="utf-8").splitlines():
        kept |= {m["content"] for m in json.loads(line).get("messages", ())}
    for path in sorted(user_probe.SETS.glob("*.txt")):
        checked = path.match(user_probe.CHECKED)
        for _, conversation in labelled(path, None if checked else "even"):
            kept |= {m.content for m in conversation.messages if m.role is MessageRole.USER}

    # A sentence word for word in the dev half or among the prototypes too is learnt from there, not from here.
    also_allowed = {sentence for sentences in prototypes.USER.values() for sentence in sentences}
    for line in (DATA / "dev.jsonl").read_text(encoding="utf-8").splitlines():
        also_allowed |= {m["content"] for m in json.loads(line).get("messages", ())}
    assert kept and not (learnt & (kept - also_allowed))


def test_it_learns_each_kind_from_each_source() -> None:
    learnt = user_probe.examples()

    assert {kind for _, kind in learnt} == {"fact", "preference", "event", "goal", "none"}
    assert ("I'm a nurse.", "fact") in learnt  # a prototype
