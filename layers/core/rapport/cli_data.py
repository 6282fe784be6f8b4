"""`rapport export` and `rapport import`: one end user's data to and from a file, over HTTP through the SDK, so the
same commands move a person between a local server and a deployment."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from rapport.cli_common import Progress, finish

DEFAULT_URL = "http://127.0.0.1:8080"

Url = Annotated[
    str | None,
    typer.Option(help=f"the server (default RAPPORT_URL, else {DEFAULT_URL}), or the stack's ApiUrl"),
]
Key = Annotated[str | None, typer.Option(help="an API key of the tenant (default RAPPORT_API_KEY)")]


class Format(StrEnum):
    rapport = "rapport"
    mem0 = "mem0"


def _client(command: str, url: str | None, key: str | None) -> Any:
    try:
        from rapport_client import Rapport
    except ImportError as exc:
        raise SystemExit(f"rapport {command} needs the SDK: pip install rapport-client ({exc})") from exc
    key = key or os.environ.get("RAPPORT_API_KEY")
    if not key:
        raise SystemExit("no API key: pass --key or set RAPPORT_API_KEY (rapport serve prints a development key)")
    return Rapport(url or os.environ.get("RAPPORT_URL") or DEFAULT_URL, key)


def export(
    user: Annotated[str, typer.Argument(help="the end user's id")],
    out: Annotated[Path, typer.Option("--out", help="the file to write (rapport-export lines)")],
    url: Url = None,
    key: Key = None,
) -> None:
    with _client("export", url, key) as client, out.open("w", encoding="utf-8") as file:
        progress = Progress(f"export {user}", None)
        count = 0
        try:
            for line in client.users.export(user):
                file.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
                count += 1
                if count % 100 == 0:
                    progress.advance_to(count)
            progress.advance_to(count)
        finally:
            progress.close()
    print(f"{count} lines written to {out}", file=sys.stderr)


def _lines_of(path: Path, source_format: str, source_user: str | None) -> list[Mapping[str, Any] | str]:
    if source_format == "mem0":
        from rapport_client.mem0 import Mem0FormatError, to_lines

        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            return list(to_lines(document, source_user=source_user))
        except (ValueError, Mem0FormatError) as exc:
            raise SystemExit(f"{path} is not a Mem0 export: {exc}") from exc
    return list(_text_lines(path))


def _text_lines(path: Path) -> Iterator[str]:
    # Blank lines stay, as empty strings, so the server's line numbers are the file's.
    with path.open(encoding="utf-8") as file:
        for line in file:
            yield line.rstrip("\n")


def import_(
    user: Annotated[str, typer.Argument(help="the end user to import into")],
    file: Annotated[Path, typer.Argument(help="a rapport-export file, or Mem0's export with --format mem0")],
    source_format: Annotated[Format, typer.Option("--format")] = Format.rapport,
    source_user: Annotated[
        str | None,
        typer.Option(
            help="with --format mem0: whose Mem0 memories to take (default: the same id as USER; '*' for all of them)"
        ),
    ] = None,
    url: Url = None,
    key: Key = None,
) -> int:
    whose = None if source_user == "*" else (source_user or user)
    lines = _lines_of(file, source_format.value, whose)
    records = sum(1 for line in lines if line) - (0 if source_format is Format.mem0 else 1)
    with _client("import", url, key) as client:
        progress = Progress(f"import {user}", max(records, 0))
        try:
            result = client.users.import_(user, lines, on_chunk=lambda sent, _total: progress.advance_to(sent))
        finally:
            progress.close()
    print(json.dumps(result.model_dump(mode="json"), indent=2))
    # Lines the server refused make the exit status say so, for scripts; the rest were imported.
    return finish(1 if result.errors else 0)


def register(root: typer.Typer) -> None:
    """The commands talk to a server over HTTP (`--url`, `--key`, or RAPPORT_URL and RAPPORT_API_KEY), not to the
    local data directory."""
    root.command("export", help="write everything kept about an end user to a JSON-lines file")(export)
    root.command("import", help="import an end user's file (an export, or Mem0's with --format)")(import_)
