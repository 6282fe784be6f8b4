"""The synthesized stack: table shape, Lambda defaults, authorizer coverage, least privilege, cdk-nag, cfn-lint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from rapport.adapters.dynamodb import keys as keys
from tests.infrastructure.conftest import (
    Synthesized,
    as_list,
    function_by_service,
    memory_table,
    only,
    policy_statements_of,
    rapport_functions,
    resources,
)

pytestmark = pytest.mark.infrastructure

DYNAMODB_WRITE_ACTIONS = {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}
RAPPORT_SERVICES = {
    "rapport-api",
    "rapport-authorizer",
    "rapport-webhooks",
    "rapport-ingest",
    "rapport-indexer",
    "rapport-index-setup",
}
# Routes that are public to the API-key authorizer: the liveness probe, the ingest routes (signed requests), and the
# memory explorer's static files.
EXPLORER_ROUTES = {("GET", "/explorer"), ("GET", "/explorer/{proxy+}")}
PUBLIC_ROUTES = {("GET", "/v1/health"), ("POST", "/v1/ingest/slack"), ("POST", "/v1/ingest/webhook"), *EXPLORER_ROUTES}


def dynamodb_statements(statements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in statements if any(a.startswith("dynamodb:") for a in as_list(s["Action"]))]


# --- the table ---------------------------------------------------------------------------------------------------


def test_table_has_the_single_table_key_schema_and_billing(template: Template) -> None:
    _, table = memory_table(template)
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
    _, table = memory_table(template)
    indexes = {index["IndexName"]: index for index in table["Properties"]["GlobalSecondaryIndexes"]}
    assert sorted(indexes) == ["gsi1", "gsi2", "gsi3"]
    for name, index in indexes.items():
        assert index["KeySchema"] == [
            {"AttributeName": f"{name}pk", "KeyType": "HASH"},
            {"AttributeName": f"{name}sk", "KeyType": "RANGE"},
        ]
    # The memory indexes carry every attribute a listed memory needs, the adapter's list exactly, but not the
    # embedding (most of the item: it would triple a memory write); the API-key index carries its small items whole.
    for name in ("gsi1", "gsi2"):
        projection = indexes[name]["Projection"]
        assert projection["ProjectionType"] == "INCLUDE"
        assert projection["NonKeyAttributes"] == list(keys.MEMORY_INDEX_ATTRIBUTES)
        assert "embedding" not in projection["NonKeyAttributes"]
    assert indexes["gsi3"]["Projection"] == {"ProjectionType": "ALL"}


def test_table_is_recoverable_encrypted_with_a_rotating_cmk_and_streams_both_images(template: Template) -> None:
    _, table = memory_table(template)
    key_logical_id = table["Properties"]["SSESpecification"]["KMSMasterKeyId"]["Fn::GetAtt"][0]
    assert key_logical_id.startswith("MemoryTableKey")
    assert resources(template, "AWS::KMS::Key")[key_logical_id]["Properties"]["EnableKeyRotation"] is True
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
    for logical_id, key in resources(template, "AWS::KMS::Key").items():
        # Data keys are retained with the data; the alarm topic's key encrypts nothing that outlives a message.
        assert key["DeletionPolicy"] == ("Delete" if logical_id.startswith("MonitoringKey") else "Retain"), logical_id


def test_dev_stacks_can_opt_out_of_retaining_data(variant: Synthesized) -> None:
    # Given a dev stack synthesized with retainData=false (as `-c retainData=false` passes it: a string)
    # Then destroying the stack removes the table and the keys, and nothing blocks the delete
    variant.template.has_resource(
        "AWS::DynamoDB::Table",
        {"DeletionPolicy": "Delete", "Properties": Match.object_like({"DeletionProtectionEnabled": False})},
    )
    for logical_id, key in resources(variant.template, "AWS::KMS::Key").items():
        assert key["DeletionPolicy"] == "Delete", logical_id


# --- the functions ------------------------------------------------------------------------------------------------


def test_every_function_shares_the_rapport_defaults(template: Template) -> None:
    layer_logical_id, layer = only(template, "AWS::Lambda::LayerVersion")
    assert layer["Properties"]["CompatibleRuntimes"] == ["python3.12"]
    assert layer["Properties"]["CompatibleArchitectures"] == ["arm64"]
    functions = rapport_functions(template)
    services = {f["Properties"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"] for f in functions.values()}
    assert services >= RAPPORT_SERVICES
    for logical_id, function in functions.items():
        properties = function["Properties"]
        assert properties["Architectures"] == ["arm64"], logical_id
        assert properties["Runtime"] == "python3.12", logical_id
        assert properties["TracingConfig"] == {"Mode": "Active"}, logical_id
        assert {"Ref": layer_logical_id} in properties["Layers"], logical_id
        assert properties["LoggingConfig"]["LogFormat"] == "JSON", logical_id
        variables = properties["Environment"]["Variables"]
        assert variables["RAPPORT_STORE"] == "dynamodb", logical_id
        assert variables["RAPPORT_TABLE_NAME"] == {"Ref": memory_table(template)[0]}, logical_id


def test_function_logs_are_kept_one_month(template: Template) -> None:
    log_groups = resources(template, "AWS::Logs::LogGroup")
    for function in resources(template, "AWS::Lambda::Function").values():
        log_group_id = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        assert log_groups[log_group_id]["Properties"]["RetentionInDays"] == 30


def test_functions_that_search_get_the_index_and_the_openai_key_by_reference(template: Template) -> None:
    domain_id, _ = only(template, "AWS::OpenSearchService::Domain")
    secret_id, _ = only(template, "AWS::SecretsManager::Secret")
    for service in ("rapport-api", "rapport-ingest"):
        variables = function_by_service(template, service)[1]["Properties"]["Environment"]["Variables"]
        assert variables["RAPPORT_VECTOR_BACKEND"] == "opensearch"
        assert variables["RAPPORT_OPENSEARCH_URL"] == {
            "Fn::Join": ["", ["https://", {"Fn::GetAtt": [domain_id, "DomainEndpoint"]}]]
        }
        assert variables["RAPPORT_EMBEDDING_DIMENSIONS"] == "1536"
        assert variables["RAPPORT_EMBEDDER"] == "openai"
        # The key's ARN only: the value is read from Secrets Manager at cold start, never put in the environment
        assert variables["RAPPORT_OPENAI_API_KEY_SECRET_ARN"] == {"Ref": secret_id}
        assert not [name for name in variables if "OPENAI_API_KEY" in name and not name.endswith("_SECRET_ARN")]


def test_an_existing_openai_secret_and_other_dimensions_come_from_context(variant: Synthesized) -> None:
    assert not resources(variant.template, "AWS::SecretsManager::Secret")
    variables = function_by_service(variant.template, "rapport-api")[1]["Properties"]["Environment"]["Variables"]
    assert variables["RAPPORT_OPENAI_API_KEY_SECRET_ARN"].startswith("arn:aws:secretsmanager:eu-west-1:")
    assert variables["RAPPORT_EMBEDDING_DIMENSIONS"] == "512"


def test_the_authorizer_and_the_webhooks_function_hold_no_model_or_index_access(template: Template) -> None:
    for service in ("rapport-authorizer", "rapport-webhooks"):
        _, function = function_by_service(template, service)
        variables = function["Properties"]["Environment"]["Variables"]
        assert "RAPPORT_OPENAI_API_KEY_SECRET_ARN" not in variables and "RAPPORT_OPENSEARCH_URL" not in variables
        actions = {a for s in policy_statements_of(template, function) for a in as_list(s["Action"])}
        assert not {a for a in actions if a.startswith(("es:", "states:"))}, service


# --- the API ------------------------------------------------------------------------------------------------------


def test_authorizer_is_a_cached_request_authorizer_on_the_authorization_header(template: Template) -> None:
    _, authorizer = only(template, "AWS::ApiGateway::Authorizer")
    properties = authorizer["Properties"]
    assert properties["Type"] == "REQUEST"
    assert properties["IdentitySource"] == "method.request.header.Authorization"
    assert properties["AuthorizerResultTtlInSeconds"] == 300


def test_every_method_but_health_and_the_signed_ingest_routes_requires_the_authorizer(template: Template) -> None:
    authorizer_id, _ = only(template, "AWS::ApiGateway::Authorizer")
    paths = _resource_paths(template)
    methods = {
        (method["Properties"]["HttpMethod"], paths[method["Properties"]["ResourceId"]["Ref"]]): method["Properties"]
        for method in resources(template, "AWS::ApiGateway::Method").values()
    }
    assert ("ANY", "/v1/{proxy+}") in methods
    assert set(methods) >= PUBLIC_ROUTES
    for (http_method, path), properties in methods.items():
        if (http_method, path) in PUBLIC_ROUTES:
            assert properties["AuthorizationType"] == "NONE"
            assert "AuthorizerId" not in properties
        else:
            assert properties["AuthorizationType"] == "CUSTOM", (http_method, path)
            assert properties["AuthorizerId"] == {"Ref": authorizer_id}, (http_method, path)


def test_the_explorer_is_read_only_and_answered_by_the_api_function(template: Template) -> None:
    api_id, _ = function_by_service(template, "rapport-api")
    paths = _resource_paths(template)
    explorer = [
        method["Properties"]
        for method in resources(template, "AWS::ApiGateway::Method").values()
        if paths[method["Properties"]["ResourceId"]["Ref"]].startswith("/explorer")
    ]
    # GET only: no other method reaches the function under /explorer, with a key or without
    assert {(m["HttpMethod"], paths[m["ResourceId"]["Ref"]]) for m in explorer} == EXPLORER_ROUTES
    for method in explorer:
        assert method["AuthorizationType"] == "NONE" and "AuthorizerId" not in method
        assert api_id in json.dumps(method["Integration"]["Uri"])


def test_the_ingest_routes_go_to_the_webhooks_function_and_nothing_else_does(template: Template) -> None:
    webhooks_id, _ = function_by_service(template, "rapport-webhooks")
    api_id, _ = function_by_service(template, "rapport-api")
    paths = _resource_paths(template)
    for method in resources(template, "AWS::ApiGateway::Method").values():
        properties = method["Properties"]
        path = paths[properties["ResourceId"]["Ref"]]
        target = json.dumps(properties["Integration"]["Uri"])
        if path.startswith("/v1/ingest/"):
            assert webhooks_id in target and api_id not in target, path
        else:
            assert webhooks_id not in target, path


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


def test_cors_is_off_by_default_and_follows_context(template: Template, variant: Synthesized) -> None:
    # Given no corsOrigins, there is no preflight method at all
    methods = resources(template, "AWS::ApiGateway::Method").values()
    assert not [m for m in methods if m["Properties"]["HttpMethod"] == "OPTIONS"]
    # Given origins on the command line, preflights answer with them and need no API key
    options = [
        m["Properties"]
        for m in resources(variant.template, "AWS::ApiGateway::Method").values()
        if m["Properties"]["HttpMethod"] == "OPTIONS"
    ]
    assert options
    for method in options:
        assert method["AuthorizationType"] == "NONE"
        origin = method["Integration"]["IntegrationResponses"][0]["ResponseParameters"]
        assert origin["method.response.header.Access-Control-Allow-Origin"] == "'https://app.example'"


# --- least privilege ------------------------------------------------------------------------------------------------


def test_the_api_function_reaches_the_table_only_as_its_callers_tenant(template: Template) -> None:
    # Its own role holds no item access: every request signs as the tenant access role's session
    # (tests/infrastructure/test_tenant_access.py checks that role's fences).
    statements = policy_statements_of(template, function_by_service(template, "rapport-api")[1])
    assert not dynamodb_statements(statements)
    assert any("sts:TagSession" in as_list(s["Action"]) for s in statements)


def test_authorizer_can_read_the_table_but_never_write(template: Template) -> None:
    table_logical_id, _ = memory_table(template)
    table_arn = {"Fn::GetAtt": [table_logical_id, "Arn"]}
    statements = policy_statements_of(template, function_by_service(template, "rapport-authorizer")[1])
    table_statements = dynamodb_statements(statements)
    granted = {action for statement in table_statements for action in as_list(statement["Action"])}
    assert granted == {"dynamodb:Query"}
    assert not granted & DYNAMODB_WRITE_ACTIONS
    for statement in table_statements:
        assert as_list(statement["Resource"]) == [{"Fn::Join": ["", [table_arn, f"/index/{keys.GSI_BY_API_KEY}"]]}]
    kms_actions = {a for s in statements for a in as_list(s["Action"]) if a.startswith("kms:")}
    assert kms_actions <= {"kms:Decrypt", "kms:DescribeKey"}


def test_only_actions_without_resource_level_permissions_use_a_wildcard(template: Template) -> None:
    unscopable = {"xray:PutTraceSegments", "xray:PutTelemetryRecords", "dynamodb:ListStreams"}
    for function in rapport_functions(template).values():
        for statement in policy_statements_of(template, function):
            if "*" in as_list(statement["Resource"]):
                assert set(as_list(statement["Action"])) <= unscopable, statement


# --- policy checks ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["default", "variant"])
def test_cdk_nag_aws_solutions_finds_nothing_unacknowledged(which: str, request: pytest.FixtureRequest) -> None:
    synthesized: Synthesized = request.getfixturevalue(which)
    assert synthesized.nag_findings == [], "cdk-nag findings without an acknowledgement"


def test_every_acknowledgement_carries_a_reason(default: Synthesized) -> None:
    reasons: dict[str, str] = {}
    for construct in default.stack.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == "aws:cdk:acknowledged-rules":
                reasons.update({f"{construct.node.path} {rule}": reason for rule, reason in entry.data.items()})
    assert reasons, "no acknowledgement found: the check below would pass vacuously"
    # A reason says why the finding does not apply here, in a sentence, not a placeholder.
    assert {where: reason for where, reason in reasons.items() if len(reason.split()) < 8} == {}


@pytest.mark.parametrize("which", ["default", "variant"])
def test_cfn_lint_finds_no_errors(which: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    from cfnlint.api import ManualArgs, lint_file

    synthesized: Synthesized = request.getfixturevalue(which)
    template_file = tmp_path / "rapport.template.json"
    template_file.write_text(json.dumps(synthesized.json))
    matches = lint_file(template_file, config=ManualArgs(regions=["us-east-1", "eu-west-1"]))
    errors = [f"{m.rule.id} {m.message} ({m.path})" for m in matches if m.rule.id.startswith("E")]
    assert errors == []


def test_the_api_url_output_is_the_stage_base_the_v1_paths_follow(template: Template) -> None:
    # The same kind of base `rapport serve` prints and the OpenAPI document names as its server: no /v1, no slash.
    (output,) = template.find_outputs("ApiUrl").values()
    parts = output["Value"]["Fn::Join"][1]
    assert parts[0] == "https://" and "/v1" not in json.dumps(parts)
    (stage_id, _) = only(template, "AWS::ApiGateway::Stage")
    assert parts[-2:] == ["/", {"Ref": stage_id}]
    # The memory explorer's page on the same stage, by its file name
    (explorer,) = template.find_outputs("ExplorerUrl").values()
    assert explorer["Value"]["Fn::Join"][1] == [*parts, "/explorer/index.html"]
