"""Cold start: what each handler imports at init, checked by module rather than by clock, and what the layer must hold.

The bench times `python -X importtime` per handler (docs/BENCHMARKS.md); these tests pin the reason the figures are
low, deterministically: at import, no handler loads the X-Ray SDK with tracing off, nor boto3, opensearch-py, openai,
the local embedder or the use-case graph, all of which come with the first event that needs them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from infra.constructs.core_layer import locked_pins
from rapport.adapters.aws.xray import Untraced, lambda_tracer, tracing_enabled

pytestmark = pytest.mark.infrastructure

PROJECT_ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS_DIR = PROJECT_ROOT / "functions"
HANDLERS = sorted(str(h.parent.relative_to(FUNCTIONS_DIR)) for h in FUNCTIONS_DIR.rglob("handler.py"))
# Heavy at import and needed, if at all, only once an event arrives (boto3 is 100 ms+ of a cold start on its own).
NOT_AT_INIT = (
    "aws_xray_sdk",
    "boto3",
    "s3transfer",
    "botocore.client",
    "opensearchpy",
    "openai",
    "httpx",
    "torch",
    "numpy",
    "sentence_transformers",
    "rapport.composition.services",
    "rapport.api.routers",
    "aws_lambda_powertools.utilities.idempotency",
)
# What the layer leaves out (docs/deploy.md): opensearch-py's optional gRPC transport, installed here with it.
EXCLUDED_FROM_THE_LAYER = ("grpc", "google.protobuf", "opensearch_protobufs")
LAMBDA_ENVIRONMENT = {
    "LAMBDA_TASK_ROOT": "/var/task",
    "AWS_REGION": "eu-west-1",
    "AWS_DEFAULT_REGION": "eu-west-1",
    "POWERTOOLS_SERVICE_NAME": "rapport-test",
}

_PROBE = """
import importlib, importlib.abc, importlib.metadata, json, re, sys
shipped = set({shipped!r})
owners = importlib.metadata.packages_distributions()
present = {{name.split(".")[0] for name in sys.modules}}
refused = set()
def in_the_layer(top):
    if top in sys.stdlib_module_names or top in present or top in ("rapport", "handler"):
        return True
    distributions = owners.get(top)
    return not distributions or any(re.sub(r"[-_.]+", "-", d).lower() in shipped for d in distributions)
class LayerOnly(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if not in_the_layer(top):
            refused.add(top)
            raise ImportError(f"{{name}} is not in the layer")
        return None
sys.meta_path.insert(0, LayerOnly())
sys.path[:0] = [{folder!r}, {core!r}]
for module in {modules!r}:
    importlib.import_module(module)
print(json.dumps({{"modules": sorted(sys.modules), "refused": sorted(refused)}}))
"""


def _probe(modules: list[str], folder: Path = PROJECT_ROOT, **environment: str) -> dict[str, list[str]]:
    """Import `modules` in a fresh interpreter as a Lambda container would at init, with every installed distribution
    the lock does not ship made unimportable (so an optional import falls back as in the layer, and a hard one
    fails); what ended up loaded, and what was refused."""
    code = _PROBE.format(
        shipped=sorted(pin.name for pin in locked_pins()),
        folder=str(folder),
        core=str(PROJECT_ROOT / "layers" / "core"),
        modules=modules,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POWERTOOLS_", "RAPPORT_"))}
    env |= LAMBDA_ENVIRONMENT | environment
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    found: dict[str, list[str]] = json.loads(result.stdout.splitlines()[-1])
    return found


def _loaded(modules: list[str], prefix: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for name in modules)


@pytest.mark.parametrize("handler", HANDLERS)
def test_a_handler_imports_nothing_heavy_at_init_with_tracing_off(handler: str) -> None:
    loaded = _probe(["handler"], FUNCTIONS_DIR / handler, POWERTOOLS_TRACE_DISABLED="true")["modules"]
    assert "handler" in loaded
    assert [heavy for heavy in NOT_AT_INIT if _loaded(loaded, heavy)] == []


def test_with_tracing_on_the_handler_does_load_the_x_ray_sdk() -> None:
    # The other side of the check above: in Lambda with tracing on, the Powertools Tracer (and the SDK) is there.
    loaded = _probe(["handler"], FUNCTIONS_DIR / "authorizer")["modules"]
    assert _loaded(loaded, "aws_xray_sdk")


def test_the_aws_code_paths_import_only_what_the_lock_ships() -> None:
    # Every module the deployed functions reach on their events (the app and its routers, the composition root, the
    # AWS adapters, DynamoDB, OpenSearch, OpenAI), imported with opensearch-py's gRPC transport made unimportable.
    packages = ["rapport.adapters.aws", "rapport.adapters.dynamodb", "rapport.adapters.opensearch"]
    modules = [
        f"{package}.{path.stem}"
        for package in packages
        for path in (PROJECT_ROOT / "layers" / "core" / package.replace(".", "/")).glob("*.py")
        if path.stem != "__init__"
    ]
    modules += [
        "rapport.adapters.openai.embedder",
        "rapport.adapters.openai.language_model",
        "rapport.api.app",
        "rapport.composition.services",
        "rapport.composition.functions",
        "opensearchpy",
    ]
    probed = _probe(modules)
    assert _loaded(probed["modules"], "opensearchpy") and _loaded(probed["modules"], "openai")
    # opensearch-py's gRPC transport is optional to it: refused here as in the layer, and nothing failed
    assert not any(_loaded(probed["modules"], left_out) for left_out in EXCLUDED_FROM_THE_LAYER)


# --- the tracer ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environment", "traced"),
    [
        ({"LAMBDA_TASK_ROOT": "/var/task"}, True),
        ({"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "true"}, False),
        ({"LAMBDA_TASK_ROOT": "/var/task", "POWERTOOLS_TRACE_DISABLED": "0"}, True),
        ({"LAMBDA_TASK_ROOT": "/var/task", "AWS_SAM_LOCAL": "true"}, False),
        ({}, False),  # outside Lambda: no daemon to send segments to
    ],
)
def test_tracing_is_on_in_lambda_unless_disabled_or_emulated(environment: dict[str, str], traced: bool) -> None:
    assert tracing_enabled(environment) is traced


def test_an_untraced_function_keeps_its_handler_as_it_is() -> None:
    tracer = lambda_tracer("rapport-test", environ={})
    assert isinstance(tracer, Untraced)

    def handler(event: dict[str, int], context: object) -> int:
        return event["n"] + 1

    assert tracer.capture_lambda_handler(capture_response=False)(handler) is handler
    assert tracer.capture_lambda_handler(handler) is handler
    assert tracer.capture_method(handler) is handler
    tracer.put_annotation("tenant", "t1")  # no segment, no error


def test_the_layer_probe_refuses_a_distribution_the_lock_does_not_ship() -> None:
    # numpy is installed here (the local extra) but not in the lock: importing it must fail as it would in Lambda
    with pytest.raises(AssertionError, match="numpy is not in the layer"):
        _probe(["numpy"])
