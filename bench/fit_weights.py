"""Recall's score weights fitted on LoCoMo's tuning set, with leave-one-conversation-out, and measured on the check set.

Each conversation is ingested once and every question's candidates are captured once (the index search, the store
read and the graph's relation scores: everything recall reads); a weight setting is then scored by replaying the
rest of recall on those candidates with the same Recall methods the product runs, so a fit tries hundreds of
settings in minutes. The fit is coordinate ascent on R@10 + R@5 with random restarts, non-negative weights rounded to
2 places and an L1 pull towards today's weights; the similarity weight stays fixed, since scaling every weight
together changes no ranking. Check-set questions are replayed for their figures only: nothing of them is printed.
`python -m bench.fit_weights --data PATH --out FILE` (docs/recall.md, "Weights fitted on the tuning set").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rapport.clock import FixedClock
from rapport.domain.recall import RecallHit, RecallQuery, RelationScore
from rapport.domain.scope import Scope
from rapport.domain.text import tokenize
from rapport.evaluation.embedding_cache import cached_minilm, default_cache_path
from rapport.evaluation.locomo import SCORED_CATEGORIES, Conversation, Question, load_locomo
from rapport.evaluation.locomo_run import ASKED_AFTER, DEPTH, TENANT, TurnMap, ingest, local_services
from rapport.evaluation.metrics import score_question, summarise
from rapport.evaluation.splits import TUNING_IDS, parse_ids
from rapport.ports.embedder import Embedder
from rapport.ports.graph import MemoryGraph
from rapport.services.recall import Recall, _Asked, _Candidate
from rapport.settings import Settings

# The weights fitted: (settings group, field). `weights.vector` is the fixed scale; `assistant_words` has nothing to
# learn from in LoCoMo (both speakers are people).
FITTED: tuple[tuple[str, str], ...] = (
    ("weights", "keyword"),
    ("weights", "recency"),
    ("weights", "importance"),
    ("weights", "strength"),
    ("weights", "relation"),
    ("recall_context", "answer"),
    ("recall_context", "conversation"),
    ("recall_context", "speaker"),
    ("recall_context", "adjacent"),
    ("recall_time", "in_range"),
    ("recall_time", "dated"),
)
STEPS = (-0.1, -0.03, 0.03, 0.1)
CEILING = 1.0  # every fitted field is bounded to 0..1 by its settings model or by sense
MULTI_HOP = 1

Point = tuple[float, ...]


@dataclass(frozen=True)
class _Relations:
    """The relation scores recall would read, read once for every candidate: the replay asks for a subset."""

    scores: Mapping[str, RelationScore]

    def relation_scores(self, memory_ids: Sequence[str]) -> dict[str, RelationScore]:
        return {i: self.scores[i] for i in memory_ids if i in self.scores}

    def expand(self, query: RecallQuery, seeds: Sequence[RecallHit], score: Any) -> list[RecallHit]:
        raise NotImplementedError("the fit scores the query's own top 10, without graph expansion")


@dataclass(frozen=True)
class Captured:
    """One question as recall saw it: what it read, and which dialogue turns each candidate stands for."""

    sample_id: str
    category: int
    evidence: frozenset[str]
    asked: _Asked
    candidates: list[_Candidate]
    relations: _Relations | None
    turns: dict[str, frozenset[str]]


def capture(
    conversations: Sequence[Conversation], embedder: Embedder, settings: Settings
) -> tuple[list[Captured], Replay]:
    """Every conversation ingested as `rapport eval locomo` does, and every question's candidates read once; and
    the replay of the rest of recall (which reads nothing, so it outlives the throwaway stack)."""
    captured: list[Captured] = []
    clock = FixedClock(conversations[0].sessions[0].occurred_at if conversations else datetime.now(UTC))
    with local_services(embedder, clock, settings) as services:
        recall = services.recall
        for conversation in conversations:
            user_id = f"locomo-{conversation.sample_id}"
            turn_map = ingest(services, clock, conversation, user_id)
            clock.set(conversation.sessions[-1].occurred_at + ASKED_AFTER)
            scope = Scope(TENANT, user_id)
            questions = [q for q in conversation.questions if q.evidence]
            embedder.embed([q.text.strip() for q in questions if q.text.strip()])
            for question in questions:
                captured.append(_captured(recall, recall._graph, scope, conversation.sample_id, question, turn_map))
    return captured, Replay(settings, recall)


def _captured(
    recall: Recall, graph: MemoryGraph | None, scope: Scope, sample_id: str, question: Question, turn_map: TurnMap
) -> Captured:
    # Recall's own steps up to what it reads (services/recall.py, `recall`): the replay runs the rest.
    text = recall._checked_text(question.text)
    query = RecallQuery(query=text, limit=DEPTH)
    asked = _Asked(text, recall.query_vector(text), len(dict.fromkeys(tokenize(text))), recall._clock.now())
    candidates = recall._candidates(scope, query, asked)
    edges = None if graph is None else graph.edges_for_recall(scope)
    relations = None if edges is None else _Relations(edges.relation_scores([c.memory.id for c in candidates]))
    return Captured(
        sample_id=sample_id,
        category=question.category,
        evidence=question.evidence,
        asked=asked,
        candidates=candidates,
        relations=relations,
        turns={c.memory.id: turn_map.turns_behind(c.memory) for c in candidates},
    )


def replayed(recall: Recall, question: Captured) -> list[str]:
    """The ids `Recall.recall` returns for the question under `recall`'s settings, from its captured reads."""
    query = RecallQuery(query=question.asked.text, limit=DEPTH)
    hits = recall._ranked(Scope(TENANT, "replay"), query, question.asked, question.candidates, question.relations)
    return [hit.memory.id for hit in hits]


class Replay:
    """Scores weight settings on captured questions."""

    def __init__(self, base: Settings, recall: Recall) -> None:
        self._base = base
        self._recall = recall

    def today(self) -> Point:
        return tuple(float(getattr(getattr(self._base, group), name)) for group, name in FITTED)

    def settings(self, point: Point) -> Settings:
        groups: dict[str, dict[str, float]] = {}
        for (group, name), value in zip(FITTED, point, strict=True):
            groups.setdefault(group, {})[name] = value
        update = {group: getattr(self._base, group).model_copy(update=fields) for group, fields in groups.items()}
        return self._base.model_copy(update=update)

    def recall(self, point: Point) -> Recall:
        """Recall under the point's weights; only its scoring and ranking run, on captured reads."""
        r = self._recall
        return Recall(r._store, r._index, r._embedder, self.settings(point), r._clock, r._graph)

    def figures(self, point: Point, questions: Sequence[Captured]) -> dict[str, Any]:
        recall = self.recall(point)
        scores = []
        for question in questions:
            ranked = [question.turns[i] for i in replayed(recall, question)]
            scores.append(score_question(question.category, question.evidence, ranked))
        scored = [s for s in scores if s.category in SCORED_CATEGORIES]
        return {
            "overall": summarise(scored),
            "multi_hop": summarise(s for s in scored if s.category == MULTI_HOP),
        }


def objective(figures: Mapping[str, Any], point: Point, today: Point, pull: float) -> float:
    overall = figures["overall"]
    distance = sum(abs(a - b) for a, b in zip(point, today, strict=True))
    return float(overall["recall@10"] + overall["recall@5"] - pull * distance)


def fit(
    replay: Replay, questions: Sequence[Captured], restarts: int, pull: float, seed: int, sweeps: int = 3
) -> tuple[Point, float]:
    """Coordinate ascent from today's weights and from `restarts` random points around them; the best point found."""
    today = replay.today()
    rng = random.Random(seed)
    starts = [today] + [
        tuple(round(min(max(w * rng.uniform(0.5, 1.5), 0.0), CEILING), 2) for w in today) for _ in range(restarts)
    ]
    best_point, best_value = today, float("-inf")
    for start in starts:
        point = start
        value = objective(replay.figures(point, questions), point, today, pull)
        for _ in range(sweeps):
            improved = False
            for axis in range(len(FITTED)):
                for step in STEPS:
                    moved = round(min(max(point[axis] + step, 0.0), CEILING), 2)
                    if moved == point[axis]:
                        continue
                    trial = (*point[:axis], moved, *point[axis + 1 :])
                    trial_value = objective(replay.figures(trial, questions), trial, today, pull)
                    if trial_value > value + 1e-9:
                        point, value, improved = trial, trial_value, True
            if not improved:
                break
        if value > best_value:
            best_point, best_value = point, value
    return best_point, best_value


def named(point: Point) -> dict[str, float]:
    return {f"{group}.{name}": value for (group, name), value in zip(FITTED, point, strict=True)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from rapport.composition.functions import settings_from_environment

    settings = settings_from_environment()
    conversations, _ = load_locomo(args.data)
    tuning_ids = parse_ids(args.tuning_ids)
    embedder = cached_minilm(args.embedding_cache or default_cache_path())
    started = time.perf_counter()
    try:
        captured, replay = capture(conversations, embedder, settings)
    finally:
        embedder.close()
    seconds = {"capture": round(time.perf_counter() - started, 1)}
    tuning = [q for q in captured if q.sample_id in tuning_ids]
    check = [q for q in captured if q.sample_id not in tuning_ids]
    today = replay.today()
    started = time.perf_counter()
    global _FITTING
    _FITTING = (replay, tuning, args.restarts, args.pull, args.seed)
    # Each fold's fit and the whole set's run apart: forked workers inherit the captured questions.
    held_outs: list[str | None] = [*tuning_ids, None]
    with ProcessPoolExecutor(max_workers=args.workers, mp_context=multiprocessing.get_context("fork")) as pool:
        points = dict(zip(held_outs, pool.map(_fitted_without, held_outs), strict=True))
    folds = []
    for held_out in tuning_ids:
        test = [q for q in tuning if q.sample_id == held_out]
        fold_point = points[held_out]
        folds.append(
            {
                "held_out": held_out,
                "weights": named(fold_point),
                "today": replay.figures(today, test),
                "fitted": replay.figures(fold_point, test),
            }
        )
    point = points[None]
    seconds["fit"] = round(time.perf_counter() - started, 1)
    return {
        "method": {
            "objective": "mean R@10 + mean R@5 over the scored categories, minus pull x L1 distance to today",
            "pull": args.pull,
            "restarts": args.restarts,
            "steps": list(STEPS),
            "fixed": {"weights.vector": settings.weights.vector},
        },
        "today": named(today),
        "fitted": named(point),
        "leave_one_out": folds,
        "leave_one_out_mean": _fold_means(folds),
        "tuning": {"today": replay.figures(today, tuning), "fitted": replay.figures(point, tuning)},
        "check": {"today": replay.figures(today, check), "fitted": replay.figures(point, check)},
        "questions": {"tuning": len(tuning), "check": len(check)},
        "seconds": seconds,
    }


_FITTING: tuple[Replay, list[Captured], int, float, int] | None = None


def _fitted_without(held_out: str | None) -> Point:
    """The point fitted on the tuning questions but those of `held_out` (None: on all of them)."""
    assert _FITTING is not None
    replay, tuning, restarts, pull, seed = _FITTING
    train = [q for q in tuning if q.sample_id != held_out]
    point, _ = fit(replay, train, restarts, pull, seed)
    print(f"fitted without {held_out}: {named(point)}", file=sys.stderr)
    return point


def _fold_means(folds: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """The held-out figures averaged over the folds (each conversation weighs the same)."""
    means: dict[str, dict[str, float]] = {}
    for which in ("today", "fitted"):
        means[which] = {
            f"{part} {key}": round(sum(f[which][part][key] for f in folds) / len(folds), 4)
            for part in ("overall", "multi_hop")
            for key in ("recall@5", "recall@10")
        }
    return means


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--tuning-ids", default=",".join(TUNING_IDS))
    parser.add_argument("--embedding-cache", type=Path, default=None)
    parser.add_argument("--restarts", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pull", type=float, default=0.02, help="L1 pull towards today's weights, per unit")
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args(argv)
    result = run(args)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
