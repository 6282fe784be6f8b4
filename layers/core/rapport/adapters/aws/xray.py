"""X-Ray through the Powertools Tracer, built only where tracing is on: the SDK is a third of a handler's import.

Powertools imports the X-Ray SDK when a `Tracer` is constructed, even a disabled one, so a function with tracing off
gets `Untraced`, which has the decorators the handlers use and records nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from aws_lambda_powertools.shared.functions import resolve_truthy_env_var_choice

if TYPE_CHECKING:
    from aws_lambda_powertools import Tracer

F = TypeVar("F", bound=Callable[..., Any])


def tracing_enabled(environ: Mapping[str, str] = os.environ) -> bool:
    """Powertools' own rule: on in Lambda unless POWERTOOLS_TRACE_DISABLED says otherwise; off outside Lambda and
    under the SAM and Chalice local emulators, where no X-Ray daemon listens."""
    if resolve_truthy_env_var_choice(env=environ.get("POWERTOOLS_TRACE_DISABLED", "false")):
        return False
    in_lambda = bool(environ.get("LAMBDA_TASK_ROOT"))
    emulated = bool(environ.get("AWS_SAM_LOCAL") or environ.get("AWS_CHALICE_CLI_MODE"))
    return in_lambda and not emulated


class Untraced:
    """The part of `Tracer` the handlers use, for a function that does not trace: a decorator returns its function."""

    def capture_lambda_handler(
        self, lambda_handler: F | None = None, capture_response: bool | None = None, capture_error: bool | None = None
    ) -> Any:
        return lambda_handler if lambda_handler is not None else _unchanged

    def capture_method(
        self, method: F | None = None, capture_response: bool | None = None, capture_error: bool | None = None
    ) -> Any:
        return method if method is not None else _unchanged

    def put_annotation(self, key: str, value: object) -> None:
        return None

    def put_metadata(self, key: str, value: object, namespace: str | None = None) -> None:
        return None


def _unchanged(function: F) -> F:
    return function


def lambda_tracer(service: str | None = None, environ: Mapping[str, str] = os.environ) -> Tracer | Untraced:
    """The function's tracer: Powertools' (and with it the X-Ray SDK) when tracing is on, else `Untraced`."""
    if not tracing_enabled(environ):
        return Untraced()
    from aws_lambda_powertools import Tracer

    return Tracer(service=service)
