"""`rapport eval extraction`: the rule-based model (patterns, and the semantic layer when the embedder has one) over
the labelled set — user and relational memories per type, the filter's verdicts, and the signals."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rapport.domain.filtering import Verdict
from rapport.domain.models import TYPES_BY_DOMAIN, Domain, Message, MessageRole
from rapport.domain.prompts import extract_relational, extract_user, payload
from rapport.domain.prompts.conversation import ConversationInput, PromptMessage
from rapport.domain.quarantine import withheld_messages
from rapport.domain.relational_state import apply_interaction, initial_state
from rapport.domain.rules.model import RulesLanguageModel
from rapport.domain.signals import Emotion, combine
from rapport.pipeline.constructive_filter import ConstructiveFilter
from rapport.pipeline.extract import relational_candidate, user_candidate
from rapport.ports.pipeline import Candidate, ExtractionResult, PipelineState
from rapport.ports.signals import SignalDetector
from rapport.settings import Settings

DATA = Path(__file__).parent / "extraction_set"
HALVES = ("dev", "test")
RELATIONAL_TYPES = tuple(sorted(TYPES_BY_DOMAIN[Domain.RELATIONAL]))
USER_KINDS = ("fact", "preference", "event", "goal")
VERDICTS = tuple(v.value for v in Verdict)
# A relational memory of these types is a lesson: stored with no such lesson in the conversation, it is invented.
LESSON_TYPES = frozenset({"communication_preference", "approach_effectiveness", "working_style"})
_STORED = {Verdict.ALLOWED, Verdict.REFRAMED}
_MOVE = 1e-6


class LabelledSetError(ValueError):
    """The labelled set cannot be read: a missing file or a record without what it must have."""


@dataclass(frozen=True)
class Expected:
    type: str
    also: tuple[str, ...]
    gist: tuple[str, ...]
    optional: bool

    def accepts(self, type_: str, content: str) -> bool:
        """Of an acceptable type, and every gist group (alternatives split by `|`, `_` a space) in the content."""
        if type_ != self.type and type_ not in self.also:
            return False
        lowered = content.lower()
        return all(any(alt.replace("_", " ") in lowered for alt in group.split("|")) for group in self.gist)


@dataclass
class Tally:
    predicted: int = 0
    predicted_right: int = 0
    expected: int = 0
    expected_found: int = 0

    def precision(self) -> float | None:
        return self.predicted_right / self.predicted if self.predicted else None

    def recall(self) -> float | None:
        return self.expected_found / self.expected if self.expected else None


@dataclass
class HalfResult:
    half: str
    conversations: int = 0
    messages: int = 0
    by_type: dict[str, Tally] = field(default_factory=dict)
    confusion: dict[str, Counter[str]] = field(default_factory=dict)
    invented_lessons: list[dict[str, str]] = field(default_factory=list)
    crisis_raising_sentiment: list[str] = field(default_factory=list)
    signals: dict[str, Tally] = field(default_factory=dict)  # per signal: expected (labelled), expected_found (right)
    misses: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "half": self.half,
            "conversations": self.conversations,
            "messages": self.messages,
            "by_type": {
                name: {
                    "precision": t.precision(),
                    "recall": t.recall(),
                    "predicted": t.predicted,
                    "expected": t.expected,
                }
                for name, t in sorted(self.by_type.items())
            },
            "confusion": {e: dict(sorted(row.items())) for e, row in sorted(self.confusion.items())},
            "invented_lessons": self.invented_lessons,
            "crisis_raising_sentiment": self.crisis_raising_sentiment,
            "signals": {name: {"right": t.expected_found, "labelled": t.expected} for name, t in self.signals.items()},
        }


def load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise LabelledSetError(f"no labelled set at {path}")
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LabelledSetError(f"{path}:{number} is not JSON: {exc.msg}") from exc
        if "id" not in record or ("messages" not in record and "candidate" not in record):
            raise LabelledSetError(f"{path}:{number} has no id, or neither messages nor a candidate")
        records.append(record)
    return records


def _expected(items: Iterable[dict[str, Any]], key: str) -> list[Expected]:
    return [
        Expected(item[key], tuple(item.get("also", ())), tuple(item["gist"]), bool(item.get("optional")))
        for item in items
    ]


def _conversation(record: dict[str, Any]) -> ConversationInput:
    messages = [Message(role=MessageRole(m["role"]), content=m["content"]) for m in record["messages"]]
    withheld = withheld_messages(messages)
    return ConversationInput(
        messages=[
            PromptMessage(index=i, role=m.role, content=m.content) for i, m in enumerate(messages) if i not in withheld
        ],
        withheld=sorted(withheld),
    )


class ExtractionEvaluation:
    """Runs each conversation through the same prompts, rule-based model and filter step as the pipeline."""

    def __init__(self, model: RulesLanguageModel, detector: SignalDetector, settings: Settings) -> None:
        self._model = model
        self._filter = ConstructiveFilter(model, None)
        self._detector = detector
        self._settings = settings

    def run(self, half: str, records: Sequence[dict[str, Any]]) -> HalfResult:
        result = HalfResult(half)
        for name in (*RELATIONAL_TYPES, *USER_KINDS):
            result.by_type[name] = Tally()
        result.confusion = {v: Counter() for v in VERDICTS}
        for record in records:
            if "candidate" in record:
                self._judge_one(record, result)
            else:
                self._conversation(record, result)
        return result

    def stored(self, record: dict[str, Any]) -> list[tuple[str, str, str]]:
        """(domain, type, content) of what the pipeline would store from the conversation."""
        conversation = _conversation(record)
        user = self._model.structured(
            system=extract_user.SYSTEM,
            user=payload.render(extract_user.TASK, conversation),
            response_model=extract_user.UserExtraction,
        )
        relational = self._model.structured(
            system=extract_relational.SYSTEM,
            user=payload.render(extract_relational.TASK, conversation),
            response_model=extract_relational.RelationalExtraction,
        )
        # The pipeline's own conversion, so the filter is judged on the candidates the pipeline would hand it
        results = [
            ExtractionResult(
                domain=Domain.USER,
                extractor=self._model.name,
                candidates=[user_candidate(m) for m in user.memories],
            ),
            ExtractionResult(
                domain=Domain.RELATIONAL,
                extractor=self._model.name,
                candidates=[relational_candidate(m) for m in relational.memories],
            ),
        ]
        state = PipelineState(tenant_id="eval", user_id="eval", interaction_id=record["id"], extracted=results)
        outcome = self._filter(state)
        return [
            (j.candidate.domain.value, j.candidate.type, j.content)
            for j in outcome.judged
            if j.verdict in _STORED and j.content is not None
        ]

    def _conversation(self, record: dict[str, Any], result: HalfResult) -> None:
        result.conversations += 1
        result.messages += len(record["messages"])
        stored = self.stored(record)
        expected = {
            "user": _expected(record.get("user", ()), "kind"),
            "relational": _expected(record.get("relational", ()), "type"),
        }
        for domain, type_, content in stored:
            tally = result.by_type.setdefault(type_, Tally())
            tally.predicted += 1
            if any(e.accepts(type_, content) for e in expected[domain]):
                tally.predicted_right += 1
            else:
                result.misses.append({"id": record["id"], "false": type_, "content": content})
                if domain == "relational" and type_ in LESSON_TYPES:
                    result.invented_lessons.append({"id": record["id"], "type": type_, "content": content})
        for domain, items in expected.items():
            for e in items:
                if e.optional:
                    continue
                tally = result.by_type.setdefault(e.type, Tally())
                tally.expected += 1
                if any(d == domain and e.accepts(t, c) for d, t, c in stored):
                    tally.expected_found += 1
                else:
                    result.misses.append({"id": record["id"], "missed": e.type, "gist": " ".join(e.gist)})
        self._signals(record, result)

    def _judge_one(self, record: dict[str, Any], result: HalfResult) -> None:
        candidate = Candidate(importance=0.5, confidence=0.6, **record["candidate"])
        results = [ExtractionResult(domain=candidate.domain, extractor=self._model.name, candidates=[candidate])]
        state = PipelineState(tenant_id="eval", user_id="eval", interaction_id=record["id"], extracted=results)
        judged = self._filter(state).judged[0]
        result.confusion[record["verdict"]][judged.verdict.value] += 1
        if judged.verdict.value != record["verdict"]:
            given, expected = judged.verdict.value, record["verdict"]
            result.misses.append({"id": record["id"], "verdict": given, "expected": expected, "reason": judged.reason})

    def _signals(self, record: dict[str, Any], result: HalfResult) -> None:
        labels: dict[str, Any] = record.get("signals") or {}
        if not labels:
            return
        said = [m["content"] for m in record["messages"] if m["role"] == "user"]
        observed = observed_signals(self._detector, self._settings, said)
        for name, want in labels.items():
            tally = result.signals.setdefault(name, Tally())
            tally.expected += 1
            if observed[name] == want:
                tally.expected_found += 1
            else:
                result.misses.append({"id": record["id"], "signal": name, "expected": want, "observed": observed[name]})
        if labels.get("crisis") and observed["sentiment"] == "up":
            result.crisis_raising_sentiment.append(record["id"])


def observed_signals(detector: SignalDetector, settings: Settings, said: Sequence[str]) -> dict[str, Any]:
    """What one interaction's user messages do to a new relational state, as the labels name it: the sentiment's
    direction, whether grudge rose, the crisis flag, and the emotion that dominates (anxiety only when no frustration
    or anger is there)."""
    signals = combine([detector.detect(text) for text in said])
    policy = settings.relational
    before = initial_state(policy)
    after = apply_interaction(before, signals.effect(), datetime(2026, 1, 5, tzinfo=UTC), policy)
    emotions = set(signals.emotions)
    if Emotion.ANXIETY in emotions and not emotions & {Emotion.FRUSTRATION, Emotion.ANGER}:
        emotion = "anxiety"
    elif emotions & {Emotion.FRUSTRATION, Emotion.ANGER}:
        emotion = "frustration"
    else:
        emotion = "none"
    return {
        "sentiment": _direction(after.sentiment - before.sentiment),
        "crisis": signals.crisis,
        "emotion": emotion,
        "grudge": "up" if after.grudge - before.grudge > _MOVE else "flat",
    }


def _direction(delta: float) -> str:
    if delta > _MOVE:
        return "up"
    if delta < -_MOVE:
        return "down"
    return "flat"


def evaluate_halves(
    data: Path,
    settings: Settings,
    *,
    minilm: bool = True,
    on_step: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Both halves (test first, as reported), with the semantic layer over MiniLM and its shipped bars, or the
    patterns alone. The bars are searched on dev alone (`extraction_cv.calibrate_dev`), never here."""
    from rapport.adapters.local.vader import RuleSignalDetector
    from rapport.domain.semantics.matcher import semantic_layer

    halves = {half: load(data / f"{half}.jsonl") for half in HALVES}
    layer = None
    if minilm:
        from rapport.adapters.local.minilm import MiniLmEmbedder

        layer = semantic_layer(MiniLmEmbedder())
    detector = RuleSignalDetector(semantics=layer)
    model = RulesLanguageModel(settings.pipeline_max_candidates, layer)
    evaluation = ExtractionEvaluation(model, detector, settings)
    results = {half: evaluation.run(half, halves[half]) for half in ("test", "dev")}
    return {
        "model": f"rules + semantic layer ({layer.name})" if layer is not None else "rules (patterns alone)",
        "halves": [results[h].as_dict() for h in ("test", "dev")],
        "dev_misses": results["dev"].misses,
    }
