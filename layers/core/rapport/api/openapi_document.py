"""The OpenAPI document as `/v1/openapi.json` and `/v1/docs` serve it: what the routes declare (`contract.py`), its
server taken from the request, so it is right locally and behind API Gateway alike."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.openapi.models import Server
from aws_lambda_powertools.event_handler.openapi.swagger_ui import generate_swagger_html
from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent

from rapport.api.access import required_scopes
from rapport.api.contract import AUTHENTICATED, ERROR_DESCRIPTIONS, JSON, PUBLIC, SECURITY_SCHEMES
from rapport.domain.scope import AGENT_ID_PATTERN, USER_ID_PATTERN

OPENAPI_PATH = "/v1/openapi.json"
DOCS_PATH = "/v1/docs"


def register_openapi_routes(
    app: ApiGatewayResolver, *, title: str, version: str, description: str, max_page_size: int
) -> None:
    def document() -> dict[str, Any]:
        return openapi_document(app, title=title, version=version, description=description, max_page_size=max_page_size)

    @app.get(OPENAPI_PATH, include_in_schema=False)
    def openapi():  # a Response: the document is no model of ours
        return Response(200, content_types.APPLICATION_JSON, json.dumps(document()))

    @app.get(DOCS_PATH, include_in_schema=False)
    def docs():  # a Response: an HTML page
        if (app.current_event.query_string_parameters or {}).get("format") == "json":
            return Response(200, content_types.APPLICATION_JSON, json.dumps(document()))
        # `</` escaped: the document is inlined in a <script>, and a description must not close it.
        spec = json.dumps(document()).replace("</", "<\\/")
        js, css = _swagger_assets()
        return Response(200, "text/html", generate_swagger_html(spec, js, css, "", None, persist_authorization=True))


def server_url(event: BaseProxyEvent) -> str:
    """Where this request was sent, without the routes' own path: `http://127.0.0.1:8080` locally, the stage's
    URL (`https://…/prod`) or a custom domain's behind API Gateway. The paths themselves start with `/v1`."""
    headers = {name.lower(): value for name, value in (event.headers or {}).items()}
    host = headers.get("host") or "localhost"
    scheme = headers.get("x-forwarded-proto", "http").split(",")[0].strip() or "http"
    # API Gateway's requestContext.path has the stage (or a custom domain's base path) before the route's path.
    full_path = str((event.raw_event.get("requestContext") or {}).get("path") or event.path)
    prefix = full_path[: -len(event.path)] if event.path and full_path.endswith(event.path) else ""
    return f"{scheme}://{host}{prefix.rstrip('/')}"


def openapi_document(
    app: ApiGatewayResolver, *, title: str, version: str, description: str, max_page_size: int
) -> dict[str, Any]:
    """The document for the request being answered."""
    schema = app.get_openapi_schema(
        title=title,
        version=version,
        description=description,
        servers=[Server(url=server_url(app.current_event), description="This server; every path starts with /v1")],
        security_schemes=SECURITY_SCHEMES,
        security=AUTHENTICATED,
    )
    document: dict[str, Any] = schema.model_dump(mode="json", by_alias=True, exclude_none=True)
    _drop_default_validation_error(document)
    _document_shared_checks(document, max_page_size)
    _document_scopes(document)
    return document


def _document_scopes(document: dict[str, Any]) -> None:
    """The scopes each operation needs come from one table (`api/access.py`), checked by one middleware, so they are
    documented here, once: `x-required-scopes`, a line of the description, and the 403 every authenticated
    operation may answer (with the same error body as its 401)."""
    for operation in _operations(document):
        responses = operation.get("responses", {})
        if operation.get("security") == PUBLIC or "401" not in responses:
            continue
        scopes = [scope.value for scope in required_scopes(str(operation.get("operationId")))]
        operation["x-required-scopes"] = scopes
        needed = " and ".join(f"`{scope}`" for scope in scopes)
        operation["description"] = f"{operation.get('description', '')}\n\nRequires scope {needed}.".lstrip()
        responses["403"] = {"description": ERROR_DESCRIPTIONS[403], "content": responses["401"].get("content", {})}
        operation["responses"] = dict(sorted(responses.items()))


_DEFAULT_VALIDATION_REF = "#/components/schemas/HTTPValidationError"


def _drop_default_validation_error(document: dict[str, Any]) -> None:
    """Powertools gives every operation a 422 `{detail}` body; ours answer `ErrorOut` (`errors.py`), declared by
    each route that can fail validation. So the default goes, with its schemas."""
    for operation in _operations(document):
        responses = operation.get("responses", {})
        for status, response in list(responses.items()):
            schema = response.get("content", {}).get(JSON, {}).get("schema", {})
            if schema.get("$ref") == _DEFAULT_VALIDATION_REF:
                del responses[status]
    schemas = document.get("components", {}).get("schemas", {})
    # Powertools adds ResponseValidationError whether or not a route can answer it: none here does (errors.py).
    for name in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        schemas.pop(name, None)


def _document_shared_checks(document: dict[str, Any], max_page_size: int) -> None:
    """Two checks every route shares are made once in the code, so they are documented once here: the end user's
    id (`Scope.of`: the `UserScope` dependency, or a body's `user_id`) and a page's `limit` (each use case, against
    `max_page_size`). As schema keywords they document the rule without letting validation answer 422 in place of
    the code's 400 and its message."""
    for operation in _operations(document):
        for parameter in operation.get("parameters", []):
            schema = parameter.setdefault("schema", {})
            if parameter.get("in") == "path" and parameter.get("name") == "user_id":
                schema["pattern"] = USER_ID_PATTERN
                parameter.setdefault("description", "The end user: 1-128 letters, digits and . _ @ : + -")
            elif parameter.get("in") == "query" and parameter.get("name") == "limit":
                for candidate in schema.get("anyOf", [schema]):
                    if candidate.get("type") == "integer":
                        candidate["minimum"] = 1
                        candidate["maximum"] = max_page_size
            elif parameter.get("in") == "query" and parameter.get("name") == "agent_id":
                _with_pattern(schema, AGENT_ID_PATTERN)
    for name, schema in document.get("components", {}).get("schemas", {}).items():
        properties = schema.get("properties", {})
        user_id = properties.get("user_id")
        if name.endswith("Request") and user_id is not None and user_id.get("type") == "string":
            user_id["pattern"] = USER_ID_PATTERN
        if name.endswith("Request") and "agent_id" in properties:
            _with_pattern(properties["agent_id"], AGENT_ID_PATTERN)


def _with_pattern(schema: dict[str, Any], pattern: str) -> None:
    """The pattern on the string form of an optional string (`anyOf` string / null) or on the string itself."""
    for candidate in schema.get("anyOf", [schema]):
        if candidate.get("type") == "string":
            candidate["pattern"] = pattern


def _operations(document: dict[str, Any]) -> Iterable[dict[str, Any]]:
    for path_item in document.get("paths", {}).values():
        for method in ("get", "put", "post", "delete", "patch", "head", "options", "trace"):
            if method in path_item:
                yield path_item[method]


@cache
def _swagger_assets() -> tuple[str, str]:
    """Swagger UI's script and style, shipped inside Powertools, inlined so the page needs no CDN."""
    folder = resources.files("aws_lambda_powertools.event_handler.openapi.swagger_ui")
    return (
        folder.joinpath("swagger-ui-bundle.min.js").read_text(encoding="utf-8"),
        folder.joinpath("swagger-ui.min.css").read_text(encoding="utf-8"),
    )
