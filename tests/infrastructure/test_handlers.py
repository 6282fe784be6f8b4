"""The two Lambda handlers in process: the authorizer against a moto table, the API handler's lazy wiring."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rapport.adapters.dynamodb.store import create_table
from rapport.composition.adapters import build_store
from rapport.composition.services import services_from_environment
from rapport.domain.access import ApiScope
from rapport.services.auth import ApiKeyAuthenticator, hash_key
from rapport.settings import Settings
from tests.environment_services import forget_services
from tests.integration.api_events import FakeLambdaContext, rest_event

pytestmark = [
    pytest.mark.infrastructure,
    # An allowed request emits no metric of its own; Powertools warns about that on every flush.
    pytest.mark.filterwarnings("ignore:No application metrics to publish"),
]

FUNCTIONS_DIR = Path(__file__).resolve().parents[2] / "functions"
TABLE_NAME = "rapport-test"
KEY = "rk_test_key_of_tenant_a"
METHOD_ARN = "arn:aws:execute-api:us-east-1:123456789012:abc123/prod/GET/v1/users/u1/memories"


def load_handler(name: str) -> ModuleType:
    """A fresh copy of functions/<name>/handler.py, so no cold-start cache leaks between tests."""
    spec = importlib.util.spec_from_file_location(
        f"rapport_{name}_handler_under_test", FUNCTIONS_DIR / name / "handler.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def authorizer_event(headers: dict[str, str] | None, method_arn: str = METHOD_ARN) -> dict[str, Any]:
    return {
        "type": "REQUEST",
        "methodArn": method_arn,
        "resource": "/v1/{proxy+}",
        "path": "/v1/users/u1/memories",
        "httpMethod": "GET",
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in (headers or {}).items()},
        "queryStringParameters": None,
        "pathParameters": {"proxy": "users/u1/memories"},
        "stageVariables": None,
        "requestContext": {"stage": "prod", "httpMethod": "GET", "requestId": "req-1", "accountId": "123456789012"},
    }


@pytest.fixture
def lambda_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """What RapportFunction sets, plus what keeps the API's full wiring offline (hashing embedder, embedded index)."""
    monkeypatch.setenv("RAPPORT_STORE", "dynamodb")
    monkeypatch.setenv("RAPPORT_TABLE_NAME", TABLE_NAME)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("RAPPORT_VECTOR_BACKEND", "embedded")
    monkeypatch.setenv("RAPPORT_EMBEDDER", "hashing")
    monkeypatch.setenv("RAPPORT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "1")
    services_from_environment.cache_clear()


@pytest.fixture
def seeded_table(lambda_environment: None) -> Iterator[None]:
    with mock_aws():
        create_table(boto3.resource("dynamodb", region_name="us-east-1"), TABLE_NAME)
        ApiKeyAuthenticator(build_store(Settings())).register_key(KEY, "tenant-a")
        yield
        forget_services()


@pytest.fixture
def authorizer(seeded_table: None) -> ModuleType:
    return load_handler("authorizer")


def test_a_seeded_key_is_allowed_with_its_tenant_for_the_whole_stage(authorizer: ModuleType) -> None:
    # Given a key stored for tenant-a, When a request carries it as a bearer token
    response = authorizer.handler(authorizer_event({"Authorization": f"Bearer {KEY}"}), FakeLambdaContext())
    # Then API Gateway gets an Allow for every method of the stage (the result is cached across routes)
    assert response["principalId"] == hash_key(KEY)[:12]
    # (a key registered without scopes holds admin, as keys did before they had scopes)
    assert response["context"] == {"tenant_id": "tenant-a", "scopes": "admin"}
    (statement,) = response["policyDocument"]["Statement"]
    assert statement["Effect"] == "Allow"
    assert statement["Action"] == "execute-api:Invoke"
    assert statement["Resource"] == ["arn:aws:execute-api:us-east-1:123456789012:abc123/prod/*/*"]


def test_a_scoped_key_s_scopes_reach_the_api_function_which_refuses_what_they_do_not_cover(
    authorizer: ModuleType,
) -> None:
    # Given a key that may only read memories
    reader = ApiKeyAuthenticator(build_store(Settings())).issue_key(
        "tenant-a", "reader", scopes=[ApiScope.MEMORIES_READ]
    )
    # When the authorizer admits it, its context carries the scopes (one string: context values are scalars)
    allowed = authorizer.handler(authorizer_event({"Authorization": f"Bearer {reader}"}), FakeLambdaContext())
    assert allowed["context"] == {"tenant_id": "tenant-a", "scopes": "memories:read"}
    # Then the API function, handed that context as API Gateway hands it, reads but does not write
    api = load_handler("api")
    context = {**allowed["context"], "principalId": allowed["principalId"]}
    read = rest_event("GET", "/v1/users/u1/memories")
    read["requestContext"]["authorizer"] = context
    assert api.handler(read, FakeLambdaContext())["statusCode"] == 200
    write = rest_event("POST", "/v1/users/u1/memories", {"content": "Has a dog named Max", "domain": "user"})
    write["requestContext"]["authorizer"] = context
    refused = api.handler(write, FakeLambdaContext())
    assert refused["statusCode"] == 403
    assert json.loads(refused["body"])["message"].startswith("memories_add requires scope memories:write")


@pytest.mark.parametrize(
    "headers",
    [
        {"authorization": f"bearer {KEY}"},
        {"AUTHORIZATION": f"Bearer {KEY}"},
    ],
    ids=["lowercase-bearer", "uppercase-header"],
)
def test_the_bearer_key_is_found_in_any_case(authorizer: ModuleType, headers: dict[str, str]) -> None:
    response = authorizer.handler(authorizer_event(headers), FakeLambdaContext())
    assert response["context"] == {"tenant_id": "tenant-a", "scopes": "admin"}


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer rk_not_a_key_anyone_has"},
        {"x-api-key": "rk_not_a_key_anyone_has"},
        {"Authorization": "Bearer "},
        {"Authorization": KEY},  # no scheme: not a bearer token
        {"Content-Type": "application/json"},
        None,
        # The result is cached on Authorization: a key from any other header would be cached under a value two
        # callers can share (a proxy's Basic credentials), so it is never read
        {"x-api-key": KEY},
        {"Authorization": "Basic dXNlcjpwYXNz", "x-api-key": KEY},
    ],
    ids=[
        "unknown-bearer",
        "unknown-x-api-key",
        "empty-bearer",
        "no-scheme",
        "no-key-header",
        "no-headers",
        "x-api-key-alone",
        "non-bearer-does-not-fall-back",
    ],
)
def test_an_unknown_or_missing_key_is_unauthorized(
    authorizer: ModuleType, headers: dict[str, str] | None, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        authorizer.handler(authorizer_event(headers), FakeLambdaContext())
    # And the rejection is counted, so a spike of bad keys shows on a dashboard
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert [record["ApiKeyRejected"] for record in emitted if "ApiKeyRejected" in record] == [[1.0]]


def test_the_policy_keeps_the_partition_of_the_method_arn(authorizer: ModuleType) -> None:
    china_arn = METHOD_ARN.replace("arn:aws:", "arn:aws-cn:").replace("us-east-1", "cn-north-1")
    response = authorizer.handler(authorizer_event({"Authorization": f"Bearer {KEY}"}, china_arn), FakeLambdaContext())
    (statement,) = response["policyDocument"]["Statement"]
    assert statement["Resource"] == ["arn:aws-cn:execute-api:cn-north-1:123456789012:abc123/prod/*/*"]


def test_api_handler_builds_the_app_on_first_event_and_serves_health(seeded_table: None) -> None:
    # Given a freshly imported handler: importing wired nothing
    api = load_handler("api")
    assert api._app.cache_info().currsize == 0
    # When API Gateway sends the unauthenticated health probe
    response = api.handler(rest_event("GET", "/v1/health", tenant=None), FakeLambdaContext())
    # Then the core's app answers it, and later events reuse the same app
    assert response["statusCode"] == 200
    assert json.loads(response["body"])["status"] == "ok"
    api.handler(rest_event("GET", "/v1/health", tenant=None), FakeLambdaContext())
    assert api._app.cache_info().misses == 1


def test_api_handler_passes_the_authorizer_tenant_to_the_core(seeded_table: None) -> None:
    api = load_handler("api")
    created = api.handler(
        rest_event("POST", "/v1/users/u1/memories", {"content": "Has a dog named Max", "domain": "user"}),
        FakeLambdaContext(),
    )
    assert created["statusCode"] == 201, created["body"]
    other_tenant = api.handler(rest_event("GET", "/v1/users/u1/memories", tenant="tenant-b"), FakeLambdaContext())
    mine = api.handler(rest_event("GET", "/v1/users/u1/memories", tenant="tenant-a"), FakeLambdaContext())
    assert json.loads(other_tenant["body"])["memories"] == []
    assert [m["content"] for m in json.loads(mine["body"])["memories"]] == ["Has a dog named Max"]


def test_api_handler_answers_an_allowed_origin_with_cors_headers(
    seeded_table: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the origins the stack passes the API function (corsOrigins context -> RAPPORT_CORS_ORIGINS)
    monkeypatch.setenv("RAPPORT_CORS_ORIGINS", "https://app.example,https://admin.example")
    services_from_environment.cache_clear()
    api = load_handler("api")
    # When a browser page of an allowed origin reads its memories, and then fails a request
    allowed = api.handler(
        rest_event("GET", "/v1/users/u1/memories", headers={"Origin": "https://admin.example"}), FakeLambdaContext()
    )
    refused = api.handler(
        rest_event("POST", "/v1/users/u1/memories", {"nope": 1}, headers={"Origin": "https://app.example"}),
        FakeLambdaContext(),
    )
    # Then both real responses (not only a preflight) let the browser read them, with the headers a client acts on
    assert allowed["statusCode"] == 200
    assert allowed["multiValueHeaders"]["Access-Control-Allow-Origin"] == ["https://admin.example"]
    assert "Retry-After" in allowed["multiValueHeaders"]["Access-Control-Expose-Headers"][0]
    assert 400 <= refused["statusCode"] < 500, refused["body"]
    assert refused["multiValueHeaders"]["Access-Control-Allow-Origin"] == ["https://app.example"]
    # And a page of any other origin gets no CORS header, so its browser refuses to hand it the answer
    stranger = api.handler(
        rest_event("GET", "/v1/users/u1/memories", headers={"Origin": "https://evil.example"}), FakeLambdaContext()
    )
    assert stranger["statusCode"] == 200
    assert "Access-Control-Allow-Origin" not in stranger["multiValueHeaders"]


def test_api_handler_serves_the_memory_explorer_without_a_key(seeded_table: None) -> None:
    api = load_handler("api")
    # The authorizer lets these through with no key: the event carries no tenant
    page = api.handler(rest_event("GET", "/explorer/", tenant=None), FakeLambdaContext())
    assert page["statusCode"] == 200
    assert page["multiValueHeaders"]["Content-Type"] == ["text/html; charset=utf-8"]
    assert "script-src 'self'" in page["multiValueHeaders"]["content-security-policy"][0]
    assert '<script type="module" src="app.js">' in page["body"]
    script = api.handler(rest_event("GET", "/explorer/api.js", tenant=None), FakeLambdaContext())
    assert script["statusCode"] == 200
    assert script["multiValueHeaders"]["Content-Type"] == ["text/javascript; charset=utf-8"]
    assert "export class Api" in script["body"]
    # An unchanged file revalidates to a bodiless 304
    etag = script["multiValueHeaders"]["etag"][0]
    again = api.handler(
        rest_event("GET", "/explorer/api.js", tenant=None, headers={"If-None-Match": etag}), FakeLambdaContext()
    )
    assert again["statusCode"] == 304 and again["body"] == ""


def test_api_handler_redirects_the_bare_explorer_path_within_the_stage(seeded_table: None) -> None:
    api = load_handler("api")
    bare = api.handler(rest_event("GET", "/explorer", tenant=None), FakeLambdaContext())
    # Relative: `/prod/explorer` -> `/prod/explorer/index.html`, a stage an absolute `/explorer/...` would lose
    assert bare["statusCode"] == 308 and bare["multiValueHeaders"]["Location"] == ["explorer/index.html"]
    # The folder itself, if API Gateway hands it to the `/explorer` resource, is the page, not another redirect
    folder = api.handler(rest_event("GET", "/explorer/", tenant=None), FakeLambdaContext())
    assert folder["statusCode"] == 200 and folder["multiValueHeaders"]["Content-Type"][0].startswith("text/html")


@pytest.mark.parametrize("path", ["/explorer/missing.js", "/explorer/..%2Fsite.py", "/explorer/__init__.py"])
def test_api_handler_answers_only_the_explorer_files_by_name(seeded_table: None, path: str) -> None:
    api = load_handler("api")
    response = api.handler(rest_event("GET", path, tenant=None), FakeLambdaContext())
    assert response["statusCode"] == 404
    assert json.loads(response["body"])["error"] == "not_found"


def test_the_explorer_is_not_in_the_openapi_document(seeded_table: None) -> None:
    api = load_handler("api")
    document = json.loads(api.handler(rest_event("GET", "/v1/openapi.json", tenant=None), FakeLambdaContext())["body"])
    assert not [path for path in document["paths"] if path.startswith("/explorer")]
