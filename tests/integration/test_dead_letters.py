"""Locally a run that could not finish is kept (a failed-run item, the local dead-letter queue) and `rapport dlq
replay` runs it again: the memories it should have stored appear, once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rapport.cli import main
from rapport.composition.services import Services
from rapport.domain.scope import Scope
from rapport.errors import UpstreamError
from rapport.pipeline.extract import Extract
from rapport.pipeline.redrive import Redrive
from rapport.services.interactions import NewInteraction
from rapport.settings import Settings

T, U = "tenant-a", "dana"
CONVERSATION = NewInteraction.model_validate(
    {
        "messages": [
            {"role": "user", "content": "I'm getting a 500 on /users again. It's our main API at work."},
            {"role": "assistant", "content": "Let's add step-by-step logging around the request handlers."},
            {"role": "user", "content": "It was the auth middleware, thanks — the step-by-step logging really helped"},
        ]
    }
)


def extracted(services: Services) -> list[str]:
    return sorted(m.id for m in services.store.iter_all_memories(T) if m.type != "episode")


def model_down(monkeypatch: pytest.MonkeyPatch) -> None:
    def down(self: Extract, *args: Any, **kwargs: Any) -> Any:
        raise UpstreamError("OpenAI chat failed after 2 attempts: HTTP 503")

    monkeypatch.setattr(Extract, "user", down)


def test_a_failed_run_is_parked_and_a_replay_stores_its_memories_once(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the model is down while a conversation is recorded
    model_down(monkeypatch)
    recorded = services.interactions.record(Scope(T, U), CONVERSATION, wait=True)
    assert recorded.pipeline is not None and recorded.pipeline.status == "failed"
    # Then the failure is parked, in the dead-letter format
    (parked,) = services.dead_letters.receive(10)
    assert parked.letter.request.interaction_id == recorded.interaction.id
    assert parked.letter.failure.error == "UpstreamError" and "503" in parked.letter.failure.cause
    assert extracted(services) == []
    # When the model is back and the letters are replayed
    monkeypatch.undo()
    redrive = Redrive(services.dead_letters, services.pipeline_trigger)  # type: ignore[arg-type]
    report = redrive.replay()
    # Then the run completed, its memories are stored and its letter is gone
    assert report.replayed == [recorded.interaction.id] and report.failed == {}
    stored = extracted(services)
    assert stored
    assert services.dead_letters.receive(10) == []
    # And a second replay (or a redelivered letter) changes nothing
    services.dead_letters.send(parked.letter)
    assert redrive.replay().replayed == [recorded.interaction.id]
    assert extracted(services) == stored


def test_a_replay_that_fails_again_keeps_its_letter(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    model_down(monkeypatch)
    recorded = services.interactions.record(Scope(T, U), CONVERSATION, wait=True)
    report = Redrive(services.dead_letters, services.pipeline_trigger).replay()  # type: ignore[arg-type]
    assert list(report.failed) == [recorded.interaction.id]
    assert len(services.dead_letters.receive(10)) == 1


def test_a_start_that_fails_is_parked_too(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the trigger itself cannot start (the local pool refuses work, say)
    trigger = services.pipeline_trigger

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("cannot schedule new futures after shutdown")

    monkeypatch.setattr(type(trigger), "start", refused)
    recorded = services.interactions.record(Scope(T, U), CONVERSATION, wait=False)
    assert recorded.pipeline is not None and recorded.pipeline.status == "failed"
    (parked,) = services.dead_letters.receive(10)
    assert parked.letter.failure.error == "RuntimeError" and parked.letter.execution_id is None


def test_rapport_dlq_replay_runs_the_parked_runs_of_the_local_store(
    services: Services, settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model_down(monkeypatch)
    recorded = services.interactions.record(Scope(T, U), CONVERSATION, wait=True)
    monkeypatch.undo()
    # The command builds its own services from the environment, over the same data directory
    monkeypatch.setenv("RAPPORT_EMBEDDER", "hashing")
    monkeypatch.setenv("RAPPORT_HASHING_DIMENSIONS", str(settings.hashing_dimensions))
    monkeypatch.setenv("RAPPORT_LLM", "rules")
    assert main(["dlq", "replay", "--data-dir", str(settings.data_dir)]) == 0
    assert json.loads(capsys.readouterr().out) == {"replayed": [recorded.interaction.id], "failed": {}}
    assert extracted(services)
