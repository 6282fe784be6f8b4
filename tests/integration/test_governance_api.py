"""Governance as a client sees it: a session's working memory, marking memories used, undoing a consolidation,
archived memories left out of listings, and `rapport jobs` run by hand."""

from __future__ import annotations

import json
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from rapport.api.app import create_lambda_app
from rapport.cli import main
from rapport.clock import FixedClock
from rapport.composition.services import Services
from rapport.domain.models import MemoryStatus
from rapport.domain.scope import Scope
from rapport.jobs.report import JobName
from tests.conftest import START
from tests.integration.api_events import FakeLambdaContext, rest_event
from tests.integration.governance_support import T, U, direction, put

pytestmark = pytest.mark.integration


@pytest.fixture
def call(services: Services):  # type: ignore[no-untyped-def]
    app = create_lambda_app(services)

    def _call(method: str, url: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        response = app.resolve(rest_event(method, url, body, **kw), FakeLambdaContext())
        payload = response["body"]
        return response["statusCode"], (json.loads(payload) if payload else None)

    return _call


def test_a_sessions_working_memory_holds_its_turns_for_thirty_minutes(call, clock: FixedClock) -> None:  # type: ignore[no-untyped-def]
    for text in ("I'm planning a trip to Rome.", "What about hotels near the Pantheon?"):
        exchange = {"messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]}
        assert call("POST", f"/v1/users/{U}/interactions", {**exchange, "session_id": "trip"})[0] == 201
        clock.advance(timedelta(minutes=5))

    status, context = call("GET", f"/v1/users/{U}/sessions/trip/context")

    assert status == 200
    assert [t["content"] for t in context["turns"]] == [
        "I'm planning a trip to Rome.",
        "Noted.",
        "What about hotels near the Pantheon?",
        "Noted.",
    ]
    assert context["summary"] == "" and context["token_budget"] == 8000 and 0 < context["token_estimate"] < 100
    assert context["expires_at"].startswith((START + timedelta(minutes=35)).isoformat()[:16])
    assert call("GET", f"/v1/users/{U}/sessions/trip/context", tenant="tenant-b")[0] == 404
    assert call("GET", f"/v1/users/{U}/sessions/other/context")[0] == 404
    clock.advance(timedelta(minutes=26))  # 31 minutes after the last activity
    status, expired = call("GET", f"/v1/users/{U}/sessions/trip/context")
    assert status == 404 and "expired 30 minutes after its last activity" in expired["message"]


def test_marking_memories_used_reinforces_todays_strength(call, clock: FixedClock) -> None:  # type: ignore[no-untyped-def]
    _, created = call("POST", f"/v1/users/{U}/memories", {"content": "Has a dog named Max", "domain": "user"})
    clock.advance(timedelta(days=5))

    status, body = call("POST", f"/v1/users/{U}/memories/used", {"memory_ids": [created["id"], "missing-id"]})

    assert status == 200 and body["not_found"] == ["missing-id"]
    [used] = body["memories"]
    assert used["strength"] == pytest.approx(math.exp(-0.5) + 0.1)
    assert used["last_reinforced_at"].startswith(clock.now().isoformat()[:19])
    assert call("POST", f"/v1/users/{U}/memories/used", {"memory_ids": []})[0] == 422


def test_a_consolidation_is_undone_by_id_and_archived_memories_are_listed_only_when_asked(
    call,  # type: ignore[no-untyped-def]
    services: Services,
) -> None:
    a, b = direction(0.97, services.embedder.dimensions)
    first = put(services, "Prefers morning meetings", at=START, embedding=a, memory_type="preference")
    second = put(services, "Likes early meetings", at=START, embedding=b, memory_type="preference")
    report = services.governance.run(JobName.CONSOLIDATE, Scope(T, U), START)
    merged_id = next(c.target for c in report.changes if c.action == "derived")

    _, listed = call("GET", f"/v1/users/{U}/memories?limit=10")
    _, everything = call("GET", f"/v1/users/{U}/memories?limit=10&include_archived=true")
    assert [m["id"] for m in listed["memories"]] == [merged_id]
    assert {m["id"] for m in everything["memories"]} == {merged_id, first.id, second.id}

    status, undone = call("POST", f"/v1/users/{U}/consolidations/{merged_id}/undo")

    assert status == 200 and undone["state"] == "undone"
    assert sorted(undone["restored"]) == sorted([first.id, second.id])
    _, listed = call("GET", f"/v1/users/{U}/memories?limit=10")
    assert {m["id"] for m in listed["memories"]} == {first.id, second.id}
    assert services.store.get_memory(Scope(T, U), merged_id).status is MemoryStatus.ARCHIVED
    assert call("POST", f"/v1/users/{U}/consolidations/no-such-id/undo")[0] == 404
    assert call("POST", f"/v1/users/{U}/consolidations/{merged_id}/undo", tenant="tenant-b")[0] == 404


@pytest.fixture
def cli_environment(monkeypatch: pytest.MonkeyPatch, services: Services) -> Path:
    monkeypatch.setenv("RAPPORT_EMBEDDER", "hashing")
    monkeypatch.setenv("RAPPORT_HASHING_DIMENSIONS", str(services.embedder.dimensions))
    monkeypatch.setenv("RAPPORT_PIPELINE", "off")
    return services.settings.data_dir


def test_jobs_run_by_hand_as_of_a_time_print_what_changed_and_then_nothing(
    services: Services, cli_environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = put(services, "Has a dog named Max", at=START)
    # past ln(1 / 0.3) / 0.1 = 12.04 days: the strength has crossed compression's 0.3, the one kind of change written
    as_of = (START + timedelta(days=13)).isoformat()
    data = ["--data-dir", str(cli_environment)]

    assert main(["jobs", "run", "decay", "--now", as_of, *data]) == 0
    first = capsys.readouterr().out
    assert main(["jobs", "run", "decay", "--now", as_of, "--tenant", T, *data]) == 0
    second = capsys.readouterr().out

    assert f"{T}/{U}: decayed 1" in first
    assert f"decayed {memory.id} 1.0000 -> {math.exp(-1.3):.4f} (below 0.3)" in first
    assert json.loads(first.splitlines()[-1])["decayed"] == 1
    assert "nothing to change" in second and json.loads(second.splitlines()[-2])["decayed"] == 0
    assert services.store.get_memory(Scope(T, U), memory.id).strength == pytest.approx(math.exp(-1.3))


def test_undo_and_plans_by_hand(services: Services, cli_environment: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = direction(0.99, services.embedder.dimensions)
    put(services, "Prefers tea", at=START, embedding=a)
    put(services, "Likes tea", at=START, embedding=b)
    data = ["--data-dir", str(cli_environment)]
    assert main(["jobs", "run", "consolidate", "--now", START.isoformat(), *data]) == 0
    merged = next(line.split()[1] for line in capsys.readouterr().out.splitlines() if line.startswith("  derived"))

    assert main(["jobs", "undo-consolidation", merged, "--tenant", T, "--user", U, *data]) == 0
    assert "is undone; restored 2 of its originals" in capsys.readouterr().out
    assert main(["jobs", "set-plan", "clinic", "--tenant", T, *data]) == 0
    assert "5000 messages per end user" in capsys.readouterr().out
    assert services.governance.plans.max_messages(Scope(T, U)) == 5_000
