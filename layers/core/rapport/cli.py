"""The `rapport` command: serve the API locally, manage keys."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rapport import __version__
from rapport.cli_deploy import add_deploy_commands
from rapport.cli_dlq import add_dlq_commands
from rapport.cli_jobs import add_jobs_commands
from rapport.evaluation.cli import add_bench_commands, add_eval_commands
from rapport.settings import Settings


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, object] = {}
    if getattr(args, "data_dir", None):
        overrides["data_dir"] = Path(args.data_dir)
    from rapport.composition.functions import settings_from_environment

    return settings_from_environment(**overrides)


def _cmd_serve(args: argparse.Namespace) -> int:
    from rapport.local.server import serve

    # The local embedder's weights ship in a package; never reach for a model hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    serve(_settings(args), args.host, args.port)
    return 0


def _cmd_keys_create(args: argparse.Namespace) -> int:
    from rapport.composition.adapters import build_store
    from rapport.services.auth import ApiKeyAuthenticator

    key = ApiKeyAuthenticator(build_store(_settings(args))).issue_key(args.tenant, name=args.name)
    print(key)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rapport", description="Relational memory for AI assistants.")
    parser.add_argument("--version", action="version", version=f"rapport {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the API locally with embedded defaults")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--data-dir", help="where data lives (default .rapport, or RAPPORT_DATA_DIR)")
    serve.set_defaults(func=_cmd_serve)

    keys = commands.add_parser("keys", help="API keys").add_subparsers(dest="keys_command", required=True)
    create = keys.add_parser("create", help="issue a key for a tenant and print it once")
    create.add_argument("--tenant", required=True)
    create.add_argument("--name", default="default")
    create.add_argument("--data-dir")
    create.set_defaults(func=_cmd_keys_create)

    add_deploy_commands(commands, _settings)
    add_jobs_commands(commands, _settings)
    add_dlq_commands(commands, _settings)
    add_eval_commands(commands, _settings)
    add_bench_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
