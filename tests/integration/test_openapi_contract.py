"""The OpenAPI document the API serves: a valid document that declares what every route answers, and the checker the
e2e suite runs every response through."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from openapi_spec_validator import validate

from rapport.api.app import PUBLIC_PATHS, create_local_app
from rapport.api.contract import API_KEY, BEARER
from rapport.composition.services import Services
from rapport.domain.scope import USER_ID_PATTERN
from tests.integration.api_events import FakeLambdaContext, rest_event
from tests.openapi_contract import Answer, Contract

pytestmark = pytest.mark.integration

OPERATION_ID = re.compile(r"^[a-z]+(_[a-z]+)*$")
ERROR_REF = "#/components/schemas/ErrorOut"


@pytest.fixture
def app(services: Services):  # type: ignore[no-untyped-def]
    return create_local_app(services)


def _local_event(method: str, url: str, body: Any = None, **kw: Any) -> dict[str, Any]:
    """As the local gateway sends it: no stage before the path."""
    event = rest_event(method, url, body, **kw)
    event["requestContext"]["path"] = event["path"]
    return event


def _headers(response: dict[str, Any]) -> dict[str, str]:
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    headers.update({k.lower(): v[-1] for k, v in (response.get("multiValueHeaders") or {}).items()})
    return headers


def _get(app: Any, url: str, **kw: Any) -> tuple[int, dict[str, str], str]:
    response = app.resolve(_local_event("GET", url, tenant=None, **kw), FakeLambdaContext())
    return response["statusCode"], _headers(response), response["body"]


@pytest.fixture
def document(app: Any) -> dict[str, Any]:
    status, _, body = _get(app, "/v1/openapi.json", headers={"Host": "127.0.0.1:8080"})
    assert status == 200
    return json.loads(body)  # type: ignore[no-any-return]


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(path, method, op) for path, item in document["paths"].items() for method, op in item.items()]


def test_the_document_is_valid_openapi(document: dict[str, Any]) -> None:
    validate(document)  # raises on the first error: a dangling $ref, a bad keyword, a missing field
    assert document["openapi"].startswith("3.1")


def test_every_operation_has_a_short_stable_unique_id(document: dict[str, Any]) -> None:
    ids = [op["operationId"] for _, _, op in _operations(document)]
    assert [i for i in ids if not OPERATION_ID.fullmatch(i)] == []
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert {"memories_add", "memories_add_many", "memories_list", "interactions_record", "process"} <= set(ids)


def test_every_route_but_the_public_ones_needs_a_key(document: dict[str, Any]) -> None:
    assert document["security"] == [{BEARER: []}, {API_KEY: []}]
    schemes = document["components"]["securitySchemes"]
    assert schemes[BEARER] == {"type": "http", "scheme": "bearer", "description": schemes[BEARER]["description"]}
    assert (schemes[API_KEY]["in"], schemes[API_KEY]["name"]) == ("header", "x-api-key")
    public = {path for path, _, op in _operations(document) if op.get("security") == [{}]}
    overridden = {path for path, _, op in _operations(document) if "security" in op and op["security"] != [{}]}
    # The spec's public operations are exactly the paths the local gateway lets through without a key.
    assert public == PUBLIC_PATHS & set(document["paths"]) and overridden == set()


def test_every_operation_declares_its_success_body_and_its_errors(document: dict[str, Any]) -> None:
    missing = []
    for path, method, op in _operations(document):
        responses = op["responses"]
        for status, response in responses.items():
            content = response.get("content") or {}
            if status == "204":
                missing += [f"{method} {path}: a 204 with a body"] if content else []
                continue
            # An export answers JSON lines, each a model of its own.
            media = content.get("application/json") or content.get("application/x-ndjson") or {}
            schema = media.get("schema", {})
            if status.startswith("2") and not (schema.get("$ref") or schema.get("anyOf")):
                missing.append(f"{method} {path} {status}: no model")
            if status[0] in "45" and schema != {"$ref": ERROR_REF}:
                missing.append(f"{method} {path} {status}: not ErrorOut")
        needed = {"500"} if path in PUBLIC_PATHS else {"400", "401", "403", "404", "422", "500"}
        if "requestBody" in op:
            needed |= {"413", "415"}
        missing += [f"{method} {path}: {s} undeclared" for s in sorted(needed - responses.keys())]
        missing += [f"{method} {path}: no 2xx" for _ in [0] if not any(s.startswith("2") for s in responses)]
    assert missing == []


def test_powertools_default_validation_error_is_gone(document: dict[str, Any]) -> None:
    text = json.dumps(document)
    assert "HTTPValidationError" not in text and "ResponseValidationError" not in text
    assert '"detail"' not in text


def test_the_shared_checks_are_in_the_schema(document: dict[str, Any], services: Services) -> None:
    limits, user_ids = [], []
    for _, _, op in _operations(document):
        for parameter in op.get("parameters", []):
            if parameter["name"] == "limit":
                limits += [s for s in parameter["schema"].get("anyOf", [parameter["schema"]]) if s.get("type")]
            if parameter["name"] == "user_id" and parameter["in"] == "path":
                user_ids.append(parameter["schema"]["pattern"])
    integer_limits = [s for s in limits if s["type"] == "integer"]
    assert integer_limits and all(
        (s["minimum"], s["maximum"]) == (1, services.settings.max_page_size) for s in integer_limits
    )
    assert user_ids and set(user_ids) == {USER_ID_PATTERN}
    schemas = document["components"]["schemas"]
    assert schemas["ProcessRequest"]["properties"]["user_id"]["pattern"] == USER_ID_PATTERN
    assert {"enum"} <= schemas["Domain"].keys()


def test_the_server_is_where_the_request_was_sent(app: Any) -> None:
    # Locally: the host and port, no path (every path starts with /v1)
    _, _, body = _get(app, "/v1/openapi.json", headers={"Host": "127.0.0.1:8080"})
    assert json.loads(body)["servers"][0]["url"] == "http://127.0.0.1:8080"
    # Behind API Gateway's own domain the stage comes first, as the stack's ApiUrl output says
    event = rest_event(
        "GET", "/v1/openapi.json", tenant=None, headers={"Host": "abc.execute-api.eu-west-1.amazonaws.com"}
    )
    event["headers"]["X-Forwarded-Proto"] = "https"
    document = json.loads(app.resolve(event, FakeLambdaContext())["body"])
    assert document["servers"][0]["url"] == "https://abc.execute-api.eu-west-1.amazonaws.com/prod"
    # A custom domain maps the stage away: no prefix
    event["requestContext"]["path"] = "/v1/openapi.json"
    event["headers"]["Host"] = "memory.example.com"
    document = json.loads(app.resolve(event, FakeLambdaContext())["body"])
    assert document["servers"][0]["url"] == "https://memory.example.com"


def test_the_docs_page_carries_the_same_document(app: Any, document: dict[str, Any]) -> None:
    status, headers, page = _get(app, "/v1/docs", headers={"Host": "127.0.0.1:8080"})
    assert status == 200 and headers["content-type"] == "text/html" and "SwaggerUIBundle" in page
    assert '"operationId": "memories_add"' in page and "HTTPValidationError" not in page
    status, _, body = _get(app, "/v1/docs?format=json", headers={"Host": "127.0.0.1:8080"})
    assert status == 200 and json.loads(body) == document


def _call(app: Any, method: str, url: str, body: Any = None, **kw: Any) -> Answer:
    response = app.resolve(rest_event(method, url, body, **kw), FakeLambdaContext())
    content_type = _headers(response).get("content-type", "")
    return Answer(method, url.split("?")[0], response["statusCode"], content_type, response["body"].encode())


def test_errors_answer_the_declared_error_body(app: Any, document: dict[str, Any]) -> None:
    contract = Contract(document)
    answers = [
        _call(app, "POST", "/v1/users/u1/memories", {"content": "x", "domain": "feelings"}),  # 422
        _call(app, "POST", "/v1/users/u1/memories", raw_body="{"),  # 400 malformed
        _call(app, "GET", "/v1/users/u1/memories?limit=0"),  # 400 from the use case
        _call(app, "GET", "/v1/users/u1/memories/nope"),  # 404
        _call(app, "GET", "/v1/users/u1/memories", tenant=None),  # 401
        _call(app, "GET", "/v1/nowhere"),  # 404 route_not_found
        _call(
            app, "POST", "/v1/users/u1/memories", raw_body="content=x", headers={"Content-Type": "text/plain"}
        ),  # 415
    ]
    assert [a.status for a in answers] == [422, 400, 400, 404, 401, 404, 415]
    assert json.loads(answers[-1].body)["error"] == "unsupported_media_type"
    assert [v for a in answers for v in contract.violations(a)] == []


def test_successes_answer_their_declared_models(app: Any, document: dict[str, Any]) -> None:
    contract = Contract(document)
    created = _call(app, "POST", "/v1/users/u1/memories", {"content": "Has a dog named Max", "domain": "user"})
    memory_id = json.loads(created.body)["id"]
    answers = [
        created,
        _call(app, "POST", "/v1/users/u1/memories/batch", {"memories": [{"content": "Likes jazz", "domain": "user"}]}),
        _call(app, "GET", "/v1/users/u1/memories?query=dog"),
        _call(app, "GET", "/v1/users/u1/memories"),
        _call(app, "PATCH", f"/v1/users/u1/memories/{memory_id}", {"importance": 0.9}),
        _call(app, "POST", "/v1/users/u1/interactions", {"messages": [{"role": "user", "content": "I like tea"}]}),
        _call(app, "GET", "/v1/users/u1/history"),
        _call(app, "POST", "/v1/process", {"user_id": "u1", "message": "hello"}),
        _call(app, "GET", "/v1/users/u1/state"),
        _call(app, "POST", "/v1/users/u1/events", {"type": "promise_kept"}),
        _call(app, "DELETE", f"/v1/users/u1/memories/{memory_id}"),
        _call(app, "DELETE", "/v1/privacy/erase/u1"),
        _call(app, "GET", "/v1/health", tenant=None),
    ]
    assert [a.status for a in answers] == [201, 201, 200, 200, 200, 201, 200, 200, 200, 201, 204, 200, 200]
    assert [v for a in answers for v in contract.violations(a)] == []


def test_the_checker_fails_an_undeclared_status_and_a_body_outside_its_schema(document: dict[str, Any]) -> None:
    contract = Contract(document)
    json_type = "application/json"
    undeclared = Answer("POST", "/v1/users/u1/memories", 200, json_type, b"{}")
    assert "declares only" in contract.violations(undeclared)[0]
    wrong_body = Answer("POST", "/v1/users/u1/memories", 201, json_type, b'{"id": "m1"}')
    assert "required property" in " ".join(contract.violations(wrong_body))
    not_an_error = Answer("GET", "/v1/users/u1/memories/m1", 404, json_type, b'{"detail": "missing"}')
    assert contract.violations(not_an_error)
    crashed = Answer("GET", "/v1/users/u1/state", 500, json_type, b'{"error": "internal_error", "message": "x"}')
    assert "a server error is a bug" in contract.violations(crashed)[0]
    # The most literal template wins: /memories/batch is not /memories/{memory_id}
    assert contract.operation("POST", "/v1/users/u1/memories/batch")[1]["operationId"] == "memories_add_many"  # type: ignore[index]


def test_an_answer_that_breaks_its_model_is_our_500_not_the_clients_422() -> None:
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver

    from rapport.api.errors import register_error_handlers
    from rapport.api.schemas import HealthOut

    broken = APIGatewayRestResolver(enable_validation=True)
    register_error_handlers(broken)

    @broken.get("/v1/broken")
    def answer() -> HealthOut:
        return {"status": "ok"}  # type: ignore[return-value]  # no version: outside the declared model

    response = broken.resolve(rest_event("GET", "/v1/broken"), FakeLambdaContext())
    assert response["statusCode"] == 500 and json.loads(response["body"])["error"] == "internal_error"
