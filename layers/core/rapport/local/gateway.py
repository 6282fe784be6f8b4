"""The local server's stand-in for API Gateway and its authorizer: checks the key, bounds the body, sets the tenant."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from rapport.api.app import PUBLIC_PATHS
from rapport.api.identity import LOCAL_PRINCIPAL_HEADER, LOCAL_TENANT_HEADER, api_key_from_headers
from rapport.services.auth import ApiKeyAuthenticator, hash_key

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_TRUSTED = {LOCAL_TENANT_HEADER.encode(), LOCAL_PRINCIPAL_HEADER.encode()}


class LocalGateway:
    def __init__(self, app: AsgiApp, authenticator: ApiKeyAuthenticator, max_body_bytes: int = 1_048_576) -> None:
        self._app = app
        self._auth = authenticator
        self._max_body = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        # Never trust identity headers from the client: only this gateway may set them.
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() not in _TRUSTED]
        if scope["path"] not in PUBLIC_PATHS and scope["method"] != "OPTIONS":
            decoded = {k.decode("latin-1"): v.decode("latin-1") for k, v in headers}
            key = api_key_from_headers(decoded)
            tenant = await asyncio.to_thread(self._auth.tenant_for_key, key) if key else None
            if tenant is None:
                reason = "missing API key: send 'Authorization: Bearer <key>'" if not key else "unknown API key"
                await _send_json(send, 401, {"error": "unauthorized", "message": reason})
                return
            headers += [
                (LOCAL_TENANT_HEADER.encode(), tenant.encode()),
                (LOCAL_PRINCIPAL_HEADER.encode(), ("key:" + hash_key(key or "")[:12]).encode()),
            ]
        body = b""
        while True:
            chunk = await receive()
            body += chunk.get("body", b"")
            if len(body) > self._max_body:
                await _send_json(
                    send, 413, {"error": "payload_too_large", "message": f"the body exceeds {self._max_body} bytes"}
                )
                return
            if not chunk.get("more_body", False):
                break

        async def replay() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        await self._app({**scope, "headers": headers}, replay, send)


async def _send_json(send: Send, status: int, payload: dict[str, Any]) -> None:
    data = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": data})
