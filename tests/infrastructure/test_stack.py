"""The synthesized stack: table shape, Lambda defaults, authorizer coverage, least privilege, cdk-nag, cfn-lint."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Match, Template
from cdk_nag import AwsSolutionsChecks

from infra.constructs.core_layer import PACKAGE_DIR, PYPROJECT, PipLayerBundling, core_dependencies
from infra.stack import RapportStack

pytestmark = pytest.mark.infrastructure

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DYNAMODB_WRITE_ACTIONS = {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}


def app_context(**overrides: Any) -> dict[str, Any]:
    """cdk.json's context (defaults and feature flags, as `cdk synth` sees them), without bundling."""
    context = json.loads((PROJECT_ROOT / "cdk.json").read_text())["context"]
    return {**context, "skipBundling": True, **overrides}


def synthesize(outdir: Path | None = None, **context: Any) -> RapportStack:
    app = cdk.App(context=app_context(**context), outdir=str(outdir) if outdir else None)
    return RapportStack(app, "RapportTest")


@pytest.fixture(scope="module")
def template() -> Template:
    return Template.from_stack(synthesize())


def resources(template: Template, resource_type: str) -> dict[str, dict[str, Any]]:
    return dict(template.find_resources(resource_type))  # type: ignore[arg-type]


def only(template: Template, resource_type: str) -> tuple[str, dict[str, Any]]:
    found = resources(template, resource_type)
    assert len(found) == 1, f"expected one {resource_type}, found {sorted(found)}"
    return next(iter(found.items()))


def function_by_service(template: Template, service_name: str) -> dict[str, Any]:
    for function in resources(template, "AWS::Lambda::Function").values():
        if function["Properties"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"] == service_name:
            return function
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


def dynamodb_statements(statements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in statements if any(a.startswith("dynamodb:") for a in as_list(s["Action"]))]


# --- the table ---------------------------------------------------------------------------------------------------


def test_table_has_the_single_table_key_schema_and_billing(template: Template) -> None:
    _, table = only(template, "AWS::DynamoDB::Table")
    properties = table["Properties"]
    assert properties["KeySchema"] == [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert properties["BillingMode"] == "PAY_PER_REQUEST"
    assert "ProvisionedThroughput" not in properties
    expected_attributes = ["pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk", "gsi3pk", "gsi3sk"]
    assert sorted(properties["AttributeDefinitions"], key=lambda a: a["AttributeName"]) == sorted(
        ({"AttributeName": name, "AttributeType": "S"} for name in expected_attributes),
        key=lambda a: a["AttributeName"],
    )


def test_table_has_exactly_the_three_overloaded_gsis(template: Template) -> None:
    _, table = only(template, "AWS::DynamoDB::Table")
    indexes = {index["IndexName"]: index for index in table["Properties"]["GlobalSecondaryIndexes"]}
    assert sorted(indexes) == ["gsi1", "gsi2", "gsi3"]
    for name, index in indexes.items():
        assert index["KeySchema"] == [
            {"AttributeName": f"{name}pk", "KeyType": "HASH"},
            {"AttributeName": f"{name}sk", "KeyType": "RANGE"},
        ]
        assert index["Projection"] == {"ProjectionType": "ALL"}


def test_table_is_recoverable_encrypted_with_a_rotating_cmk_and_streams_both_images(template: Template) -> None:
    key_logical_id, key = only(template, "AWS::KMS::Key")
    assert key["Properties"]["EnableKeyRotation"] is True
    template.has_resource_properties(
        "AWS::DynamoDB::Table",
        {
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
            "SSESpecification": {
                "SSEEnabled": True,
                "SSEType": "KMS",
                "KMSMasterKeyId": {"Fn::GetAtt": [key_logical_id, "Arn"]},
            },
            "TimeToLiveSpecification": {"AttributeName": "expires_at", "Enabled": True},
            "StreamSpecification": {"StreamViewType": "NEW_AND_OLD_IMAGES"},
        },
    )


def test_table_and_key_are_retained_and_protected_by_default(template: Template) -> None:
    template.has_resource(
        "AWS::DynamoDB::Table",
        {"DeletionPolicy": "Retain", "Properties": Match.object_like({"DeletionProtectionEnabled": True})},
    )
    template.has_resource("AWS::KMS::Key", {"DeletionPolicy": "Retain"})


def test_dev_stacks_can_opt_out_of_retaining_data() -> None:
    # Given a dev stack synthesized with retainData=false (as `-c retainData=false` passes it: a string)
    dev = Template.from_stack(synthesize(retainData="false"))
    # Then destroying the stack removes the table and its key, and nothing blocks the delete
    dev.has_resource(
        "AWS::DynamoDB::Table",
        {"DeletionPolicy": "Delete", "Properties": Match.object_like({"DeletionProtectionEnabled": False})},
    )
    dev.has_resource("AWS::KMS::Key", {"DeletionPolicy": "Delete"})


# --- the functions ------------------------------------------------------------------------------------------------


def test_every_function_shares_the_rapport_defaults(template: Template) -> None:
    layer_logical_id, layer = only(template, "AWS::Lambda::LayerVersion")
    assert layer["Properties"]["CompatibleRuntimes"] == ["python3.12"]
    assert layer["Properties"]["CompatibleArchitectures"] == ["arm64"]
    functions = resources(template, "AWS::Lambda::Function")
    assert len(functions) == 2, sorted(functions)
    for logical_id, function in functions.items():
        properties = function["Properties"]
        assert properties["Architectures"] == ["arm64"], logical_id
        assert properties["Runtime"] == "python3.12", logical_id
        assert properties["TracingConfig"] == {"Mode": "Active"}, logical_id
        assert {"Ref": layer_logical_id} in properties["Layers"], logical_id
        assert properties["LoggingConfig"]["LogFormat"] == "JSON", logical_id
        variables = properties["Environment"]["Variables"]
        assert variables["RAPPORT_STORE"] == "dynamodb", logical_id
        assert variables["RAPPORT_TABLE_NAME"] == {"Ref": only(template, "AWS::DynamoDB::Table")[0]}, logical_id


def test_function_logs_are_kept_one_month(template: Template) -> None:
    log_groups = resources(template, "AWS::Logs::LogGroup")
    for function in resources(template, "AWS::Lambda::Function").values():
        log_group_id = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert log_groups[log_group_id]["Properties"]["RetentionInDays"] == 30


def test_api_function_gets_the_vector_backend_from_context() -> None:
    stack = Template.from_stack(synthesize(vectorBackend="opensearch", opensearchEndpoint="https://search.example"))
    variables = function_by_service(stack, "rapport-api")["Properties"]["Environment"]["Variables"]
    assert variables["RAPPORT_VECTOR_BACKEND"] == "opensearch"
    assert variables["RAPPORT_OPENSEARCH_URL"] == "https://search.example"


def test_an_empty_opensearch_endpoint_is_left_unset(template: Template) -> None:
    variables = function_by_service(template, "rapport-api")["Properties"]["Environment"]["Variables"]
    assert "RAPPORT_OPENSEARCH_URL" not in variables


# --- the API ------------------------------------------------------------------------------------------------------


def test_authorizer_is_a_cached_request_authorizer_on_the_authorization_header(template: Template) -> None:
    _, authorizer = only(template, "AWS::ApiGateway::Authorizer")
    properties = authorizer["Properties"]
    assert properties["Type"] == "REQUEST"
    assert properties["IdentitySource"] == "method.request.header.Authorization"
    assert properties["AuthorizerResultTtlInSeconds"] == 300


def test_every_method_but_health_requires_the_authorizer(template: Template) -> None:
    authorizer_id, _ = only(template, "AWS::ApiGateway::Authorizer")
    paths = _resource_paths(template)
    methods = {
        (method["Properties"]["HttpMethod"], paths[method["Properties"]["ResourceId"]["Ref"]]): method["Properties"]
        for method in resources(template, "AWS::ApiGateway::Method").values()
    }
    assert ("ANY", "/v1/{proxy+}") in methods
    assert ("GET", "/v1/health") in methods
    for (http_method, path), properties in methods.items():
        if (http_method, path) == ("GET", "/v1/health"):
            assert properties["AuthorizationType"] == "NONE"
            assert "AuthorizerId" not in properties
        else:
            assert properties["AuthorizationType"] == "CUSTOM", (http_method, path)
            assert properties["AuthorizerId"] == {"Ref": authorizer_id}, (http_method, path)


def _resource_paths(template: Template) -> dict[str, str]:
    api_resources = resources(template, "AWS::ApiGateway::Resource")

    def path_of(logical_id: str) -> str:
        properties = api_resources[logical_id]["Properties"]
        parent = properties["ParentId"]
        prefix = path_of(parent["Ref"]) if "Ref" in parent else ""
        return f"{prefix}/{properties['PathPart']}"

    return {logical_id: path_of(logical_id) for logical_id in api_resources}


def test_stage_logs_access_as_json_traces_and_throttles(template: Template) -> None:
    _, stage = only(template, "AWS::ApiGateway::Stage")
    properties = stage["Properties"]
    assert properties["TracingEnabled"] is True
    access_logs = properties["AccessLogSetting"]
    assert "DestinationArn" in access_logs
    log_line = json.loads(access_logs["Format"])
    assert log_line["requestId"] == "$context.requestId"
    assert log_line["tenantId"] == "$context.authorizer.tenant_id"
    (settings,) = properties["MethodSettings"]
    assert settings["ThrottlingRateLimit"] == 100
    assert settings["ThrottlingBurstLimit"] == 200
    assert settings["DataTraceEnabled"] is False


def test_cors_is_off_by_default_and_follows_context(template: Template) -> None:
    # Given no corsOrigins, there is no preflight method at all
    methods = resources(template, "AWS::ApiGateway::Method").values()
    assert not [m for m in methods if m["Properties"]["HttpMethod"] == "OPTIONS"]
    # Given origins on the command line, preflights answer with them and need no API key
    with_cors = Template.from_stack(synthesize(corsOrigins="https://app.example"))
    options = [
        m["Properties"]
        for m in resources(with_cors, "AWS::ApiGateway::Method").values()
        if m["Properties"]["HttpMethod"] == "OPTIONS"
    ]
    assert options
    for method in options:
        assert method["AuthorizationType"] == "NONE"
        origin = method["Integration"]["IntegrationResponses"][0]["ResponseParameters"]
        assert origin["method.response.header.Access-Control-Allow-Origin"] == "'https://app.example'"


# --- least privilege ------------------------------------------------------------------------------------------------


def test_api_function_dynamodb_access_is_scoped_to_the_table_and_its_indexes(template: Template) -> None:
    table_logical_id, _ = only(template, "AWS::DynamoDB::Table")
    table_arn = {"Fn::GetAtt": [table_logical_id, "Arn"]}
    index_arn = {"Fn::Join": ["", [table_arn, "/index/*"]]}
    statements = dynamodb_statements(policy_statements_of(template, function_by_service(template, "rapport-api")))
    assert statements, "the API function cannot reach the table"
    for statement in statements:
        for resource in as_list(statement["Resource"]):
            assert resource in (table_arn, index_arn), resource
    granted = {action for statement in statements for action in as_list(statement["Action"])}
    assert granted >= DYNAMODB_WRITE_ACTIONS


def test_authorizer_can_read_the_table_but_never_write(template: Template) -> None:
    table_logical_id, _ = only(template, "AWS::DynamoDB::Table")
    table_arn = {"Fn::GetAtt": [table_logical_id, "Arn"]}
    statements = policy_statements_of(template, function_by_service(template, "rapport-authorizer"))
    table_statements = dynamodb_statements(statements)
    granted = {action for statement in table_statements for action in as_list(statement["Action"])}
    assert "dynamodb:Query" in granted
    assert not granted & DYNAMODB_WRITE_ACTIONS
    for statement in table_statements:
        assert table_arn in as_list(statement["Resource"])
        assert "*" not in as_list(statement["Resource"])
    kms_actions = {a for s in statements for a in as_list(s["Action"]) if a.startswith("kms:")}
    assert kms_actions <= {"kms:Decrypt", "kms:DescribeKey"}


def test_only_xray_statements_use_a_wildcard_resource(template: Template) -> None:
    for function in resources(template, "AWS::Lambda::Function").values():
        for statement in policy_statements_of(template, function):
            if "*" in as_list(statement["Resource"]):
                assert all(action.startswith("xray:") for action in as_list(statement["Action"])), statement


# --- policy checks ------------------------------------------------------------------------------------------------


def test_cdk_nag_aws_solutions_finds_nothing_unacknowledged(tmp_path: Path) -> None:
    # cdk-nag 3 reports through CDK's policy validation: any unacknowledged finding (error or warning) fails synth.
    stack = synthesize(tmp_path)
    app = stack.node.root
    assert isinstance(app, cdk.App)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    try:
        app.synth()
    except RuntimeError as failure:
        report = json.loads((tmp_path / "validation-report.json").read_text())
        findings = [
            f"{violation['ruleName']} ({violation['severity']}) at {construct['constructPath']}"
            for plugin in report["pluginReports"]
            for violation in plugin["violations"]
            for construct in violation["violatingConstructs"]
        ]
        pytest.fail(f"cdk-nag findings without an acknowledgement: {findings or failure}")


def test_cfn_lint_finds_no_errors(template: Template, tmp_path: Path) -> None:
    from cfnlint.api import ManualArgs, lint_file

    template_file = tmp_path / "rapport.template.json"
    template_file.write_text(json.dumps(template.to_json()))
    matches = lint_file(template_file, config=ManualArgs(regions=["us-east-1", "eu-west-1"]))
    errors = [f"{m.rule.id} {m.message} ({m.path})" for m in matches if m.rule.id.startswith("E")]
    assert errors == []


# --- core layer bundling (no pip run: these check what would be installed and how failure surfaces) ---------------


def test_layer_carries_the_core_dependencies_and_never_the_local_or_dev_extras() -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    requirements = core_dependencies()
    assert requirements == project["dependencies"]
    names = " ".join(requirements).lower()
    for heavy in ("torch", "sentence-transformers", "numpy", "pytest", "aws-cdk-lib"):
        assert heavy not in names


def test_layer_pip_install_targets_lambda_arm64_python312_wheels_only(tmp_path: Path) -> None:
    command = PipLayerBundling(requirements=["pydantic>=2"], package_dir=PACKAGE_DIR).pip_command(tmp_path / "python")
    joined = " ".join(command)
    assert "--platform manylinux2014_aarch64" in joined
    assert "--implementation cp --python-version 3.12" in joined
    assert "--only-binary=:all:" in command
    assert f"--target {tmp_path / 'python'}" in joined
    assert command[-1] == "pydantic>=2"


def test_layer_bundling_copies_the_package_beside_the_dependencies(tmp_path: Path) -> None:
    pip_that_succeeds = shutil.which("true")
    assert pip_that_succeeds
    bundling = PipLayerBundling(requirements=[], package_dir=PACKAGE_DIR, python=pip_that_succeeds)
    assert bundling.try_bundle(str(tmp_path), cdk.BundlingOptions(image=cdk.DockerImage.from_registry("unused")))
    bundled = tmp_path / "python" / "rapport"
    assert (bundled / "__init__.py").is_file()
    assert (bundled / "settings.py").is_file()
    assert not list(bundled.rglob("__pycache__"))


def test_a_failed_pip_install_fails_the_synth_instead_of_falling_back_to_docker(tmp_path: Path) -> None:
    pip_that_fails = shutil.which("false")
    assert pip_that_fails
    bundling = PipLayerBundling(requirements=[], package_dir=PACKAGE_DIR, python=pip_that_fails)
    with pytest.raises(RuntimeError, match="Bundling the core layer failed"):
        bundling.try_bundle(str(tmp_path), cdk.BundlingOptions(image=cdk.DockerImage.from_registry("unused")))
