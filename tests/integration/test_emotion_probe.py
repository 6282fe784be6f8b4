"""The emotion probe over the real MiniLM model, through the local product: a worry or a grievance in words the
signal rules have no cue for is read, and reading it costs the interaction no embedding call of its own. Wordings of
their own, not the labelled set's nor the signal set's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.measure import TENANT, local_services
from rapport.adapters.local.minilm import MiniLmEmbedder
from rapport.adapters.local.vader import RuleSignalDetector
from rapport.domain.models import Message, MessageRole
from rapport.domain.scope import Scope
from rapport.domain.semantics.matcher import semantic_layer
from rapport.domain.signals import Emotion, Intent, find_emotions
from rapport.services.interactions import NewInteraction

pytestmark = [pytest.mark.integration, pytest.mark.slow]


class _Counting:
    """MiniLM, with every text it is asked to embed kept in order."""

    def __init__(self, model: MiniLmEmbedder) -> None:
        self._model = model
        self.asked: list[str] = []

    @property
    def name(self) -> str:
        return self._model.name

    @property
    def dimensions(self) -> int:
        return self._model.dimensions

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.asked += texts
        return self._model.embed(texts)


@pytest.fixture(scope="module")
def minilm() -> Iterator[MiniLmEmbedder]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        yield MiniLmEmbedder()


@pytest.mark.parametrize(
    ("said", "felt"),
    [
        ("my biopsy results come back friday and I can't focus on anything else", Emotion.ANXIETY),
        ("the visa interview is tomorrow morning and my hands won't stop shaking", Emotion.ANXIETY),
        ("you've given me code that doesn't compile three times now", Emotion.FRUSTRATION),
    ],
)
def test_what_the_rules_miss_the_probe_reads(minilm: MiniLmEmbedder, said: str, felt: Emotion) -> None:
    assert find_emotions(said) == ()  # no cue of the rules
    assert RuleSignalDetector(semantics=semantic_layer(minilm)).detect(said).emotions == (felt,)


def test_a_worry_the_rules_take_for_frustration_is_a_worry(minilm: MiniLmEmbedder) -> None:
    said = "my biopsy results come back friday and I keep refreshing the patient portal"
    assert find_emotions(said) == (Emotion.FRUSTRATION,)  # "keep …ing"
    reading = RuleSignalDetector(semantics=semantic_layer(minilm)).detect(said)
    assert reading.emotions == (Emotion.ANXIETY,)


def test_a_plain_question_stays_without_an_emotion(minilm: MiniLmEmbedder) -> None:
    detector = RuleSignalDetector(semantics=semantic_layer(minilm))
    assert detector.detect("what's a good substitute for buttermilk in pancakes?").emotions == ()


class _SaysFrustration:
    """A semantic layer whose emotion probe is sure every message is a frustration."""

    def probabilities(self, classifier: str, texts: list[str]) -> list[dict[str, float]]:
        assert classifier == "emotion"
        return [{"frustration": 0.95, "anxiety": 0.02, "none": 0.03} for _ in texts]


@pytest.mark.parametrize(
    "said", ["Can you check my maths homework?", "Please summarise this article for me.", "help me plan a menu"]
)
def test_a_request_is_not_a_frustration_on_the_probes_word_alone(said: str) -> None:
    detector = RuleSignalDetector(semantics=_SaysFrustration())  # type: ignore[arg-type]
    reading = detector.detect(said)
    # Asked for something, with no cue of a feeling: neither a frustration nor anything against me
    assert reading.intent is Intent.REQUEST and reading.emotions == ()
    assert not reading.effect().frustration and reading.mood_delta >= 0


@pytest.mark.parametrize("said", ["ok", "no", "fine", "nope."])
def test_a_terse_reply_is_not_asked_of_the_probe(minilm: MiniLmEmbedder, said: str) -> None:
    assert RuleSignalDetector(semantics=_SaysFrustration()).detect(said).emotions == ()  # type: ignore[arg-type]
    assert RuleSignalDetector(semantics=semantic_layer(minilm)).detect(said).emotions == ()
    # A cue of the rules still reads, however short
    assert RuleSignalDetector(semantics=semantic_layer(minilm)).detect("ugh").emotions == (Emotion.FRUSTRATION,)


def test_the_probes_frustration_still_reads_what_is_not_a_request() -> None:
    detector = RuleSignalDetector(semantics=_SaysFrustration())  # type: ignore[arg-type]
    # A statement at me the rules have no cue for: the probe's word stands, and it counts against me
    reading = detector.detect("you've given me code that doesn't compile three times now")
    assert reading.intent is not Intent.REQUEST and reading.emotions == (Emotion.FRUSTRATION,)
    assert reading.effect().frustration


@pytest.mark.parametrize(
    "said",
    [
        "Can you explain how a tracker mortgage works?",
        "Please turn these notes into a short summary for my manager.",
        "could you look over my chemistry homework",
    ],
)
def test_everyday_requests_through_the_shipped_probe_carry_no_feeling(minilm: MiniLmEmbedder, said: str) -> None:
    reading = RuleSignalDetector(semantics=semantic_layer(minilm)).detect(said)
    assert reading.emotions == () and not reading.effect().frustration


def test_recording_reads_the_emotion_from_the_vector_the_episodes_call_made(
    minilm: MiniLmEmbedder, tmp_path: Path
) -> None:
    said = "my biopsy results come back friday and I can't focus on anything else"
    counting = _Counting(minilm)
    with local_services(tmp_path, counting) as services:  # type: ignore[arg-type]
        recorded = services.interactions.record(
            Scope(TENANT, "u-emotion"),
            NewInteraction(
                messages=[
                    Message(role=MessageRole.USER, content=said),
                    Message(
                        role=MessageRole.ASSISTANT,
                        content="That wait is hard. Want to plan the questions for your doctor?",
                    ),
                ]
            ),
        )

    assert recorded.interaction.metadata["detected_emotions"] == ["anxiety"]
    # Embedded once, in the episodes' call: the signal reading found its vector there.
    assert counting.asked.count(said) == 1
