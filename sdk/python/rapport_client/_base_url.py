"""The base URL rule: every route path starts with `/v1`, so the client keeps the part before it."""

from __future__ import annotations

import httpx

API_PREFIX = "/v1"


def normalize_base_url(base_url: str) -> str:
    """`http://host:port`, `http://host:port/v1`, and the deployed stack's `ApiUrl` output
    (`https://<id>.execute-api.<region>.amazonaws.com/<stage>/v1/`) all name the same API: the trailing slash and a
    trailing `/v1` are dropped, a stage path (or any other prefix, e.g. behind a proxy) is kept."""
    text = base_url.strip()
    try:
        url = httpx.URL(text)
    except httpx.InvalidURL as exc:
        raise ValueError(f"base_url {base_url!r} is not a URL: {exc}") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"base_url {base_url!r} must start with http:// or https:// and name a host")
    if url.query or url.fragment:
        raise ValueError(f"base_url {base_url!r} must not carry a query or a fragment")
    path = url.path.rstrip("/")
    if path.endswith(API_PREFIX):
        path = path[: -len(API_PREFIX)].rstrip("/")
    return str(url.copy_with(path=path or "/")).rstrip("/")
