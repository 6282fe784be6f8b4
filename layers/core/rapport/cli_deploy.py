"""`rapport` commands for operating a deployment: `index create`, `reindex`, `ingest-secret set`."""

from __future__ import annotations

import argparse
import getpass
import sys
from collections.abc import Callable
from typing import Any, cast

from pydantic import SecretStr

from rapport.settings import Settings

SettingsOf = Callable[[argparse.Namespace], Settings]


def _open_index(settings: Settings) -> Any:
    from rapport.composition.adapters import build_index, index_dimensions

    return build_index(settings, index_dimensions(settings))


def _cmd_index_create(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    index = _open_index(settings_of(args))
    ensure = getattr(index, "ensure_index", None)
    if ensure is None:
        print("the embedded index needs no creation: it is created with the data directory")
        return 0
    print("created the index" if ensure() else "the index exists with the expected dimensions")
    return 0


def _cmd_reindex(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    from rapport.composition.adapters import build_store
    from rapport.services.index_sync import rebuild_index

    settings = settings_of(args)
    index = _open_index(settings)
    ensure = getattr(index, "ensure_index", None)
    if ensure is not None:
        ensure()
    report = rebuild_index(build_store(settings).iter_all_memories(args.tenant), index)
    scope = f"tenant {args.tenant}" if args.tenant else "every tenant"
    print(f"re-indexed {report.indexed} memories of {scope} from the store (no embedding calls)")
    if report.skipped_without_embedding:
        print(f"skipped {report.skipped_without_embedding} memories stored without an embedding", file=sys.stderr)
    return 0


def _cmd_ingest_secret_set(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    from rapport.clock import SystemClock
    from rapport.composition.adapters import build_store
    from rapport.composition.ingestion import build_tenant_secrets
    from rapport.ports.items import ItemStore

    # Never a command-line argument: it would sit in the shell history and the process list.
    value = getpass.getpass(f"{args.source} secret: ") if sys.stdin.isatty() else sys.stdin.readline()
    value = value.strip()
    if not value:
        print("no secret given on standard input", file=sys.stderr)
        return 2
    settings = settings_of(args)
    secrets = build_tenant_secrets(settings, cast(ItemStore, build_store(settings)), SystemClock())
    secrets.put(args.tenant, args.source, SecretStr(value))
    print(f"stored the {args.source} secret of tenant {args.tenant} ({settings.ingest_secret_backend.value})")
    return 0


def add_deploy_commands(commands: Any, settings_of: SettingsOf) -> None:
    """Adds the commands to the `rapport` parser; each reads the same settings (RAPPORT_* and --data-dir)."""

    def command(parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace, SettingsOf], int]) -> None:
        parser.add_argument("--data-dir", help="local data directory (default .rapport, or RAPPORT_DATA_DIR)")
        parser.set_defaults(func=lambda args: run(args, settings_of))

    index = commands.add_parser("index", help="the vector index").add_subparsers(dest="index_command", required=True)
    command(index.add_parser("create", help="create the k-NN index if missing (OpenSearch)"), _cmd_index_create)

    reindex = commands.add_parser("reindex", help="rebuild the vector index from the store (embeddings are stored)")
    reindex.add_argument("--tenant", help="only this tenant's memories (default: every tenant)")
    command(reindex, _cmd_reindex)

    secrets = commands.add_parser("ingest-secret", help="per-tenant secrets of the signed ingest routes")
    secret_set = secrets.add_subparsers(dest="ingest_secret_command", required=True).add_parser(
        "set", help="store a tenant's Slack signing secret or webhook secret, read from standard input"
    )
    secret_set.add_argument("--tenant", required=True)
    secret_set.add_argument("--source", required=True, choices=["slack", "webhook"])
    command(secret_set, _cmd_ingest_secret_set)
