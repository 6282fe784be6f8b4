"""Where strong / moderate / weak should cut: relevance of true and false matches, measured on LoCoMo.

A true match is a question's evidence turn; a false match is any other turn of the same conversation. Relevance is
what recall labels (`rapport.domain.scoring.relevance`: similarity and keyword coverage, by the recall weights), with
the embedder recall uses (MiniLM by default). The conversations are split before any cut is chosen: the even ones
choose the cuts, the odd ones are only measured with them.

The cut rule, fixed before looking at the numbers, reads the false matches only, so it does not depend on how many
true matches a store holds: *strong* is the relevance that 1 % of unrelated memories reach, *moderate* the one that
10 % reach. The report gives, on the held-out conversations, the share of true and of false matches each label gets.

    python -m bench.match_strength --locomo ../shared/datasets/locomo/locomo-dev.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from rapport.composition.embedders import build_embedder
from rapport.domain.scoring import RecallSignals, relevance
from rapport.domain.text import tokenize
from rapport.evaluation.locomo import Conversation, load_locomo
from rapport.evaluation.locomo_run import message_text
from rapport.settings import Settings

STRONG_FALSE_SHARE = 0.01
MODERATE_FALSE_SHARE = 0.10
CATEGORIES = (1, 2, 3, 4)


def _relevances(conversation: Conversation, embedder: Any, settings: Settings) -> tuple[list[float], list[float]]:
    turns = conversation.turns
    texts = [message_text(t) for t in turns]
    turn_vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    turn_terms = [set(tokenize(text)) for text in texts]
    questions = [q for q in conversation.questions if q.category in CATEGORIES and q.evidence]
    question_vectors = np.asarray(embedder.embed([q.text for q in questions]), dtype=np.float32)
    true: list[float] = []
    false: list[float] = []
    for question, vector in zip(questions, question_vectors, strict=True):
        terms = set(tokenize(question.text))
        similarities = turn_vectors @ vector
        for turn, similarity, memory_terms in zip(turns, similarities, turn_terms, strict=True):
            matched = tuple(sorted(terms & memory_terms))
            signals = RecallSignals(
                similarity=float(similarity),
                keyword=0.0,
                matched_terms=matched,
                query_terms=len(terms),
                age_days=0.0,
                importance=0.5,
                strength=1.0,
            )
            (true if turn.dia_id in question.evidence else false).append(relevance(signals, settings.weights))
    return true, false


def _labels(values: list[float], strong: float, moderate: float) -> dict[str, float]:
    array = np.asarray(values)
    return {
        "strong": round(float(np.mean(array >= strong)), 4),
        "moderate": round(float(np.mean((array >= moderate) & (array < strong))), 4),
        "weak": round(float(np.mean(array < moderate)), 4),
    }


def _percentiles(values: list[float]) -> dict[str, float]:
    array = np.asarray(values)
    return {f"p{p}": round(float(np.percentile(array, p)), 4) for p in (10, 25, 50, 75, 90, 99)}


def calibrate(path: Path) -> dict[str, Any]:
    settings = Settings()
    embedder = build_embedder(settings)
    conversations, _ = load_locomo(path)
    split: dict[str, tuple[list[float], list[float]]] = {"choose": ([], []), "held_out": ([], [])}
    for number, conversation in enumerate(conversations):
        true, false = _relevances(conversation, embedder, settings)
        part = split["choose" if number % 2 == 0 else "held_out"]
        part[0].extend(true)
        part[1].extend(false)
    choose_true, choose_false = split["choose"]
    strong = round(float(np.quantile(choose_false, 1 - STRONG_FALSE_SHARE)), 2)
    moderate = round(float(np.quantile(choose_false, 1 - MODERATE_FALSE_SHARE)), 2)
    held_true, held_false = split["held_out"]
    return {
        "embedder": type(embedder).__name__,
        "rule": f"strong: {STRONG_FALSE_SHARE:.0%} of false matches reach it; moderate: {MODERATE_FALSE_SHARE:.0%}",
        "cuts": {"strong": strong, "moderate": moderate},
        "previous_cuts": {"strong": 0.6, "moderate": 0.35},
        "choose": {
            "true_matches": len(choose_true),
            "false_matches": len(choose_false),
            "true": _percentiles(choose_true),
            "false": _percentiles(choose_false),
        },
        "held_out": {
            "true_matches": len(held_true),
            "false_matches": len(held_false),
            "true_labels": _labels(held_true, strong, moderate),
            "false_labels": _labels(held_false, strong, moderate),
            "true_labels_previous_cuts": _labels(held_true, 0.6, 0.35),
            "false_labels_previous_cuts": _labels(held_false, 0.6, 0.35),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, required=True, help="a LoCoMo JSON file")
    parser.add_argument("--out", type=Path, default=Path("bench/results/match-strength.json"))
    args = parser.parse_args()
    result = calibrate(args.locomo)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
