"""The memory explorer's files, answered without a key (by the local gateway, and by the API function in AWS): the
page holds no data of its own and calls the API with the key the person types, so nothing here needs one.

Only the files shipped in the package's `explorer/static/` folder are answered, by name: a path that names anything else
(another folder, `..`, a hidden file) is a 404, so the static route can never read outside that folder.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

EXPLORER_PREFIX = "/explorer"
EXPLORER_DIR = Path(__file__).resolve().parent / "static"

_MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
# The page runs only its own scripts and styles; it may call another Rapport API (a deployed one) over https.
_CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' https:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@dataclass(frozen=True)
class StaticAnswer:
    status: int
    headers: dict[str, str]
    body: str


class StaticSite:
    """The files of one folder under one path prefix; `prefix/` answers its index.html, `prefix` redirects there."""

    def __init__(self, folder: Path = EXPLORER_DIR, prefix: str = EXPLORER_PREFIX) -> None:
        self._folder = folder
        self._prefix = prefix
        self._files = {p.name: p for p in folder.iterdir() if p.is_file() and p.suffix in _MEDIA_TYPES}

    def serves(self, path: str) -> bool:
        return path == self._prefix or path.startswith(self._prefix + "/")

    def answer(self, method: str, path: str, if_none_match: str | None = None) -> StaticAnswer:
        if method not in ("GET", "HEAD"):
            return _problem(405, "method_not_allowed", f"{method} is not allowed here: the explorer is read with GET")
        if path == self._prefix:
            # The page names its files relative to itself, so it works from any folder of any static host; here
            # that folder is the prefix with its slash. A browser keeps the fragment (a key link) across this.
            return StaticAnswer(308, {"location": self._prefix + "/", "content-type": "text/plain"}, "")
        name = path[len(self._prefix) + 1 :] or "index.html"
        file = self._files.get(name)
        if file is None:
            return _problem(404, "not_found", f"no explorer file at {path}")
        body = file.read_text(encoding="utf-8")
        # A strong validator of the content: the browser revalidates each load and gets a bodiless 304 when unchanged.
        etag = '"' + hashlib.sha256(body.encode("utf-8")).hexdigest()[:32] + '"'
        headers = {
            "content-type": _MEDIA_TYPES[file.suffix],
            "content-security-policy": _CONTENT_SECURITY_POLICY,
            "x-content-type-options": "nosniff",
            "referrer-policy": "no-referrer",
            # Revalidated on every load: a server upgraded under an open tab must not mix old and new modules.
            "cache-control": "no-cache",
            "etag": etag,
        }
        if if_none_match is not None and etag in (tag.strip() for tag in if_none_match.split(",")):
            return StaticAnswer(304, headers, "")
        return StaticAnswer(200, headers, "" if method == "HEAD" else body)


def _problem(status: int, error: str, message: str) -> StaticAnswer:
    headers = {"content-type": "application/json"}
    if status == 405:
        headers["allow"] = "GET, HEAD"
    return StaticAnswer(status, headers, json.dumps({"error": error, "message": message}))
