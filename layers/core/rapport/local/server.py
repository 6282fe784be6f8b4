"""`rapport serve`: the same core and routes as in Lambda, with embedded defaults, in one local process."""

from __future__ import annotations

import secrets
from pathlib import Path

from rapport.api.app import create_local_app
from rapport.composition.services import Services, build_services
from rapport.explorer.site import StaticSite
from rapport.local.gateway import LocalGateway
from rapport.settings import Settings

DEV_KEY_FILE = "dev-api-key"


def seed_api_keys(services: Services) -> str | None:
    """Register RAPPORT_API_KEYS, and revoke the seeded keys no longer listed; with none configured, reuse or
    create a dev key kept in the data directory."""
    pairs = services.settings.api_key_pairs()
    services.auth.reconcile_seeded(pairs)
    if pairs:
        return None
    key_file: Path = services.settings.data_dir / DEV_KEY_FILE
    if key_file.exists():
        dev_key = key_file.read_text().strip()
    else:
        dev_key = "dev_" + secrets.token_urlsafe(24)
        key_file.parent.mkdir(parents=True, exist_ok=True)
        key_file.write_text(dev_key + "\n")
        key_file.chmod(0o600)
    services.auth.register_key(dev_key, "dev", name="dev")
    return dev_key


def build_local_gateway(services: Services) -> LocalGateway:
    return LocalGateway(
        create_local_app(services),
        services.auth,
        cors_origins=services.settings.cors_origin_list(),
        body_timeout=services.settings.body_timeout_seconds,
        site=StaticSite(),
    )


def serve(settings: Settings, host: str, port: int) -> None:
    import uvicorn

    from rapport.local.http_protocol import JsonErrorH11Protocol  # uvicorn's: the local extra only

    services = build_services(settings)
    dev_key = seed_api_keys(services)
    # Load the embedding model now, so the first request does not wait seconds for it.
    services.embedder.embed(["warm up"])
    print(f"Rapport serving on http://{host}:{port} (data in {settings.data_dir.resolve()})", flush=True)
    if dev_key:
        print(f"Development API key (tenant 'dev'): {dev_key}", flush=True)
    print(f"API docs: http://{host}:{port}/v1/docs", flush=True)
    print(f"Memory explorer: http://{host}:{port}/explorer", flush=True)
    uvicorn.run(build_local_gateway(services), host=host, port=port, log_level="info", http=JsonErrorH11Protocol)
