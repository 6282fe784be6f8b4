"""Runs LoCoMo through the product: ingest every session as an interaction, ask every question through recall."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tqdm import tqdm

from rapport.clock import FixedClock
from rapport.composition.services import Services, build_services
from rapport.domain.models import Memory, Message, MessageRole
from rapport.domain.recall import RecallQuery
from rapport.domain.scope import Scope
from rapport.evaluation.baselines import (
    Bm25Ranker,
    DenseRanker,
    reciprocal_rank_fusion,
    render_raw_turn,
    top_k,
)
from rapport.evaluation.embedding_cache import CachedEmbedder
from rapport.evaluation.locomo import Conversation, EvidenceDefects, Session, Turn
from rapport.evaluation.metrics import ALL_AT, QuestionScore, score_question, summarise_by_category
from rapport.evaluation.splits import TUNING_IDS, members
from rapport.ports.embedder import Embedder
from rapport.services.interactions import NewInteraction
from rapport.settings import LlmKind, PipelineMode, Settings, StoreBackend, VectorBackend

TENANT = "locomo-eval"
CHANNEL = "locomo"
DEPTH = ALL_AT  # every figure is read off the top 10
BASELINE_POOL = 100  # how deep each raw ranking goes into the RRF hybrid
_RETENTION_CAPS = ("community_max_messages", "clinic_max_messages", "enterprise_max_messages")
ENRICHMENT_WAIT_SECONDS = 600.0
# Questions are asked the day after a conversation's last session, as an assistant would the next time it is used.
ASKED_AFTER = timedelta(days=1)

BASELINE_NAMES = {
    "bm25": "BM25 over raw turns",
    "dense": "MiniLM dense over raw turns",
    "hybrid_rrf": "BM25 + MiniLM, reciprocal-rank fusion",
}


def message_text(turn: Turn) -> str:
    """What a chat client would send for the turn: its text, and a shared image's caption as the image's alt text."""
    if turn.caption is None:
        return turn.text
    return f"{turn.text} [shares a photo: {turn.caption}]".strip()


@dataclass
class TurnMap:
    """dia_id of every turn the product stored, by episode id and by provenance (interaction, message index)."""

    by_memory: dict[str, str] = field(default_factory=dict)
    by_message: dict[tuple[str, int], str] = field(default_factory=dict)

    def turns_behind(self, memory: Memory) -> frozenset[str]:
        """The turns a hit stands for: its own (an episode), or those its provenance names (an extracted memory)."""
        if memory.id in self.by_memory:
            return frozenset({self.by_memory[memory.id]})
        source = memory.source
        if source.interaction_id is not None and source.message_index is not None:
            dia_id = self.by_message.get((source.interaction_id, source.message_index))
            if dia_id is not None:
                return frozenset({dia_id})
        return frozenset()


@dataclass
class LocomoRun:
    """Each conversation's scores, by sample id in run order, so a report can group them into sets."""

    product_by_conversation: dict[str, list[QuestionScore]] = field(default_factory=dict)
    baselines_by_conversation: dict[str, dict[str, list[QuestionScore]]] = field(default_factory=dict)
    turns: int = 0
    conversations: int = 0
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def product(self) -> list[QuestionScore]:
        return [s for scores in self.product_by_conversation.values() for s in scores]

    @property
    def baselines(self) -> dict[str, list[QuestionScore]]:
        return self._baselines_of(list(self.baselines_by_conversation))

    def _baselines_of(self, sample_ids: Sequence[str]) -> dict[str, list[QuestionScore]]:
        found = [self.baselines_by_conversation[i] for i in sample_ids if i in self.baselines_by_conversation]
        return {name: [s for scores in found for s in scores[name]] for name in BASELINE_NAMES if found}

    def report(self, defects: EvidenceDefects, tuning_ids: Sequence[str] = TUNING_IDS) -> dict[str, Any]:
        """All conversations together, as before, then `sets`: the same figures for the tuning and check sets."""
        sets: dict[str, Any] = {}
        for name, ids in members(list(self.product_by_conversation), tuning_ids).items():
            product = [s for i in ids for s in self.product_by_conversation[i]]
            sets[name] = {"conversations": ids, **_figures(product, self._baselines_of(ids))}
        return {
            **_figures(self.product, self.baselines),
            "sets": sets,
            "tuning_ids": list(tuning_ids),
            "dataset": {
                "conversations": self.conversations,
                "turns": self.turns,
                "questions_scored": len(self.product),
                "evidence_defects": defects.as_dict(),
            },
            "seconds": {name: round(value, 1) for name, value in self.seconds.items()},
        }


def _figures(product: Sequence[QuestionScore], baselines: dict[str, list[QuestionScore]]) -> dict[str, Any]:
    overall, by_category = summarise_by_category(product)
    reference: dict[str, Any] = {}
    for name, scores in baselines.items():
        base_overall, base_by_category = summarise_by_category(scores)
        reference[name] = {"label": BASELINE_NAMES[name], "overall": base_overall, "by_category": base_by_category}
    return {"overall": overall, "by_category": by_category, "baselines": reference}


@contextmanager
def local_services(embedder: Embedder, clock: FixedClock, settings: Settings | None = None) -> Iterator[Services]:
    """The local stack (SQLite + embedded index) in a throwaway data directory, with the given embedder."""
    with tempfile.TemporaryDirectory(prefix="rapport-eval-") as data_dir:
        if settings is None:
            from rapport.composition.functions import settings_from_environment

            settings = settings_from_environment()
        base = settings
        local = {
            # The local stack whatever the environment says: SQLite, the embedded index, no LLM (the rule-based
            # pipeline, or none when the settings turn it off).
            "data_dir": Path(data_dir),
            "store": StoreBackend.SQLITE,
            "vector_backend": VectorBackend.EMBEDDED,
            "llm": LlmKind.RULES,
            "pipeline": PipelineMode.OFF if base.pipeline is PipelineMode.OFF else PipelineMode.LOCAL,
            # A LoCoMo conversation holds 400-700 messages, past the community plan's 500-message retention cap,
            # which would delete the oldest: the evaluation measures recall, not retention, so no plan caps here.
            "governance": base.governance.model_copy(update=dict.fromkeys(_RETENTION_CAPS)),
        }
        built = build_services(base.model_copy(update=local), clock=clock, embedder=embedder)
        try:
            yield built
        finally:
            for adapter in (built.store, built.index):
                close = getattr(adapter, "close", None)
                if close is not None:
                    close()


def ingest(
    services: Services,
    clock: FixedClock,
    conversation: Conversation,
    user_id: str,
    on_session: Callable[[], None] | None = None,
) -> TurnMap:
    """One interaction per session, recorded at the session's date; both speakers are people, so both are `user`."""
    turn_map = TurnMap()
    limit = services.settings.max_messages_per_interaction
    for session in conversation.sessions:
        clock.set(session.occurred_at)
        for chunk in _chunks(session.turns, limit):
            recorded = services.interactions.record(
                Scope(TENANT, user_id),
                NewInteraction(
                    messages=[
                        Message(role=MessageRole.USER, name=turn.speaker, content=message_text(turn)) for turn in chunk
                    ],
                    channel=CHANNEL,
                    session_id=f"{conversation.sample_id}-session-{session.number}",
                    occurred_at=session.occurred_at,
                ),
            )
            # Enrichment runs in the background by default: waited for here, so each session is linked as of its
            # own date and the questions read the whole graph, run after run. On a loaded machine the default
            # minute can run out, and a run that went on would score a graph missing links: an error instead.
            if not services.graph.flush(timeout=ENRICHMENT_WAIT_SECONDS):
                raise RuntimeError(
                    f"enrichment of {conversation.sample_id} session {session.number} did not finish within "
                    f"{ENRICHMENT_WAIT_SECONDS:.0f} s"
                )
            interaction_id = recorded.interaction.id
            for position, turn in enumerate(chunk):
                turn_map.by_message[(interaction_id, position)] = turn.dia_id
            for episode in recorded.episodes:
                index = episode.source.message_index
                if index is not None and episode.source.interaction_id == interaction_id:
                    turn_map.by_memory[episode.id] = chunk[index].dia_id
        if on_session is not None:
            on_session()
    return turn_map


def _chunks(turns: Sequence[Turn], size: int) -> Iterator[Sequence[Turn]]:
    for start in range(0, len(turns), size):
        yield turns[start : start + size]


def ask(
    services: Services,
    user_id: str,
    conversation: Conversation,
    turn_map: TurnMap,
    on_question: Callable[[], None] | None = None,
    expansion_seeds: int | None = None,
) -> list[QuestionScore]:
    """`expansion_seeds` (`--expand-relations`): the top DEPTH become that many hits the query found, then
    what graph expansion reached from them (docs/graph.md)."""
    scores = []
    for question in conversation.questions:
        if on_question is not None:
            on_question()
        if not question.evidence:
            continue
        if expansion_seeds is None:
            recall_query = RecallQuery(query=question.text, limit=DEPTH)
        else:
            recall_query = RecallQuery(query=question.text, limit=expansion_seeds, expand_relations=True)
        hits = services.recall.recall(Scope(TENANT, user_id), recall_query)[:DEPTH]
        ranked = [turn_map.turns_behind(hit.memory) for hit in hits]
        scores.append(score_question(question.category, question.evidence, ranked))
    return scores


def run_baselines(conversation: Conversation, embedder: Embedder) -> dict[str, list[QuestionScore]]:
    """BM25, dense and their RRF hybrid over the raw rendered turns of one conversation."""
    pairs: list[tuple[Session, Turn]] = [(s, t) for s in conversation.sessions for t in s.turns]
    documents = [render_raw_turn(s, t) for s, t in pairs]
    dia_ids = [t.dia_id for _, t in pairs]
    questions = [q for q in conversation.questions if q.evidence]
    bm25 = Bm25Ranker(documents)
    dense_scores = DenseRanker(documents, embedder).scores_many([q.text for q in questions]) if questions else None
    results: dict[str, list[QuestionScore]] = {name: [] for name in BASELINE_NAMES}
    for row, question in enumerate(questions):
        assert dense_scores is not None
        keyword = top_k(bm25.scores(question.text), BASELINE_POOL)
        dense = top_k(dense_scores[row], BASELINE_POOL)
        for name, ranking in (
            ("bm25", keyword),
            ("dense", dense),
            ("hybrid_rrf", reciprocal_rank_fusion([keyword, dense])),
        ):
            ranked = [frozenset({dia_ids[i]}) for i in ranking[:DEPTH]]
            results[name].append(score_question(question.category, question.evidence, ranked))
    return results


def run_locomo(
    conversations: Sequence[Conversation],
    embedder: Embedder,
    *,
    settings: Settings | None = None,
    baselines: bool = True,
    progress: bool = True,
    on_conversation: Callable[[Conversation], None] | None = None,
    expansion_seeds: int | None = None,
    on_step: Callable[[int, int], None] | None = None,
) -> LocomoRun:
    """`on_step(done, total)` reports each ingested session and asked question; given, it replaces tqdm's bar."""
    run = LocomoRun()
    run.seconds = {"ingest": 0.0, "recall": 0.0, "baselines": 0.0}
    steps = sum(len(c.sessions) + len(c.questions) for c in conversations)
    clock = FixedClock(conversations[0].sessions[0].occurred_at if conversations else datetime.now(UTC))
    with (
        local_services(embedder, clock, settings) as services,
        tqdm(total=steps, desc="LoCoMo", unit="step", disable=not progress or on_step is not None) as bar,
    ):
        done = 0

        def step() -> None:
            nonlocal done
            done += 1
            bar.update(1)
            if on_step is not None:
                on_step(done, steps)

        for conversation in conversations:
            user_id = f"locomo-{conversation.sample_id}"
            started = time.perf_counter()
            turn_map = ingest(services, clock, conversation, user_id, on_session=step)
            run.seconds["ingest"] += time.perf_counter() - started
            clock.set(conversation.sessions[-1].occurred_at + ASKED_AFTER)
            started = time.perf_counter()
            if isinstance(embedder, CachedEmbedder):
                # The questions in one batch: recall's own one-text calls then find their vectors waiting.
                embedder.embed([q.text.strip() for q in conversation.questions if q.evidence and q.text.strip()])
            run.product_by_conversation.setdefault(conversation.sample_id, []).extend(
                ask(
                    services,
                    user_id,
                    conversation,
                    turn_map,
                    on_question=step,
                    expansion_seeds=expansion_seeds,
                )
            )
            run.seconds["recall"] += time.perf_counter() - started
            if baselines:
                started = time.perf_counter()
                found = run.baselines_by_conversation.setdefault(conversation.sample_id, {})
                for name, scores in run_baselines(conversation, embedder).items():
                    found.setdefault(name, []).extend(scores)
                run.seconds["baselines"] += time.perf_counter() - started
            run.turns += len(conversation.turns)
            run.conversations += 1
            if on_conversation is not None:
                on_conversation(conversation)
    return run
