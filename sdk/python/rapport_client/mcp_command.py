"""The `rapport-mcp` command (also `rapport mcp`): its flags and environment, then the MCP server on a transport."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from rapport_client._base_url import normalize_base_url
from rapport_client._version import __version__
from rapport_client.mcp_server import McpConfig, build_server

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_HTTP_PORT = 8765


def parser(prog: str = "rapport-mcp") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Serve Rapport's memory to MCP clients (Claude Desktop, IDEs, agents) over stdio or HTTP.",
    )
    p.add_argument("--version", action="version", version=f"rapport-mcp {__version__}")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="stdio (default) or streamable HTTP")
    p.add_argument("--url", help=f"the Rapport API (default RAPPORT_URL, else {DEFAULT_URL})")
    p.add_argument("--api-key", help="the API key (default RAPPORT_API_KEY)")
    p.add_argument("--api-key-file", help="read the API key from this file (default RAPPORT_API_KEY_FILE)")
    p.add_argument("--user-id", help="the user tools act for when they omit user_id (default RAPPORT_USER_ID)")
    p.add_argument(
        "--agent-id", help="the tenant's assistant this server speaks for (default RAPPORT_AGENT_ID; none: the default)"
    )
    p.add_argument(
        "--allow-erase", action="store_true", help="offer the erase_user tool (erases everything about a person)"
    )
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per API request (default 60)")
    p.add_argument(
        "--log-level",
        choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
        default="WARNING",
        help="what is logged to stderr (default WARNING; INFO logs each API request and each failed call)",
    )
    http = p.add_argument_group("streamable HTTP")
    http.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    http.add_argument("--port", type=int, default=DEFAULT_HTTP_PORT, help=f"port (default {DEFAULT_HTTP_PORT})")
    http.add_argument("--path", default="/mcp", help="the endpoint's path (default /mcp)")
    http.add_argument(
        "--allow-remote",
        action="store_true",
        help="bind a non-loopback address: anyone who reaches it acts with this server's API key",
    )
    return p


def config_from(args: argparse.Namespace, environ: dict[str, str] | None = None) -> McpConfig:
    """The configuration from the flags, then the environment; `ValueError` says what is missing."""
    env = dict(os.environ if environ is None else environ)
    key = args.api_key or env.get("RAPPORT_API_KEY")
    key_file = args.api_key_file or env.get("RAPPORT_API_KEY_FILE")
    if not key and key_file:
        try:
            key = Path(key_file).expanduser().read_text().strip()
        except OSError as exc:
            raise ValueError(f"cannot read the API key file {key_file}: {exc.strerror}") from exc
    if not key:
        raise ValueError(
            "no API key: set RAPPORT_API_KEY (or RAPPORT_API_KEY_FILE), or pass --api-key; locally, "
            "`rapport serve` prints one and keeps it in .rapport/dev-api-key"
        )
    return McpConfig(
        # Checked now, so a bad URL fails at start rather than at every call.
        base_url=normalize_base_url(args.url or env.get("RAPPORT_URL") or DEFAULT_URL),
        api_key=key,
        default_user_id=args.user_id or env.get("RAPPORT_USER_ID") or None,
        agent_id=args.agent_id or env.get("RAPPORT_AGENT_ID") or None,
        allow_erase=args.allow_erase,
        timeout=args.timeout,
        log_level=args.log_level,
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(argv: Sequence[str] | None = None, prog: str = "rapport-mcp") -> int:
    args = parser(prog).parse_args(argv)
    try:
        server = build_server(config_from(args))
    except ValueError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    if args.transport == "stdio":
        server.run("stdio")
        return 0
    if not _is_loopback(args.host) and not args.allow_remote:
        print(
            f"{prog}: refusing to bind {args.host}: the HTTP endpoint has no authentication of its own and "
            "acts with this server's API key; bind 127.0.0.1, or pass --allow-remote behind your own auth",
            file=sys.stderr,
        )
        return 2
    server.run("streamable-http", host=args.host, port=args.port, streamable_http_path=args.path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
