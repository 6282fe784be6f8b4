"""What every `rapport` command group shares: the settings from RAPPORT_* and --data-dir, the exit status, and a
progress bar on standard error (so standard output stays what a script parses)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from rapport.settings import Settings

DataDir = Annotated[
    str | None,
    typer.Option("--data-dir", help="local data directory (default .rapport, or RAPPORT_DATA_DIR)"),
]
Json = Annotated[bool, typer.Option("--json", help="print JSON (for scripts) instead of text")]


def settings_of(data_dir: str | None) -> Settings:
    from rapport.composition.functions import settings_from_environment

    overrides: dict[str, object] = {"data_dir": Path(data_dir)} if data_dir else {}
    return settings_from_environment(**overrides)


def finish(code: int) -> int:
    """The command's exit status: typer ignores a returned value, so a failure is raised as `typer.Exit`."""
    if code:
        raise typer.Exit(code)
    return 0


class Progress:
    """rich's bar on standard error while a long command works; `total` None shows a running count."""

    def __init__(self, label: str, total: int | None, *, enabled: bool = True) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        self._rich: Any = None
        if not enabled:
            return
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        self._rich = RichProgress(*columns, console=Console(file=sys.stderr), transient=False)
        self._rich.start()
        self._task = self._rich.add_task(label, total=total)

    def advance_to(self, done: int) -> None:
        if self._rich is not None:
            self._rich.update(self._task, completed=done)

    def update(self, done: int, total: int | None) -> None:
        if self._rich is not None:
            self._rich.update(self._task, completed=done, total=total)

    def advance(self, step: int = 1) -> None:
        if self._rich is not None:
            self._rich.advance(self._task, step)

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
