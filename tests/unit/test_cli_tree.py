"""The `rapport` command tree as a user meets it: groups in --help, --version, JSON a script parses, completion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rapport import __version__
from rapport.cli import app, main

runner = CliRunner()


def test_help_lists_every_group() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for group in (
        "serve",
        "keys",
        "mcp",
        "index",
        "reindex",
        "ingest-secret",
        "jobs",
        "dlq",
        "export",
        "import",
        "eval",
        "bench",
    ):
        assert group in result.output


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"rapport {__version__}"


def test_keys_list_json_parses(tmp_path: Path) -> None:
    data = ["--data-dir", str(tmp_path)]
    created = runner.invoke(app, ["keys", "create", "--tenant", "acme", "--name", "ci", *data])
    assert created.exit_code == 0, created.output
    listed = runner.invoke(app, ["keys", "list", "--tenant", "acme", "--json", *data])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    assert [(row["name"], row["status"]) for row in rows] == [("ci", "active")]
    assert created.stdout.strip() not in listed.stdout


def test_jobs_run_and_set_plan_json(tmp_path: Path) -> None:
    data = ["--data-dir", str(tmp_path)]
    run = runner.invoke(app, ["jobs", "run", "decay", "--now", "2026-02-01T03:00:00Z", "--json", "--quiet", *data])
    assert run.exit_code == 0, run.output
    document = json.loads(run.stdout)
    assert document["job"] == "decay"
    assert document["as_of"] == "2026-02-01T03:00:00+00:00"
    assert document["summary"]["failed_users"] == []
    assert document["users"] == []
    plan = runner.invoke(app, ["jobs", "set-plan", "clinic", "--tenant", "acme", "--json", *data])
    assert plan.exit_code == 0, plan.output
    assert json.loads(plan.stdout)["plan"] == "clinic"


def test_bad_input_is_a_usage_error_with_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jobs", "run", "decay", "--now", "not-a-time", "--data-dir", str(tmp_path)]) == 2
    assert "ISO-8601" in capsys.readouterr().err
    assert main(["jobs", "run", "no-such-job", "--data-dir", str(tmp_path)]) == 2
    assert main(["no-such-command"]) == 2


def test_show_completion_offers_a_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELL", "/bin/bash")
    result = runner.invoke(app, ["--show-completion", "bash"], prog_name="rapport")
    assert result.exit_code == 0, result.output
    assert "complete" in result.output
    assert "_RAPPORT_COMPLETE" in result.output


def test_completion_completes_subcommands(monkeypatch: pytest.MonkeyPatch) -> None:
    # What the installed completion script asks at a <TAB>: the words after `rapport jo`.
    monkeypatch.setenv("_RAPPORT_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", "rapport jo")
    monkeypatch.setenv("COMP_CWORD", "1")
    result = runner.invoke(app, [], prog_name="rapport")
    assert "jobs" in result.output.split()
    monkeypatch.setenv("COMP_WORDS", "rapport jobs run ")
    monkeypatch.setenv("COMP_CWORD", "3")
    result = runner.invoke(app, [], prog_name="rapport")
    assert {"decay", "consolidate"} <= set(result.output.split())


def test_the_lambda_layer_never_carries_the_cli_dependencies() -> None:
    from infra.constructs.core_layer import locked_pins

    names = {pin.name for pin in locked_pins()}
    assert names and not names & {"typer", "rich", "click"}
