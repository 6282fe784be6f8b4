"""`rapport export` and `rapport import`: one end user's data to and from a file, over HTTP through the SDK, so the
same commands move a person between a local server and a deployment."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from rapport.settings import Settings

SettingsOf = Callable[[argparse.Namespace], Settings]
DEFAULT_URL = "http://127.0.0.1:8080"


class Progress:
    """A progress line on stderr: rich's bar when it is installed, a plain counter otherwise."""

    def __init__(self, label: str, total: int | None) -> None:
        self._label = label
        self._total = total
        self._rich: Any = None
        self._bar: Any = None
        try:
            from rich.progress import Progress as RichProgress
        except ImportError:
            return
        self._rich = RichProgress(transient=False)
        self._rich.start()
        self._bar = self._rich.add_task(label, total=total)

    def advance_to(self, done: int) -> None:
        if self._rich is not None:
            self._rich.update(self._bar, completed=done)
        else:
            of = f"/{self._total}" if self._total is not None else ""
            print(f"\r{self._label}: {done}{of} lines", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
        else:
            print(file=sys.stderr)


def _client(args: argparse.Namespace) -> Any:
    try:
        from rapport_client import Rapport
    except ImportError as exc:
        raise SystemExit(f"rapport {args.command} needs the SDK: pip install rapport-client ({exc})") from exc
    key = args.key or os.environ.get("RAPPORT_API_KEY")
    if not key:
        raise SystemExit("no API key: pass --key or set RAPPORT_API_KEY (rapport serve prints a development key)")
    return Rapport(args.url or os.environ.get("RAPPORT_URL") or DEFAULT_URL, key)


def _cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.out)
    with _client(args) as client, out.open("w", encoding="utf-8") as file:
        progress = Progress(f"export {args.user}", None)
        count = 0
        try:
            for line in client.users.export(args.user):
                file.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
                count += 1
                if count % 100 == 0:
                    progress.advance_to(count)
            progress.advance_to(count)
        finally:
            progress.close()
    print(f"{count} lines written to {out}", file=sys.stderr)
    return 0


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


def _cmd_import(args: argparse.Namespace) -> int:
    source_user = None if args.source_user == "*" else (args.source_user or args.user)
    lines = _lines_of(Path(args.file), args.format, source_user)
    records = sum(1 for line in lines if line) - (0 if args.format == "mem0" else 1)
    with _client(args) as client:
        progress = Progress(f"import {args.user}", max(records, 0))
        try:
            result = client.users.import_(args.user, lines, on_chunk=lambda sent, _total: progress.advance_to(sent))
        finally:
            progress.close()
    print(json.dumps(result.model_dump(mode="json"), indent=2))
    # Lines the server refused make the exit status say so, for scripts; the rest were imported.
    return 1 if result.errors else 0


def add_data_commands(commands: argparse._SubParsersAction, settings_of: SettingsOf) -> None:
    """The commands talk to a server over HTTP (`--url`, `--key`, or RAPPORT_URL and RAPPORT_API_KEY), not to the
    local data directory, so `settings_of` is not read."""
    export = commands.add_parser("export", help="write everything kept about an end user to a JSON-lines file")
    export.add_argument("user", help="the end user's id")
    export.add_argument("--out", required=True, help="the file to write (rapport-export lines)")
    _add_server_arguments(export)
    export.set_defaults(func=_cmd_export)

    imported = commands.add_parser("import", help="import an end user's file (an export, or Mem0's with --format)")
    imported.add_argument("user", help="the end user to import into")
    imported.add_argument("file", help="a rapport-export file, or Mem0's export with --format mem0")
    imported.add_argument("--format", choices=("rapport", "mem0"), default="rapport")
    imported.add_argument(
        "--source-user",
        help="with --format mem0: whose Mem0 memories to take (default: the same id as USER; '*' for all of them)",
    )
    _add_server_arguments(imported)
    imported.set_defaults(func=_cmd_import)


def _add_server_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help=f"the server (default RAPPORT_URL, else {DEFAULT_URL}), or the stack's ApiUrl")
    parser.add_argument("--key", help="an API key of the tenant (default RAPPORT_API_KEY)")
