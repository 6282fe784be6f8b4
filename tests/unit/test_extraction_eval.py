"""`rapport eval extraction`'s scoring on a small labelled set of its own (the patterns alone, no model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rapport.evaluation.extraction import HALVES, Expected, LabelledSetError, evaluate_halves
from rapport.evaluation.extraction_report import markdown
from rapport.settings import Settings

CONVERSATIONS = [
    {
        "id": "a",
        "messages": [{"role": "user", "content": "I work at Acme Corp and my dog Rex is a menace."}],
        "user": [
            {"kind": "fact", "gist": ["acme"]},
            {"kind": "fact", "gist": ["dog", "rex"]},
            {"kind": "goal", "gist": ["marathon"]},
        ],
        "relational": [],
        "signals": {"crisis": False},
    },
    {
        "id": "b",
        "messages": [{"role": "user", "content": "I want to end my life."}],
        "user": [],
        "relational": [],
        "signals": {"crisis": True, "sentiment": "down"},
    },
    {
        "id": "f1",
        "candidate": {
            "domain": "relational",
            "type": "interaction_pattern",
            "content": "User was frustrated with my response",
            "correction": False,
        },
        "verdict": "blocked",
    },
    {
        "id": "f2",
        "candidate": {"domain": "user", "type": "fact", "content": "User's dog is Rex, not Max", "correction": True},
        "verdict": "allowed",
    },
]


def labelled(tmp_path: Path) -> Path:
    for half in HALVES:
        (tmp_path / f"{half}.jsonl").write_text("\n".join(json.dumps(r) for r in CONVERSATIONS) + "\n")
    return tmp_path


def test_precision_recall_and_the_confusion_matrix_are_counted_per_type(tmp_path: Path) -> None:
    result = evaluate_halves(labelled(tmp_path), Settings(), minilm=False)

    test = result["halves"][0]
    assert result["model"] == "rules (patterns alone)" and test["half"] == "test"
    fact = test["by_type"]["fact"]
    assert (fact["precision"], fact["recall"], fact["expected"]) == (1.0, 1.0, 2)
    assert test["by_type"]["goal"]["recall"] == 0.0  # labelled, not found
    assert test["confusion"]["blocked"] == {"blocked": 1} and test["confusion"]["allowed"] == {"allowed": 1}
    assert test["crisis_raising_sentiment"] == [] and test["signals"]["crisis"] == {"right": 2, "labelled": 2}
    table = markdown(result)
    assert "| user: fact | 1.00 | 1.00 | 2 |" in table and "| blocked | 0 | 1 | 0 | 0 |" in table


def test_a_memory_counts_for_an_accepted_type_holding_every_key_word_group() -> None:
    label = Expected("communication_preference", ("working_style",), ("start|begin", "question"), optional=False)

    assert label.accepts("working_style", "User wants to be told where to start, not asked questions")
    assert not label.accepts("working_style", "User wants to be told where to start")
    assert not label.accepts("shared_context", "Where to start, not questions")


def test_a_missing_or_broken_set_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(LabelledSetError, match="no labelled set"):
        evaluate_halves(tmp_path, Settings(), minilm=False)
    for half in HALVES:
        (tmp_path / f"{half}.jsonl").write_text("{not json\n")
    with pytest.raises(LabelledSetError, match="is not JSON"):
        evaluate_halves(tmp_path, Settings(), minilm=False)
