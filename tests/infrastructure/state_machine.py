"""Helpers to run the synthesized pipeline state machine in moto, its Lambda tasks routed to the real handlers."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from moto.awslambda_simple.models import LambdaSimpleBackend

from tests.integration.api_events import FakeLambdaContext

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PIPELINE_FUNCTIONS = PROJECT_ROOT / "functions" / "pipeline"
ACCOUNT = "123456789012"
REGION = "us-east-1"
SERVICE_PREFIX = "rapport-pipeline-"


def state_machine_of(template: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (found,) = [(k, v) for k, v in template["Resources"].items() if v["Type"] == "AWS::StepFunctions::StateMachine"]
    return found


def resolve(value: Any, refs: dict[str, str], arns: dict[str, str]) -> str:
    """A CloudFormation string expression with its Refs and GetAtt ARNs replaced by the moto resources'."""
    if isinstance(value, str):
        return value
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return separator.join(resolve(part, refs, arns) for part in parts)
    if "Ref" in value:
        return {"AWS::Partition": "aws", "AWS::Region": REGION, "AWS::AccountId": ACCOUNT, **refs}[value["Ref"]]
    if "Fn::GetAtt" in value:
        logical_id, attribute = value["Fn::GetAtt"]
        assert attribute == "Arn", value
        return arns[logical_id]
    raise AssertionError(f"unexpected expression in the definition: {value}")


def step_functions(template: dict[str, Any]) -> dict[str, str]:
    """The pipeline's functions: logical id -> step folder under functions/pipeline (from the service name)."""
    steps: dict[str, str] = {}
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Lambda::Function":
            continue
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        service = str(variables.get("POWERTOOLS_SERVICE_NAME", ""))
        if service.startswith(SERVICE_PREFIX):
            steps[logical_id] = service.removeprefix(SERVICE_PREFIX).replace("-", "_")
    return steps


def function_arn(logical_id: str) -> str:
    return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{logical_id}"


def load_handler(step: str) -> ModuleType:
    """A fresh copy of functions/pipeline/<step>/handler.py, as a cold start would import it."""
    spec = importlib.util.spec_from_file_location(
        f"rapport_pipeline_{step}_handler_under_test", PIPELINE_FUNCTIONS / step / "handler.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# A fault injected into one step: called with the event before the handler; raising makes the invocation fail.
Fault = Callable[[dict[str, Any]], None]


@dataclass
class LambdaRouter:
    """Stands in for Lambda: each invocation of a pipeline function runs its real handler in this process."""

    functions: dict[str, str]  # logical id -> step
    handlers: dict[str, ModuleType] = field(default_factory=dict)
    invocations: list[str] = field(default_factory=list)
    faults: dict[str, Fault] = field(default_factory=dict)

    def invoke(self, function_name: str, body: Any, response_headers: dict[str, str]) -> bytes:
        step = self.functions[function_name.rsplit(":", 1)[-1]]
        self.invocations.append(step)
        event = json.loads(body) if body else {}
        try:
            if step in self.faults:
                self.faults[step](event)
            if step not in self.handlers:
                self.handlers[step] = load_handler(step)
            result = self.handlers[step].handler(event, FakeLambdaContext())
        except Exception as exc:
            # What the Lambda runtime answers for an unhandled exception: Step Functions matches on errorType.
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps({"errorType": type(exc).__name__, "errorMessage": str(exc)}).encode()
        return json.dumps(result).encode()

    def count(self, step: str) -> int:
        return self.invocations.count(step)


@contextmanager
def lambda_routed_to(router: LambdaRouter, monkeypatch: pytest.MonkeyPatch) -> Iterator[LambdaRouter]:
    def invoke(
        backend: LambdaSimpleBackend, function_name: str, qualifier: Any, body: Any, headers: Any, response_headers: Any
    ) -> bytes:
        return router.invoke(function_name, body, response_headers)

    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
    yield router
