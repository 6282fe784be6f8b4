"""cdk-nag's AwsSolutions and Serverless packs gate every environment's synth, each acknowledgement scoped to one
resource with its reason; X-Ray follows the `tracing` switch (on in prod and staging, off in dev, `-c` wins)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template

from infra.nag import PACKS, add_nag_packs
from tests.infrastructure.conftest import Synthesized, only, rapport_functions, resources, synthesize

pytestmark = pytest.mark.infrastructure

ACKNOWLEDGED = "aws:cdk:acknowledged-rules"
# The resource type each Serverless rule acknowledged in infra/ checks: an acknowledgement must cover one of them.
SERVERLESS_RULE_TYPES = {
    "Serverless-LambdaDLQ": "AWS::Lambda::Function",
    "Serverless-LambdaLatestVersion": "AWS::Lambda::Function",
    "Serverless-LambdaTracing": "AWS::Lambda::Function",
    "Serverless-LambdaEventSourceMappingDestination": "AWS::Lambda::EventSourceMapping",
    "Serverless-SQSRedrivePolicy": "AWS::SQS::Queue",
    "Serverless-EventBusDLQ": "AWS::Events::Rule",
    "Serverless-SNSRedrivePolicy": "AWS::SNS::Subscription",
    "Serverless-APIGWXrayEnabled": "AWS::ApiGateway::Stage",
    "Serverless-StepFunctionStateMachineXray": "AWS::StepFunctions::StateMachine",
}
LATEST_VERSION_REASON = "pinned to 3.12, the version the layer lock is resolved for"


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    return synthesize(tmp_path_factory.mktemp("dev"), profile="dev")


@pytest.fixture(scope="module")
def staging(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    return synthesize(tmp_path_factory.mktemp("staging"), profile="staging")


@pytest.fixture(scope="module")
def traced_dev(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    return synthesize(tmp_path_factory.mktemp("traced-dev"), profile="dev", tracing="true")


# `default` is the prod profile (cdk.json), `variant` prod with `-c tracing=false` among its other flips.
SYNTHS = ["dev", "staging", "default", "variant"]


def acknowledgements(synthesized: Synthesized) -> list[tuple[Any, str, str]]:
    """(construct, rule, reason) for every acknowledgement in the app, the app and stack nodes included."""
    app = synthesized.stack.node.scope
    assert app is not None
    return [
        (construct, rule.removeprefix("Annotation::"), reason)
        for construct in app.node.find_all()
        for entry in construct.node.metadata
        if entry.type == ACKNOWLEDGED
        for rule, reason in entry.data.items()
    ]


def cfn_resources_of(construct: Any, resource_type: str) -> list[cdk.CfnResource]:
    return [
        child
        for child in construct.node.find_all()
        if isinstance(child, cdk.CfnResource) and child.cfn_resource_type == resource_type
    ]


def logical_id(synthesized: Synthesized, resource: cdk.CfnResource) -> str:
    return synthesized.stack.get_logical_id(resource)


# --- the gate --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", SYNTHS)
def test_each_profile_passes_both_packs(which: str, request: pytest.FixtureRequest) -> None:
    synthesized: Synthesized = request.getfixturevalue(which)
    assert synthesized.nag_findings == [], "findings of AwsSolutions or Serverless without an acknowledgement"


def test_the_gate_fails_a_synth_on_a_serverless_finding(tmp_path: Path) -> None:
    # Given a function with none of the house's defaults, checked by the packs the app runs
    app = cdk.App(outdir=str(tmp_path))
    stack = cdk.Stack(app, "Bare")
    lambda_.Function(
        stack,
        "Bare",
        runtime=lambda_.Runtime.PYTHON_3_12,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context):\n    return None\n"),
    )
    add_nag_packs(app)
    # When it is synthesized, then the synth fails and the report names both packs' findings
    with pytest.raises(RuntimeError):
        app.synth()
    report = json.loads((tmp_path / "validation-report.json").read_text())
    rules = {violation["ruleName"] for plugin in report["pluginReports"] for violation in plugin["violations"]}
    assert {"Serverless-LambdaDLQ", "Serverless-LambdaDefaultMemorySize", "Serverless-LambdaTracing"} <= rules
    assert any(rule.startswith("AwsSolutions-") for rule in rules)


# --- the acknowledgements ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", SYNTHS)
def test_every_acknowledgement_names_a_pack_rule_and_gives_a_real_reason(
    which: str, request: pytest.FixtureRequest
) -> None:
    found = acknowledgements(request.getfixturevalue(which))
    assert any(rule.startswith("Serverless-") for _, rule, _ in found)
    assert [(c.node.path, rule) for c, rule, _ in found if not rule.startswith(tuple(f"{p}-" for p in PACKS))] == []
    # A sentence that says why the finding does not hold here, not a placeholder
    assert [
        (c.node.path, rule, reason) for c, rule, reason in found if len(reason.split()) < 8 or len(reason) < 50
    ] == []


@pytest.mark.parametrize("which", SYNTHS)
def test_no_acknowledgement_is_stack_wide(which: str, request: pytest.FixtureRequest) -> None:
    synthesized: Synthesized = request.getfixturevalue(which)
    app_and_stack = ("", synthesized.stack.node.path)
    blanket = [(c.node.path, rule) for c, rule, _ in acknowledgements(synthesized) if c.node.path in app_and_stack]
    assert blanket == []


@pytest.mark.parametrize("which", SYNTHS)
def test_a_serverless_acknowledgement_covers_exactly_one_resource_it_checks(
    which: str, request: pytest.FixtureRequest
) -> None:
    synthesized: Synthesized = request.getfixturevalue(which)
    for construct, rule, _ in acknowledgements(synthesized):
        if not rule.startswith("Serverless-"):
            continue
        assert rule in SERVERLESS_RULE_TYPES, f"{rule}: add the resource type it checks to SERVERLESS_RULE_TYPES"
        covered = cfn_resources_of(construct, SERVERLESS_RULE_TYPES[rule])
        assert len(covered) == 1, f"{rule} at {construct.node.path} covers {[r.node.path for r in covered]}"


def test_every_python_function_is_acknowledged_as_pinned_to_the_layer_runtime(default: Synthesized) -> None:
    pinned = {
        logical_id(default, resource)
        for construct, rule, reason in acknowledgements(default)
        if rule == "Serverless-LambdaLatestVersion" and reason.startswith(LATEST_VERSION_REASON)
        for resource in cfn_resources_of(construct, "AWS::Lambda::Function")
    }
    assert pinned == set(rapport_functions(default.template))
    runtimes = {f["Properties"]["Runtime"] for f in rapport_functions(default.template).values()}
    assert runtimes == {"python3.12"}


# --- failures of asynchronous invocations ---------------------------------------------------------------------------


def _resource_of(arn: Any) -> str | None:
    """The logical id of the template's resource an `Arn` value points at (`Fn::GetAtt [id, Arn]`), if any."""
    if isinstance(arn, dict) and "Fn::GetAtt" in arn:
        return str(arn["Fn::GetAtt"][0])
    return None


def asynchronously_invoked(template: Template) -> set[str]:
    """Functions that EventBridge rules or EventBridge Scheduler invoke: both invoke Lambda asynchronously."""
    functions = set(resources(template, "AWS::Lambda::Function"))
    targets = [t for rule in resources(template, "AWS::Events::Rule").values() for t in rule["Properties"]["Targets"]]
    targets += [s["Properties"]["Target"] for s in resources(template, "AWS::Scheduler::Schedule").values()]
    return {fn for target in targets if (fn := _resource_of(target["Arn"])) in functions}


def on_failure_queues(template: Template) -> dict[str, str]:
    """Function logical id -> the logical id of the queue its asynchronous failures go to."""
    found = {}
    for config in resources(template, "AWS::Lambda::EventInvokeConfig").values():
        properties = config["Properties"]
        destination = properties.get("DestinationConfig", {}).get("OnFailure", {}).get("Destination")
        if destination is not None:
            found[properties["FunctionName"]["Ref"]] = _resource_of(destination) or ""
    return found


def queues_with_a_depth_alarm(template: Template) -> set[str]:
    alarmed = set()
    for alarm in resources(template, "AWS::CloudWatch::Alarm").values():
        for dimension in alarm["Properties"].get("Dimensions", []):
            if dimension["Name"] == "QueueName" and alarm["Properties"].get("MetricName", "").startswith(
                "ApproximateNumberOfMessagesVisible"
            ):
                alarmed.add(dimension["Value"]["Fn::GetAtt"][0])
    return alarmed


@pytest.mark.parametrize("which", ["default", "variant"])
def test_every_asynchronously_invoked_function_keeps_its_failures_in_an_alarmed_queue(
    which: str, request: pytest.FixtureRequest
) -> None:
    template = request.getfixturevalue(which).template
    invoked = asynchronously_invoked(template)
    # The ingest consumer, the enricher and the governance producer (the schedules' target)
    assert len(invoked) == 3
    failures = on_failure_queues(template)
    assert {fn: failures.get(fn) for fn in invoked if fn not in failures} == {}
    queues = resources(template, "AWS::SQS::Queue")
    assert {failures[fn] for fn in invoked} <= set(queues)
    assert {failures[fn] for fn in invoked} <= queues_with_a_depth_alarm(template)


def test_an_on_failure_acknowledgement_is_only_given_where_there_is_a_destination(default: Synthesized) -> None:
    failures = on_failure_queues(default.template)
    claimed = {
        logical_id(default, resource)
        for construct, rule, reason in acknowledgements(default)
        if rule == "Serverless-LambdaDLQ" and "on-failure destination" in reason
        for resource in cfn_resources_of(construct, "AWS::Lambda::Function")
    }
    assert claimed and claimed <= set(failures)
    # and a function acknowledged as invoked synchronously is no target of a rule or a schedule
    synchronous = {
        logical_id(default, resource)
        for construct, rule, reason in acknowledgements(default)
        if rule == "Serverless-LambdaDLQ" and "invokes it synchronously" in reason
        for resource in cfn_resources_of(construct, "AWS::Lambda::Function")
    }
    assert synchronous and not synchronous & asynchronously_invoked(default.template)


# --- tracing per environment ----------------------------------------------------------------------------------------


def assert_traced(synthesized: Synthesized, traced: bool) -> None:
    template = synthesized.template
    functions = rapport_functions(template)
    for logical, function in functions.items():
        properties = function["Properties"]
        variables = properties["Environment"]["Variables"]
        if traced:
            assert properties["TracingConfig"] == {"Mode": "Active"}, logical
            assert "POWERTOOLS_TRACE_DISABLED" not in variables, logical
        else:
            assert "TracingConfig" not in properties, logical
            assert variables["POWERTOOLS_TRACE_DISABLED"] == "true", logical
    _, machine = only(template, "AWS::StepFunctions::StateMachine")
    assert machine["Properties"].get("TracingConfiguration", {}).get("Enabled", False) is traced
    _, stage = only(template, "AWS::ApiGateway::Stage")
    assert stage["Properties"].get("TracingEnabled", False) is traced
    # Only a traced stack lets its functions write segments
    policies = json.dumps(resources(template, "AWS::IAM::Policy"))
    assert ("xray:PutTraceSegments" in policies) is traced
    # The acknowledgement of untraced functions is there exactly when they are untraced
    untraced = {
        logical_id(synthesized, resource)
        for construct, rule, _ in acknowledgements(synthesized)
        if rule == "Serverless-LambdaTracing"
        for resource in cfn_resources_of(construct, "AWS::Lambda::Function")
    }
    assert (untraced & set(functions)) == (set() if traced else set(functions))


@pytest.mark.parametrize(
    ("which", "traced"),
    [("dev", False), ("staging", True), ("default", True), ("traced_dev", True), ("variant", False)],
)
def test_tracing_follows_the_profile_unless_the_context_says_otherwise(
    which: str, traced: bool, request: pytest.FixtureRequest
) -> None:
    synthesized: Synthesized = request.getfixturevalue(which)
    assert synthesized.stack.settings.tracing is traced
    assert_traced(synthesized, traced)


def test_a_tracing_value_that_is_not_a_boolean_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="tracing"):
        synthesize(tmp_path, profile="dev", tracing="sometimes")
