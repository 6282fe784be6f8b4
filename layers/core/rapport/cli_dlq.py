"""`rapport dlq replay`: run again the pipeline runs parked as dead letters (SQS in AWS, failed-run items locally)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

from rapport.settings import Settings

SettingsOf = Callable[[argparse.Namespace], Settings]


def _cmd_replay(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    from rapport.composition.functions import redrive

    overrides = {"data_dir": args.data_dir} if args.data_dir else {}
    report = redrive(**overrides).replay(limit=args.limit)
    print(json.dumps(report.model_dump(), indent=2))
    # A letter that failed again stays parked: the exit status says so, for scripts.
    return 1 if report.failed else 0


def add_dlq_commands(commands: argparse._SubParsersAction, settings_of: SettingsOf) -> None:
    dlq = commands.add_parser("dlq", help="the pipeline's dead letters").add_subparsers(
        dest="dlq_command", required=True
    )
    replay = dlq.add_parser(
        "replay",
        help="start each parked run again (idempotent) and delete its letter once it started (AWS) or completed",
    )
    replay.add_argument("--limit", type=int, default=100, help="letters taken in one go (default 100)")
    replay.add_argument("--data-dir", help="the local data directory (default .rapport, or RAPPORT_DATA_DIR)")
    replay.set_defaults(func=lambda args: _cmd_replay(args, settings_of))
