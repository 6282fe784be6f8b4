"""Checks answers against the OpenAPI document the server serves: the status must be one the operation declares, the
body must validate against that status's schema. Used by the e2e suite on every response it receives."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from openapi_schema_validator import OAS31Validator

JSON = "application/json"
NDJSON = "application/x-ndjson"
_PARAMETER = re.compile(r"\{[^/}]+\}")


@dataclass(frozen=True)
class Answer:
    """One response as a client received it."""

    method: str
    path: str
    status: int
    content_type: str
    body: bytes

    def describe(self) -> str:
        text = self.body[:300].decode("utf-8", "replace")
        return f"{self.method} {self.path} -> {self.status} {text}"


class Contract:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self._validators: dict[str, OAS31Validator] = {}

    @cached_property
    def _templates(self) -> list[tuple[re.Pattern[str], int, str]]:
        """Each path template as a pattern, the most literal first: `/memories/batch` before `/memories/{id}`."""
        templates = []
        for template in self.document["paths"]:
            literal = len(_PARAMETER.sub("", template))
            pattern = re.compile("^" + "[^/]+".join(re.escape(part) for part in _PARAMETER.split(template)) + "$")
            templates.append((pattern, literal, template))
        return sorted(templates, key=lambda t: -t[1])

    def operation(self, method: str, path: str) -> tuple[str, dict[str, Any]] | None:
        for pattern, _, template in self._templates:
            operations = self.document["paths"][template]
            if pattern.match(path) and method.lower() in operations:
                return template, operations[method.lower()]
        return None

    def violations(self, answer: Answer) -> list[str]:
        """What is wrong with this answer; empty when the contract holds."""
        if answer.status >= 500 and answer.status not in (502, 503):
            return [f"{answer.describe()}: a server error is a bug, whatever the document declares"]
        found = self.operation(answer.method, answer.path)
        if found is None and answer.method == "OPTIONS":
            # A CORS preflight, answered before any route: a grant has no body, a refusal the common error body.
            if answer.status < 300:
                return []
            return self._body_violations(answer, {"$ref": "#/components/schemas/ErrorOut"})
        if found is None:
            # An unknown route (or a known path with another method: 405) answers the common error body.
            if answer.status in (401, 404, 405):
                return self._body_violations(answer, {"$ref": "#/components/schemas/ErrorOut"})
            return [f"{answer.describe()}: no operation in the document matches"]
        template, operation = found
        response = operation.get("responses", {}).get(str(answer.status))
        if response is None:
            declared = ", ".join(sorted(operation.get("responses", {})))
            return [f"{answer.describe()}: {operation['operationId']} ({template}) declares only {declared}"]
        content = response.get("content") or {}
        if not content:
            return [] if not answer.body else [f"{answer.describe()}: the document declares no body for this status"]
        lines = content.get(NDJSON, {}).get("schema")
        if lines is not None and answer.content_type.startswith(NDJSON):
            return self._lines_violations(answer, lines)
        schema = content.get(JSON, {}).get("schema")
        if schema is None:
            return [f"{answer.describe()}: {operation['operationId']} declares no JSON schema for {answer.status}"]
        return self._body_violations(answer, schema)

    def _lines_violations(self, answer: Answer, schema: dict[str, Any]) -> list[str]:
        """JSON lines: each line one value of the schema."""
        found: list[str] = []
        for number, line in enumerate(answer.body.splitlines(), start=1):
            try:
                value = json.loads(line)
            except ValueError:
                found.append(f"{answer.describe()}: line {number} is not JSON")
                continue
            found += [
                f"{answer.describe()}: line {number}: {e.message[:200]}"
                for e in self._validator(schema).iter_errors(value)
            ]
        return found[:3]

    def _body_violations(self, answer: Answer, schema: dict[str, Any]) -> list[str]:
        if not answer.content_type.startswith(JSON):
            return [f"{answer.describe()}: content type {answer.content_type!r}, the document says JSON"]
        try:
            body = json.loads(answer.body)
        except ValueError:
            return [f"{answer.describe()}: the body is not JSON"]
        errors = sorted(self._validator(schema).iter_errors(body), key=lambda e: list(e.absolute_path))
        return [
            f"{answer.describe()}: at {'/'.join(map(str, e.absolute_path)) or 'the body'}: {e.message[:200]}"
            for e in errors[:3]
        ]

    def _validator(self, schema: dict[str, Any]) -> OAS31Validator:
        key = json.dumps(schema, sort_keys=True)
        if key not in self._validators:
            # The components ride along, so the schema's `#/components/schemas/...` references resolve.
            rooted = {**schema, "components": self.document.get("components", {})}
            self._validators[key] = OAS31Validator(rooted, format_checker=OAS31Validator.FORMAT_CHECKER)
        return self._validators[key]
