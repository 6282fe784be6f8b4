"""The weight fit's replay (bench/fit_weights.py) ranks as recall does, so what it fits is what recall would return."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.fit_weights import FITTED, Point, Replay, capture, fit, objective, replayed
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.clock import FixedClock
from rapport.domain.recall import RecallQuery
from rapport.domain.scope import Scope
from rapport.evaluation.locomo import load_locomo
from rapport.evaluation.locomo_run import DEPTH, TENANT, ingest, local_services
from rapport.settings import PipelineMode, Settings
from tests.integration.locomo_fixture import write_tiny_locomo


def _keywords_first(replay: Replay) -> Point:
    """Keywords over meaning, conversation context off: a ranking unlike today's."""
    today = dict(zip(FITTED, replay.today(), strict=True))
    changed = {**today, ("weights", "keyword"): 1.0}
    return tuple(0.0 if key[0] == "recall_context" else value for key, value in changed.items())


@pytest.mark.parametrize("weights", ["today", "keywords first"])
def test_the_replay_returns_what_recall_returns(tmp_path: Path, weights: str) -> None:
    # Given the tiny conversation captured once
    conversations, _ = load_locomo(write_tiny_locomo(tmp_path / "tiny.json"))
    embedder = HashingEmbedder(256)
    captured, replay = capture(conversations, embedder, Settings(pipeline=PipelineMode.OFF))
    point = replay.today() if weights == "today" else _keywords_first(replay)
    # And ingested again into a live stack running those weights
    conversation = conversations[0]
    clock = FixedClock(conversation.sessions[0].occurred_at)
    with local_services(embedder, clock, replay.settings(point)) as services:
        user_id = f"locomo-{conversation.sample_id}"
        ingest(services, clock, conversation, user_id)
        clock.set(captured[0].asked.now)
        for question in captured:
            # When the question is asked of live recall and replayed from its capture
            hits = services.recall.recall(Scope(TENANT, user_id), RecallQuery(query=question.asked.text, limit=DEPTH))
            contents = {c.memory.id: c.memory.content for c in question.candidates}
            # Then both rank the same memories in the same order (ids differ between the two stacks)
            replay_order = [contents[i] for i in replayed(replay.recall(point), question)]
            assert replay_order == [hit.memory.content for hit in hits]


def test_a_fit_keeps_weights_in_bounds_and_never_scores_below_its_start(tmp_path: Path) -> None:
    conversations, _ = load_locomo(write_tiny_locomo(tmp_path / "tiny.json"))
    captured, replay = capture(conversations, HashingEmbedder(256), Settings(pipeline=PipelineMode.OFF))
    today = replay.today()
    point, value = fit(replay, captured, restarts=1, pull=0.02, seed=1, sweeps=1)
    assert len(point) == len(FITTED)
    assert all(0.0 <= w <= 1.0 and round(w, 2) == w for w in point)
    assert value >= objective(replay.figures(today, captured), today, today, 0.02)
