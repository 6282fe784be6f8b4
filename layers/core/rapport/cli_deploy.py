"""`rapport` commands for operating a deployment: `index create`, `reindex`, `ingest-secret set`."""

from __future__ import annotations

import getpass
import sys
from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import Annotated, Any, TypeVar, cast

import typer
from pydantic import SecretStr

from rapport.cli_common import DataDir, Progress, finish, settings_of
from rapport.settings import Settings

T = TypeVar("T")

index_app = typer.Typer(help="the vector index", no_args_is_help=True)
secret_app = typer.Typer(help="per-tenant secrets of the signed ingest routes", no_args_is_help=True)


class Source(StrEnum):
    slack = "slack"
    webhook = "webhook"


def _open_index(settings: Settings) -> Any:
    from rapport.composition.adapters import build_index, index_dimensions

    return build_index(settings, index_dimensions(settings))


@index_app.command("create", help="create the k-NN index if missing (OpenSearch)")
def index_create(data_dir: DataDir = None) -> None:
    index = _open_index(settings_of(data_dir))
    ensure = getattr(index, "ensure_index", None)
    if ensure is None:
        print("the embedded index needs no creation: it is created with the data directory")
        return
    print("created the index" if ensure() else "the index exists with the expected dimensions")


def _counted(items: Iterable[T], progress: Progress) -> Iterator[T]:
    for item in items:
        progress.advance()
        yield item


def reindex(
    tenant: Annotated[str | None, typer.Option(help="only this tenant's memories (default: every tenant)")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress bar")] = False,
    data_dir: DataDir = None,
) -> None:
    from rapport.composition.adapters import build_store
    from rapport.services.index_sync import rebuild_index

    settings = settings_of(data_dir)
    index = _open_index(settings)
    ensure = getattr(index, "ensure_index", None)
    if ensure is not None:
        ensure()
    # The store is read as a stream, so the total is unknown: the bar counts memories as they go.
    with Progress("re-index", None, enabled=not quiet) as progress:
        report = rebuild_index(_counted(build_store(settings).iter_all_memories(tenant), progress), index)
    scope = f"tenant {tenant}" if tenant else "every tenant"
    print(f"re-indexed {report.indexed} memories of {scope} from the store (no embedding calls)")
    if report.skipped_without_embedding:
        print(f"skipped {report.skipped_without_embedding} memories stored without an embedding", file=sys.stderr)


@secret_app.command("set", help="store a tenant's Slack signing secret or webhook secret, read from standard input")
def ingest_secret_set(
    tenant: Annotated[str, typer.Option()],
    source: Annotated[Source, typer.Option()],
    data_dir: DataDir = None,
) -> int:
    from rapport.clock import SystemClock
    from rapport.composition.adapters import build_store
    from rapport.composition.ingestion import build_tenant_secrets
    from rapport.ports.items import ItemStore

    # Never a command-line argument: it would sit in the shell history and the process list.
    value = getpass.getpass(f"{source.value} secret: ") if sys.stdin.isatty() else sys.stdin.readline()
    value = value.strip()
    if not value:
        print("no secret given on standard input", file=sys.stderr)
        return finish(2)
    settings = settings_of(data_dir)
    secrets = build_tenant_secrets(settings, cast(ItemStore, build_store(settings)), SystemClock())
    secrets.put(tenant, source.value, SecretStr(value))
    print(f"stored the {source.value} secret of tenant {tenant} ({settings.ingest_secret_backend.value})")
    return 0


def register(root: typer.Typer) -> None:
    root.add_typer(index_app, name="index")
    root.command("reindex", help="rebuild the vector index from the store (embeddings are stored)")(reindex)
    root.add_typer(secret_app, name="ingest-secret")
