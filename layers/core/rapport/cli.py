"""The `rapport` command: the root of one typer command tree (each group a sub-app in its own module); serve the API
locally, manage keys."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import typer

from rapport import __version__, cli_data, cli_deploy, cli_dlq, cli_jobs
from rapport.cli_common import DataDir, Json, settings_of
from rapport.evaluation import cli as evaluation_cli

app = typer.Typer(name="rapport", help="Relational memory for AI assistants.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys", no_args_is_help=True)
Tenant = Annotated[str, typer.Option("--tenant", help="the tenant")]


def _show_version(value: bool) -> None:
    if value:
        print(f"rapport {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_show_version, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    pass


@app.command("serve", help="run the API locally with embedded defaults")
def serve(
    host: str = "127.0.0.1",
    port: int = 8080,
    data_dir: Annotated[
        str | None, typer.Option(help="where data lives (default .rapport, or RAPPORT_DATA_DIR)")
    ] = None,
) -> None:
    from rapport.local.server import serve as serve_locally

    # The local embedder's weights ship in a package; never reach for a model hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    serve_locally(settings_of(data_dir), host, port)


def _authenticator(data_dir: str | None) -> Any:
    from rapport.composition.adapters import build_store
    from rapport.services.auth import ApiKeyAuthenticator

    return ApiKeyAuthenticator(build_store(settings_of(data_dir)))


def _expiry(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        expires = datetime.fromisoformat(text)
    except ValueError as exc:
        raise typer.BadParameter(f"{text!r} is not an ISO date or time", param_hint="--expires") from exc
    return expires if expires.tzinfo else expires.replace(tzinfo=UTC)


def _scopes(names: list[str] | None) -> Any:
    from rapport.domain.access import LEGACY_SCOPES, parse_scopes
    from rapport.errors import InvalidInputError

    if not names:
        return LEGACY_SCOPES
    try:
        return parse_scopes(names)
    except InvalidInputError as exc:
        raise typer.BadParameter(str(exc), param_hint="--scope") from exc


@keys_app.command("create", help="issue a key for a tenant and print it once")
def keys_create(
    tenant: Tenant,
    name: str = "default",
    expires: Annotated[
        str | None, typer.Option(help="ISO date or time the key stops working (UTC unless it says)")
    ] = None,
    scope: Annotated[
        list[str] | None,
        typer.Option(
            help="what the key may do, repeatable: memories:read, memories:write, knowledge:write, privacy:erase, "
            "admin (every scope; the default when none is given)"
        ),
    ] = None,
    data_dir: DataDir = None,
) -> None:
    scopes = _scopes(scope)
    print(_authenticator(data_dir).issue_key(tenant, name=name, expires_at=_expiry(expires), scopes=scopes))


@keys_app.command("list", help="a tenant's keys: id, name, status, expiry, last use (never the key)")
def keys_list(tenant: Tenant, json_output: Json = False, data_dir: DataDir = None) -> None:
    now = datetime.now(UTC)
    rows = []
    for record in _authenticator(data_dir).list_keys(tenant):
        status = "revoked" if record.revoked_at else "active" if record.usable(now) else "expired"
        rows.append(
            {
                "key_id": record.key_id,
                "name": record.name,
                "status": status,
                "created_at": record.created_at.isoformat(),
                "expires_at": record.expires_at.isoformat() if record.expires_at else None,
                "last_used_at": record.last_used_at.isoformat() if record.last_used_at else None,
                "scopes": sorted(s.value for s in record.scopes),
            }
        )
    if json_output:
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            print(
                f"{row['key_id']}  {row['status']:<8} {row['name']:<16} created {row['created_at']}"
                f"  expires {row['expires_at'] or 'never'}  last used {row['last_used_at'] or 'never'}"
                f"  scopes {' '.join(row['scopes'])}"
            )


@keys_app.command("revoke", help="stop a key now")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="the key's id (as listed), or at least its first 8 characters")],
    tenant: Tenant,
    data_dir: DataDir = None,
) -> None:
    record = _authenticator(data_dir).revoke(tenant, key_id)
    print(f"revoked {record.key_id}")


@keys_app.command("rotate", help="issue a replacement (printed once); the old key ends after a grace")
def keys_rotate(
    key_id: str,
    tenant: Tenant,
    grace_hours: Annotated[float, typer.Option(help="how long the old key still works (0: now)")] = 24.0,
    data_dir: DataDir = None,
) -> None:
    key, old = _authenticator(data_dir).rotate(tenant, key_id, grace=timedelta(hours=grace_hours))
    print(key)
    ending = "now" if grace_hours <= 0 else f"in {grace_hours:g} h"
    print(f"the old key {old.key_id} stops working {ending}", file=sys.stderr)


def _cmd_mcp(argv: list[str]) -> int:
    # The MCP server is the SDK's (an optional install, as it talks to any deployment); it owns its flags.
    try:
        from rapport_client.mcp_command import main as mcp_main
    except ImportError as exc:
        print(f"rapport mcp needs the SDK's MCP extra: pip install 'rapport-client[mcp]' ({exc})", file=sys.stderr)
        return 2
    return mcp_main(argv, prog="rapport mcp")


# Listed for --help only: main() hands `rapport mcp ...` to the SDK's own parser before typer sees it.
@app.command(
    "mcp",
    help="serve memory to MCP clients over stdio or HTTP (rapport mcp --help)",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
)
def mcp(ctx: typer.Context) -> int:
    code = _cmd_mcp(list(ctx.args))
    if code:
        raise typer.Exit(code)
    return 0


app.add_typer(keys_app, name="keys")
cli_deploy.register(app)
cli_jobs.register(app)
cli_dlq.register(app)
cli_data.register(app)
evaluation_cli.register(app)


def main(argv: list[str] | None = None) -> int:
    """The console script, and what tests call: the exit status is returned, not raised."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["mcp"]:
        return _cmd_mcp(argv[1:])
    # typer reports usage errors and exits; the status is caught so a caller gets it as a value.
    try:
        app(args=argv, prog_name="rapport")
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            return exit_.code or 0
        print(exit_.code, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
