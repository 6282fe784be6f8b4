"""API Gateway REST proxy events, as the Lambda authorizer leaves them, for driving the Lambda app in process."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit


class FakeLambdaContext:
    function_name = "rapport-api"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:rapport-api"
    aws_request_id = "test-request"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def rest_event(
    method: str,
    url: str,
    body: Any = None,
    *,
    tenant: str | None = "tenant-a",
    raw_body: str | None = None,
    headers: dict[str, str] | None = None,
    binary_body: bytes | None = None,
    scopes: str | None = None,
) -> dict[str, Any]:
    """`binary_body`: bytes API Gateway would hand over base64'd (a binary media type, or the local gateway's body
    that is not UTF-8). `scopes`: the key's, as the authorizer's context carries them (space separated); without,
    the context is one from before keys had scopes, which the API reads as admin."""
    parts = urlsplit(url)
    query = parse_qs(parts.query, keep_blank_values=True)
    authorizer: dict[str, str] | None = {"tenant_id": tenant, "principalId": f"key-of-{tenant}"} if tenant else None
    if authorizer is not None and scopes is not None:
        authorizer["scopes"] = scopes
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    return {
        "resource": "/v1/{proxy+}",
        "path": parts.path,
        "httpMethod": method,
        "headers": all_headers,
        "multiValueHeaders": {k: [v] for k, v in all_headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in query.items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": {"proxy": parts.path.removeprefix("/v1/")},
        "stageVariables": None,
        "requestContext": {
            "resourcePath": "/v1/{proxy+}",
            "httpMethod": method,
            "path": f"/prod{parts.path}",
            "stage": "prod",
            "requestId": "req-1",
            "identity": {"sourceIp": "127.0.0.1"},
            "authorizer": authorizer,
        },
        "body": (
            base64.b64encode(binary_body).decode()
            if binary_body is not None
            else raw_body
            if raw_body is not None
            else (json.dumps(body) if body is not None else None)
        ),
        "isBase64Encoded": binary_body is not None,
    }
