"""The local server's stand-in for API Gateway and its authorizer: checks the key, bounds the body, and hands each
request to the same resolver the Lambda function runs, as the API Gateway event that function would receive.

Requests are answered side by side on the gateway's own sized thread pool, each by one worker from start to end: the
resolver keeps each request's state apart (`rapport.api.resolver`), and nothing running in the pool waits for another
worker of it, so no number of simultaneous clients can exhaust it into a deadlock; the ones beyond its size queue.
Health is answered by the gateway itself, never queued behind long requests.

A body must arrive whole within `body_timeout` of the request's headers, or the request is answered 408 and its
connection closed: uvicorn's keep-alive timeout covers only the idle time between requests, so without a deadline here
a client that announces a body and never sends it holds a connection (and a slot of the server) indefinitely.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs

from aws_lambda_powertools.event_handler import APIGatewayRestResolver

from rapport import __version__
from rapport.api.app import HEALTH_PATH, PUBLIC_PATHS
from rapport.api.identity import SCOPES_CONTEXT, api_key_from_headers
from rapport.domain.access import scopes_text
from rapport.explorer.site import StaticSite
from rapport.services.auth import ApiKeyAuthenticator

AsgiScope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

DEFAULT_WORKERS = 16
DEFAULT_BODY_TIMEOUT_SECONDS = 10.0


class _LocalContext:
    """What the resolver reads of a Lambda context."""

    function_name = "rapport-local"
    aws_request_id = "local"

    def get_remaining_time_in_millis(self) -> int:
        return 900_000


class LocalGateway:
    def __init__(
        self,
        resolver: APIGatewayRestResolver,
        authenticator: ApiKeyAuthenticator,
        *,
        max_body_bytes: int = 1_048_576,
        workers: int = DEFAULT_WORKERS,
        cors_origins: Sequence[str] = (),
        body_timeout: float = DEFAULT_BODY_TIMEOUT_SECONDS,
        site: StaticSite | None = None,
    ) -> None:
        self._body_timeout = body_timeout
        self._site = site
        self._cors = _Cors(cors_origins)
        self._auth = authenticator
        self._max_body = max_body_bytes
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rapport-request")
        self._resolver = resolver

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send, on_shutdown=self.close)
            return
        if scope["type"] != "http":
            return
        headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope.get("headers", [])]
        send = self._cors.wrap(send, dict(headers).get("origin"))
        if scope["method"] == "OPTIONS":
            await self._cors.preflight(send, dict(headers))
            return
        if scope["path"] == HEALTH_PATH and scope["method"] == "GET":
            await _send_json(send, 200, {"status": "ok", "version": __version__})
            return
        if self._site is not None and self._site.serves(scope["path"]):
            page = self._site.answer(scope["method"], scope["path"])
            await _send_response(send, {"statusCode": page.status, "headers": page.headers, "body": page.body})
            return
        authorizer: dict[str, str] | None = None
        if scope["path"] not in PUBLIC_PATHS:
            key = api_key_from_headers(dict(headers))
            record = await self._run(self._auth.identify, key) if key else None
            if record is None or key is None:
                reason = "missing API key: send 'Authorization: Bearer <key>'" if not key else "unknown API key"
                await _send_json(send, 401, {"error": "unauthorized", "message": reason})
                return
            # As the AWS authorizer leaves it: the key's id as the principal, its scopes as one string.
            authorizer = {
                "tenant_id": record.tenant_id,
                "principalId": record.key_id,
                SCOPES_CONTEXT: scopes_text(record.scopes),
            }
        body = await self._read_body(receive, send)
        if body is None:
            return
        response = await self._run(self._resolve, _event(scope, headers, body, authorizer))
        await _send_response(send, response)

    async def _read_body(self, receive: Receive, send: Send) -> bytes | None:
        """The whole body, or None once the request has been answered (too large, too slow) or the client left."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._body_timeout
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                message = await asyncio.wait_for(receive(), timeout=max(deadline - loop.time(), 0.0))
            except TimeoutError:
                message_text = f"the request body did not arrive within {self._body_timeout:g} s"
                await _send_json(send, 408, {"error": "request_timeout", "message": message_text}, close=True)
                return None
            if message["type"] == "http.disconnect":
                return None  # a partial body is never answered as if it were the request
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self._max_body:
                message_text = f"the body exceeds {self._max_body} bytes"
                await _send_json(send, 413, {"error": "payload_too_large", "message": message_text}, close=True)
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def _run(self, function: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, function, *args)

    def _resolve(self, event: dict[str, Any]) -> dict[str, Any]:
        return self._resolver.resolve(event, _LocalContext())  # type: ignore[arg-type]


class _Cors:
    """Cross-origin answers for the configured browser origins only: a preflight is answered here (it carries no
    key), and every response to an allowed origin says so. Other origins get no CORS headers, so browsers refuse."""

    _METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"
    _HEADERS = "authorization, content-type, idempotency-key, x-api-key"
    _EXPOSED = "retry-after, idempotent-replayed"

    def __init__(self, origins: Sequence[str]) -> None:
        self._any = "*" in origins
        self._origins = frozenset(origins)

    def allowed(self, origin: str | None) -> bool:
        return origin is not None and (self._any or origin.rstrip("/") in self._origins)

    def wrap(self, send: Send, origin: str | None) -> Send:
        if not self.allowed(origin):
            return send
        extra = [
            (b"access-control-allow-origin", (origin or "").encode("latin-1")),
            (b"access-control-expose-headers", self._EXPOSED.encode()),
            (b"vary", b"Origin"),
        ]

        async def send_with_cors(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        return send_with_cors

    async def preflight(self, send: Send, headers: dict[str, str]) -> None:
        origin = headers.get("origin")
        if origin is not None and not self.allowed(origin):
            message = f"origin {origin} is not allowed: list it in RAPPORT_CORS_ORIGINS"
            await _send_json(send, 403, {"error": "forbidden", "message": message})
            return
        cors = {
            "access-control-allow-methods": self._METHODS,
            "access-control-allow-headers": self._HEADERS,
            "access-control-max-age": "600",
        }
        await _send_response(
            send, {"statusCode": 204, "headers": {"allow": self._METHODS, **(cors if origin else {})}, "body": ""}
        )


def _event(
    scope: AsgiScope, headers: list[tuple[str, str]], body: bytes, authorizer: dict[str, str] | None
) -> dict[str, Any]:
    """The REST API proxy event API Gateway would send for this request; the authorizer's context only when the key
    was checked (so a client can never claim a tenant with a header of its own)."""
    multi_headers: dict[str, list[str]] = {}
    for name, value in headers:
        multi_headers.setdefault(name, []).append(value)
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    try:
        text, encoded = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, encoded = base64.b64encode(body).decode("ascii"), True
    path = scope["path"]
    client = scope.get("client") or ("127.0.0.1", 0)
    return {
        "resource": path,
        "path": path,
        "httpMethod": scope["method"],
        "headers": {name: values[-1] for name, values in multi_headers.items()},
        "multiValueHeaders": multi_headers,
        "queryStringParameters": {name: values[-1] for name, values in query.items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": path,
            "httpMethod": scope["method"],
            "path": path,
            "stage": "local",
            "requestId": str(uuid.uuid4()),
            "identity": {"sourceIp": client[0]},
            **({"authorizer": authorizer} if authorizer else {}),
        },
        "body": text if body else None,
        "isBase64Encoded": encoded,
    }


async def _send_response(send: Send, response: dict[str, Any]) -> None:
    headers: list[tuple[bytes, bytes]] = []
    for name, values in (response.get("multiValueHeaders") or {}).items():
        headers += [(name.lower().encode("latin-1"), str(value).encode("latin-1")) for value in values]
    for name, value in (response.get("headers") or {}).items():
        headers.append((name.lower().encode("latin-1"), str(value).encode("latin-1")))
    raw = response.get("body") or ""
    data = base64.b64decode(raw) if response.get("isBase64Encoded") else str(raw).encode("utf-8")
    headers = [(k, v) for k, v in headers if k != b"content-length"] + [(b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": int(response.get("statusCode", 500)), "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def _send_json(send: Send, status: int, payload: dict[str, Any], *, close: bool = False) -> None:
    """`close`: the rest of the request will not be read, so the connection cannot carry another one."""
    headers = {"content-type": "application/json", **({"connection": "close"} if close else {})}
    await _send_response(send, {"statusCode": status, "headers": headers, "body": json.dumps(payload)})


async def _lifespan(receive: Receive, send: Send, *, on_shutdown: Callable[[], None]) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            on_shutdown()
            await send({"type": "lifespan.shutdown.complete"})
            return
