"""Two requests resolved at once by one resolver each see their own event, and each route's middlewares run once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import Router

from rapport.api.resolver import ConcurrentRestResolver


def _event(path: str, tenant: str) -> dict[str, Any]:
    return {
        "resource": path,
        "path": path,
        "httpMethod": "GET",
        "headers": {},
        "multiValueHeaders": {},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "requestContext": {"resourcePath": path, "httpMethod": "GET", "path": path, "authorizer": {"t": tenant}},
        "body": None,
        "isBase64Encoded": False,
    }


def test_simultaneous_requests_keep_their_own_event_and_middlewares_run_once() -> None:
    app = ConcurrentRestResolver(enable_validation=True)
    router = Router()
    both_inside = threading.Barrier(2)
    calls: list[str] = []

    def counting(app_: ConcurrentRestResolver, next_middleware: Any) -> Any:
        calls.append(app_.current_event.path)
        return next_middleware(app_)

    app.use(middlewares=[counting])

    @router.get("/v1/whoami/<name>")
    def whoami(name: str) -> dict:
        both_inside.wait(timeout=5)  # both requests are inside a route at the same time
        event = router.current_event
        return {"name": name, "tenant": event.request_context.authorizer.get("t")}

    app.include_router(router)
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(
            pool.map(lambda args: app.resolve(_event(*args), None), [("/v1/whoami/a", "ta"), ("/v1/whoami/b", "tb")])  # type: ignore[arg-type]
        )
    bodies = sorted(a["body"] for a in answers)
    assert bodies == ['{"name":"a","tenant":"ta"}', '{"name":"b","tenant":"tb"}']
    assert sorted(calls) == ["/v1/whoami/a", "/v1/whoami/b"]
