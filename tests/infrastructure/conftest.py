"""Two synthesized stacks for every template check: the defaults (cdk.json) and a variant flipping every option.

Each is synthesized once per session, with cdk-nag's packs attached (AwsSolutions and Serverless, as `cdk synth`
runs them), so the same synth yields the template and the nag report; bundling is skipped (the raw folders stand in
for the layer).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from infra.nag import add_nag_packs
from infra.stack import RapportStack

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# Every context value away from its default, so the other branch of each choice is synthesized and checked too.
VARIANT_CONTEXT: dict[str, Any] = {
    "retainData": "false",  # as `-c retainData=false` passes it: a string
    "corsOrigins": "https://app.example",
    "embeddingDimensions": "512",
    "wafEnabled": "false",
    "reservedConcurrency": "false",
    "tracing": "false",
    "alarmEmail": "ops@example.com",
    "openaiApiKeySecretArn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:rapport/openai-AbCdEf",
    "opensearchOperatorRoleArns": "arn:aws:iam::123456789012:role/search-operator",
}


def app_context(**overrides: Any) -> dict[str, Any]:
    """cdk.json's context (defaults and feature flags, as `cdk synth` sees them), without bundling."""
    context = json.loads((PROJECT_ROOT / "cdk.json").read_text())["context"]
    return {**context, "skipBundling": True, **overrides}


@dataclass
class Synthesized:
    stack: RapportStack
    template: Template
    nag_findings: list[str]

    @property
    def json(self) -> dict[str, Any]:
        return dict(self.template.to_json())


def synthesize(
    outdir: Path,
    stack_name: str = "RapportTest",
    env: cdk.Environment | None = None,
    profile: str | None = None,
    **context: Any,
) -> Synthesized:
    """`profile` is the `env` context value (`-c env=dev`), which the `env` parameter (the account) would shadow."""
    if profile is not None:
        context["env"] = profile
    app = cdk.App(context=app_context(**context), outdir=str(outdir))
    stack = RapportStack(app, stack_name, env=env)
    # cdk-nag 3 reports through CDK's policy validation: an unacknowledged finding (error or warning) fails synth.
    add_nag_packs(app)
    findings: list[str] = []
    try:
        app.synth()
    except RuntimeError:
        report = json.loads((outdir / "validation-report.json").read_text())
        findings = [
            f"{violation['ruleName']} ({violation['severity']}) at {construct['constructPath']}"
            for plugin in report["pluginReports"]
            for violation in plugin["violations"]
            for construct in violation["violatingConstructs"]
        ]
    template_file = outdir / f"{stack_name}.template.json"
    return Synthesized(stack, Template.from_json(json.loads(template_file.read_text())), findings)


@pytest.fixture(scope="session")
def default(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    return synthesize(tmp_path_factory.mktemp("default"))


@pytest.fixture(scope="session")
def variant(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    # With a known account and region, as `cdk synth` has them when credentials are configured: ARNs then hold
    # literals where the default synth has pseudo parameters, and acknowledgements must match both.
    env = cdk.Environment(account="123456789012", region="eu-west-1")
    return synthesize(tmp_path_factory.mktemp("variant"), env=env, **VARIANT_CONTEXT)


@pytest.fixture(scope="session")
def template(default: Synthesized) -> Template:
    return default.template


# --- reading templates ---------------------------------------------------------------------------------------------


def resources(template: Template, resource_type: str) -> dict[str, dict[str, Any]]:
    return dict(template.find_resources(resource_type))  # type: ignore[arg-type]


def queue(template: Template, prefix: str) -> tuple[str, dict[str, Any]]:
    """The one SQS queue whose logical id starts with `prefix`."""
    (found,) = [(i, q) for i, q in resources(template, "AWS::SQS::Queue").items() if i.startswith(prefix)]
    return found


def memory_table(template: Template) -> tuple[str, dict[str, Any]]:
    """The memory table: the stack's one table with a stream (the per-person keys' table has none, on purpose)."""
    (found,) = [
        (i, t)
        for i, t in resources(template, "AWS::DynamoDB::Table").items()
        if "StreamSpecification" in t["Properties"]
    ]
    return found


def only(template: Template, resource_type: str) -> tuple[str, dict[str, Any]]:
    found = resources(template, resource_type)
    assert len(found) == 1, f"expected one {resource_type}, found {sorted(found)}"
    return next(iter(found.items()))


def rapport_functions(template: Template) -> dict[str, dict[str, Any]]:
    """The functions built from functions/ (RapportFunction), not CDK's own provider-framework function."""
    return {
        logical_id: function
        for logical_id, function in resources(template, "AWS::Lambda::Function").items()
        if "POWERTOOLS_SERVICE_NAME" in function["Properties"].get("Environment", {}).get("Variables", {})
    }


def function_by_service(template: Template, service_name: str) -> tuple[str, dict[str, Any]]:
    for logical_id, function in rapport_functions(template).items():
        if function["Properties"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"] == service_name:
            return logical_id, function
    raise AssertionError(f"no function for service {service_name}")


def policy_statements_of(template: Template, function: dict[str, Any]) -> list[dict[str, Any]]:
    role_logical_id = function["Properties"]["Role"]["Fn::GetAtt"][0]
    statements: list[dict[str, Any]] = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        if {"Ref": role_logical_id} in policy["Properties"]["Roles"]:
            statements += policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def actions_of(statements: list[dict[str, Any]], prefix: str) -> set[str]:
    return {action for s in statements for action in as_list(s["Action"]) if action.startswith(prefix)}
