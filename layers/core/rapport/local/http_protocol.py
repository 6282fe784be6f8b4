"""uvicorn's HTTP/1.1 protocol with its own error answers in the API's shape: a request that is not HTTP at all (a
malformed request line, a header that breaks the grammar, headers past the size limit) never reaches the gateway,
and uvicorn answers it in plain text; a client branching on `error` gets `{error, message}` here too."""

from __future__ import annotations

import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


class JsonErrorH11Protocol(H11Protocol):
    def send_400_response(self, msg: str) -> None:
        # `msg` is uvicorn's own reason ("Invalid HTTP request received.", "Unsupported upgrade request.").
        reason = f"{msg.rstrip('.')}: the request line or headers are not valid HTTP/1.1; nothing was read"
        body = json.dumps({"error": "bad_request", "message": reason}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"), h11.Data(data=body)):
            self.transport.write(self.conn.send(event))
        self.transport.write(self.conn.send(h11.EndOfMessage()))
        self.transport.close()
