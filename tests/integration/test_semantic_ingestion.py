"""Recording an interaction with the semantic layer in the local pipeline: the user's sentences ride in the episodes'
embedding call, and the extractions that classify them make no call of their own for them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rapport.clock import FixedClock
from rapport.composition.services import build_services
from rapport.domain.models import Message, MessageRole
from rapport.domain.rules.model import RulesLanguageModel
from rapport.domain.scope import Scope
from rapport.domain.semantics.matcher import CALIBRATIONS, MINILM, SemanticLayer
from rapport.services.interactions import NewInteraction
from rapport.settings import EmbedderKind, Settings
from tests.unit.test_semantic_layer import CueEncoder

pytestmark = pytest.mark.integration
SAID = ("Please use bullet points from now on.", "Long paragraphs are hard for me to scan.")


class CountingEncoder(CueEncoder):
    """The fake encoder with the port's width; the layer over it takes MiniLM's bars."""

    def __init__(self) -> None:
        super().__init__(name="cue-encoder-ingestion")

    @property
    def dimensions(self) -> int:
        return len(self.embed(["width"])[0])


def _record(tmp_path: Path, clock: FixedClock, *, semantic_layer: bool) -> CountingEncoder:
    encoder = CountingEncoder()
    settings = Settings(data_dir=tmp_path / "data", embedder=EmbedderKind.HASHING)
    model = RulesLanguageModel(semantics=SemanticLayer(encoder, CALIBRATIONS[MINILM]) if semantic_layer else None)
    services = build_services(settings, clock=clock, embedder=encoder, language_model=model)
    encoder.calls.clear()
    services.interactions.record(
        Scope("t", "u"),
        NewInteraction(
            messages=[
                Message(role=MessageRole.USER, content=" ".join(SAID)),
                Message(role=MessageRole.ASSISTANT, content="Bullet points it is."),
            ]
        ),
    )
    for adapter in (services.store, services.index):
        close = getattr(adapter, "close", None)
        if close is not None:
            close()
    return encoder


@pytest.fixture
def with_layer(tmp_path: Path, clock: FixedClock) -> Iterator[CountingEncoder]:
    yield _record(tmp_path, clock, semantic_layer=True)


def test_the_users_sentences_are_embedded_once_in_the_episodes_call(with_layer: CountingEncoder) -> None:
    calls = [c for c in with_layer.calls if len(c) < 50]  # the prototypes' call is the layer's, once per process
    first = calls[0]
    assert any(" said, " in text for text in first)  # the episodes' own texts
    for sentence in SAID:
        assert sentence in first
        assert sum(call.count(sentence) for call in calls) == 1
    # The message whole too, which the user probe reads beside its sentences.
    assert sum(call.count(" ".join(SAID)) for call in calls) == 1
    assert " ".join(SAID) in first


def test_without_the_layer_the_episodes_call_carries_no_sentences(tmp_path: Path, clock: FixedClock) -> None:
    encoder = _record(tmp_path, clock, semantic_layer=False)
    assert all(sentence not in call for call in encoder.calls for sentence in SAID)
