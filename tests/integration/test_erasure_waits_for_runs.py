"""An erasure waits for the person's pipeline runs still going in this process, so none writes their memories again
after it; one that does not end in time fails the erasure before anything is erased."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.clock import FixedClock
from rapport.domain.models import Interaction, Message, MessageRole
from rapport.domain.scope import Scope
from rapport.errors import ConflictError
from rapport.pipeline.in_process import InProcessPipeline
from rapport.ports.pipeline import PipelineRequest
from rapport.services.privacy import PrivacyService
from rapport.settings import Settings
from tests.conftest import START

GONE = Scope("tenant-a", "ines-erase")
OTHER = Scope("tenant-a", "omar-keep")


class _HeldRunner:
    """A run that goes on until it is let go, as a slow extraction would."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()

    def run_stored(self, request: PipelineRequest, recorded: Interaction | None) -> Any:
        self.started.set()
        self.release.wait(10)


def _request(scope: Scope, interaction_id: str, agent_id: str | None = None) -> PipelineRequest:
    named = {"agent_id": agent_id} if agent_id else {}
    return PipelineRequest(tenant_id=scope.tenant_id, user_id=scope.user_id, interaction_id=interaction_id, **named)


def test_settle_waits_for_the_persons_runs_only() -> None:
    runner = _HeldRunner()
    pipeline = InProcessPipeline(runner, store=None)  # type: ignore[arg-type]
    pipeline.start(_request(GONE, "i-1", agent_id="support"), wait=False)  # a named assistant's run is theirs too
    assert runner.started.wait(5)
    # Another person's erasure has nothing to wait for; this person's waits, and says when its run has not ended
    assert pipeline.settle(OTHER, timeout=0.05)
    assert not pipeline.settle(GONE, timeout=0.05)
    threading.Timer(0.1, runner.release.set).start()
    assert pipeline.settle(GONE, timeout=5)
    pipeline.close()


def test_an_erasure_a_run_does_not_let_go_of_fails_before_erasing(settings: Settings) -> None:
    runner = _HeldRunner()
    pipeline = InProcessPipeline(runner, store=None)  # type: ignore[arg-type]
    store = SqliteMemoryStore(settings.sqlite_path)
    index = EmbeddedVectorIndex(settings.embedded_index_path, 8)
    store.put_interaction(_interaction())
    privacy = PrivacyService(store, index, settings, FixedClock(START), in_flight=pipeline)
    pipeline.start(_request(GONE, "i-1"), wait=False)
    assert runner.started.wait(5)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("rapport.services.privacy._SETTLE_SECONDS", 0.05)
        with pytest.raises(ConflictError, match="retry the erasure"):
            privacy.erase_user(GONE, actor="test")
    assert store.get_interaction(GONE, "i-1") is not None  # nothing erased, nothing half-done
    runner.release.set()
    counts, _ = privacy.erase_user(GONE, actor="test")  # the retry, once the run has ended
    assert counts.interactions == 1
    pipeline.close()
    store.close()
    index.close()


def _interaction() -> Interaction:
    return Interaction(
        id="i-1",
        tenant_id=GONE.tenant_id,
        user_id=GONE.user_id,
        messages=[Message(role=MessageRole.USER, content="hello")],
        occurred_at=START,
        created_at=START,
    )
