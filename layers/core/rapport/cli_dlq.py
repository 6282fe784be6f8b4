"""`rapport dlq replay`: run again the pipeline runs parked as dead letters (SQS in AWS, failed-run items locally)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from rapport.cli_common import DataDir, Json, finish

app = typer.Typer(help="the pipeline's dead letters", no_args_is_help=True)


@app.command(
    "replay",
    help="start each parked run again (idempotent) and delete its letter once it started (AWS) or completed",
)
def replay(
    limit: Annotated[int, typer.Option(help="letters taken in one go")] = 100,
    json_output: Json = False,
    data_dir: DataDir = None,
) -> int:
    from rapport.composition.functions import redrive

    overrides = {"data_dir": data_dir} if data_dir else {}
    report = redrive(**overrides).replay(limit=limit)
    # The report is JSON either way (scripts read it); --json prints it on one line.
    print(json.dumps(report.model_dump(), indent=None if json_output else 2))
    # A letter that failed again stays parked: the exit status says so, for scripts.
    return finish(1 if report.failed else 0)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="dlq")
