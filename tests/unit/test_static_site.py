"""The memory explorer's files: answered by name without a key, nothing outside the explorer folder, ever."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from rapport.explorer.site import EXPLORER_DIR, StaticSite
from rapport.local.gateway import LocalGateway

pytestmark = pytest.mark.unit


def test_the_folder_answers_the_page_and_the_bare_prefix_redirects_to_it() -> None:
    site = StaticSite()
    bare = site.answer("GET", "/explorer")
    assert bare.status == 308 and bare.headers["location"] == "/explorer/"
    for path in ("/explorer/", "/explorer/index.html"):
        page = site.answer("GET", path)
        assert page.status == 200 and page.headers["content-type"].startswith("text/html")
        assert page.body == (EXPLORER_DIR / "index.html").read_text()
    assert site.answer("GET", "/explorer/app.js").headers["content-type"].startswith("text/javascript")
    assert site.answer("GET", "/explorer/explorer.css").headers["content-type"].startswith("text/css")


def test_the_page_may_run_only_its_own_scripts() -> None:
    headers = StaticSite().answer("GET", "/explorer/").headers
    policy = headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
    assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"


@pytest.mark.parametrize(
    "path",
    [
        "/explorer/../static_site.py",
        "/explorer/..%2Fstatic_site.py",
        "/explorer/%2e%2e/gateway.py",
        "/explorer//etc/passwd",
        "/explorer/sub/app.js",
        "/explorer/.hidden.js",
        "/explorer/missing.js",
    ],
)
def test_anything_but_a_shipped_file_is_a_404(path: str) -> None:
    page = StaticSite().answer("GET", path)
    assert page.status == 404
    assert json.loads(page.body)["error"] == "not_found"


def test_only_files_of_the_folder_are_answered_even_if_a_name_elsewhere_matches(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<p>here</p>")
    (tmp_path / "secret.js").write_text("no")
    site = StaticSite(tmp_path / "site", "/x")
    assert site.answer("GET", "/x/").body == "<p>here</p>"
    assert site.answer("GET", "/x/../secret.js").status == 404
    assert not site.serves("/xy") and site.serves("/x/") and site.serves("/x")


def test_a_write_is_a_405_naming_the_methods_allowed() -> None:
    page = StaticSite().answer("POST", "/explorer")
    assert page.status == 405 and page.headers["allow"] == "GET, HEAD"
    assert "GET" in json.loads(page.body)["message"]
    head = StaticSite().answer("HEAD", "/explorer/")
    assert head.status == 200 and head.body == ""


class _NoKeys:
    def tenant_for_key(self, key: str) -> str | None:
        return None


class _NoResolver:
    def resolve(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        raise AssertionError("the explorer's files never reach the API's resolver")


def _get(gateway: LocalGateway, path: str) -> tuple[int, dict[str, str], bytes]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": path, "headers": [], "query_string": b""}
    asyncio.run(gateway(scope, receive, send))
    gateway.close()
    start, body = sent
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body["body"]


def test_the_gateway_answers_the_explorer_without_a_key_and_the_api_still_with_one() -> None:
    def gateway(site: StaticSite | None) -> LocalGateway:
        return LocalGateway(_NoResolver(), _NoKeys(), site=site)  # type: ignore[arg-type]

    status, headers, body = _get(gateway(StaticSite()), "/explorer/")
    assert status == 200 and b"Rapport memory explorer" in body and headers["content-length"] == str(len(body))
    assert _get(gateway(StaticSite()), "/v1/users")[0] == 401
    # A gateway built without the site (the Lambda-shaped default) keeps the path behind the key.
    assert _get(gateway(None), "/explorer")[0] == 401
