"""Helpers to run the synthesized pipeline state machine in moto, its Lambda tasks routed to the real handlers."""

from __future__ import annotations

import importlib.util
import json
import os
import threading
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
PIPELINE_HANDLER = PROJECT_ROOT / "functions" / "pipeline" / "handler.py"
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


@dataclass(frozen=True)
class StepFunction:
    """One pipeline function as the template declares it."""

    step: str  # from the service name: record, extract_user, extract_relational, filter, store
    service: str  # POWERTOOLS_SERVICE_NAME
    entry_point: str  # the function of functions/pipeline/handler.py its Handler names


def step_functions(template: dict[str, Any]) -> dict[str, StepFunction]:
    """The pipeline's functions: logical id -> its step, service name and entry point."""
    steps: dict[str, StepFunction] = {}
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] != "AWS::Lambda::Function":
            continue
        properties = resource["Properties"]
        service = str(properties.get("Environment", {}).get("Variables", {}).get("POWERTOOLS_SERVICE_NAME", ""))
        if service.startswith(SERVICE_PREFIX):
            module, entry_point = str(properties["Handler"]).split(".")
            assert module == "handler", properties["Handler"]
            steps[logical_id] = StepFunction(
                step=service.removeprefix(SERVICE_PREFIX).replace("-", "_"), service=service, entry_point=entry_point
            )
    return steps


def function_arn(logical_id: str) -> str:
    return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{logical_id}"


_COLD_STARTS = threading.Lock()


def load_handler(function: StepFunction) -> ModuleType:
    """A fresh copy of functions/pipeline/handler.py, imported as the function's cold start would: with its own
    service name in the environment, which Powertools reads at import."""
    spec = importlib.util.spec_from_file_location(
        f"rapport_pipeline_{function.step}_handler_under_test", PIPELINE_HANDLER
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    # The two extractions run side by side: one process environment, so their cold starts take turns.
    with _COLD_STARTS:
        before = os.environ.get("POWERTOOLS_SERVICE_NAME")
        os.environ["POWERTOOLS_SERVICE_NAME"] = function.service
        try:
            spec.loader.exec_module(module)
        finally:
            if before is None:
                del os.environ["POWERTOOLS_SERVICE_NAME"]
            else:
                os.environ["POWERTOOLS_SERVICE_NAME"] = before
    return module


# A fault injected into one step: called with the event before the handler; raising makes the invocation fail.
Fault = Callable[[dict[str, Any]], None]


@dataclass
class LambdaRouter:
    """Stands in for Lambda: each invocation of a pipeline function runs its real handler in this process."""

    functions: dict[str, StepFunction]  # logical id -> the function's step and entry point
    handlers: dict[str, ModuleType] = field(default_factory=dict)
    invocations: list[str] = field(default_factory=list)
    faults: dict[str, Fault] = field(default_factory=dict)
    # Lambda runs each function in a process of its own. Here they share one, and Powertools' `Metrics` instances
    # share one set of metrics: two steps at once (the Parallel state's branches) would flush each other's, and the
    # one left with none fails "Must contain at least one metric". So one invocation at a time.
    _one_at_a_time: threading.Lock = field(default_factory=threading.Lock)

    def invoke(self, function_name: str, body: Any, response_headers: dict[str, str]) -> bytes:
        with self._one_at_a_time:
            return self._invoke(function_name, body, response_headers)

    def _invoke(self, function_name: str, body: Any, response_headers: dict[str, str]) -> bytes:
        function = self.functions[function_name.rsplit(":", 1)[-1]]
        step = function.step
        self.invocations.append(step)
        event = json.loads(body) if body else {}
        if step not in self.handlers:
            self.handlers[step] = load_handler(function)
        module = self.handlers[step]
        assert module.logger.service == function.service, "each function logs under its own service name"
        try:
            if step in self.faults:
                self.faults[step](event)
            result = getattr(module, function.entry_point)(event, FakeLambdaContext())
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
