"""The `rapport` command: serve the API locally, manage keys."""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rapport import __version__
from rapport.cli_data import add_data_commands
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


def _authenticator(args: argparse.Namespace) -> Any:
    from rapport.composition.adapters import build_store
    from rapport.services.auth import ApiKeyAuthenticator

    return ApiKeyAuthenticator(build_store(_settings(args)))


def _cmd_keys_create(args: argparse.Namespace) -> int:
    expires = datetime.fromisoformat(args.expires) if args.expires else None
    if expires is not None and expires.tzinfo is None:
        expires = expires.replace(tzinfo=UTC)
    print(_authenticator(args).issue_key(args.tenant, name=args.name, expires_at=expires))
    return 0


def _cmd_keys_list(args: argparse.Namespace) -> int:
    now = datetime.now(UTC)
    rows = []
    for record in _authenticator(args).list_keys(args.tenant):
        status = "revoked" if record.revoked_at else "active" if record.usable(now) else "expired"
        rows.append(
            {
                "key_id": record.key_id,
                "name": record.name,
                "status": status,
                "created_at": record.created_at.isoformat(),
                "expires_at": record.expires_at.isoformat() if record.expires_at else None,
                "last_used_at": record.last_used_at.isoformat() if record.last_used_at else None,
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            print(
                f"{row['key_id']}  {row['status']:<8} {row['name']:<16} created {row['created_at']}"
                f"  expires {row['expires_at'] or 'never'}  last used {row['last_used_at'] or 'never'}"
            )
    return 0


def _cmd_keys_revoke(args: argparse.Namespace) -> int:
    record = _authenticator(args).revoke(args.tenant, args.key_id)
    print(f"revoked {record.key_id}")
    return 0


def _cmd_keys_rotate(args: argparse.Namespace) -> int:
    key, old = _authenticator(args).rotate(args.tenant, args.key_id, grace=timedelta(hours=args.grace_hours))
    print(key)
    ending = "now" if args.grace_hours <= 0 else f"in {args.grace_hours:g} h"
    print(f"the old key {old.key_id} stops working {ending}", file=sys.stderr)
    return 0


def _cmd_mcp(argv: list[str]) -> int:
    # The MCP server is the SDK's (an optional install, as it talks to any deployment); it owns its flags.
    try:
        from rapport_client.mcp_command import main as mcp_main
    except ImportError as exc:
        print(f"rapport mcp needs the SDK's MCP extra: pip install 'rapport-client[mcp]' ({exc})", file=sys.stderr)
        return 2
    return mcp_main(argv, prog="rapport mcp")


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
    create.add_argument("--expires", help="ISO date or time the key stops working (UTC unless it says)")
    create.add_argument("--data-dir")
    create.set_defaults(func=_cmd_keys_create)
    listed = keys.add_parser("list", help="a tenant's keys: id, name, status, expiry, last use (never the key)")
    listed.add_argument("--tenant", required=True)
    listed.add_argument("--json", action="store_true")
    listed.add_argument("--data-dir")
    listed.set_defaults(func=_cmd_keys_list)
    revoke = keys.add_parser("revoke", help="stop a key now")
    revoke.add_argument("--tenant", required=True)
    revoke.add_argument("key_id", help="the key's id (as listed), or at least its first 8 characters")
    revoke.add_argument("--data-dir")
    revoke.set_defaults(func=_cmd_keys_revoke)
    rotate = keys.add_parser("rotate", help="issue a replacement (printed once); the old key ends after a grace")
    rotate.add_argument("--tenant", required=True)
    rotate.add_argument("key_id")
    rotate.add_argument("--grace-hours", type=float, default=24.0, help="how long the old key still works (0: now)")
    rotate.add_argument("--data-dir")
    rotate.set_defaults(func=_cmd_keys_rotate)

    # Listed for --help only: main() hands `rapport mcp ...` to the SDK's own parser before this one runs.
    commands.add_parser("mcp", help="serve memory to MCP clients over stdio or HTTP (rapport mcp --help)")
    add_deploy_commands(commands, _settings)
    add_jobs_commands(commands, _settings)
    add_dlq_commands(commands, _settings)
    add_data_commands(commands, _settings)
    add_eval_commands(commands, _settings)
    add_bench_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["mcp"]:
        return _cmd_mcp(argv[1:])
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
