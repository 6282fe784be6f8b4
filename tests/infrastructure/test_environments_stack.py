"""Environments in the template: the custom domain, the permissions boundary, cost tags, CORS for the API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.infrastructure.conftest import Synthesized, function_by_service, memory_table, only, resources, synthesize

pytestmark = pytest.mark.infrastructure

BOUNDARY = "arn:aws:iam::123456789012:policy/platform-boundary"


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    """A prod stack as a platform team deploys it: its own name in its hosted zone, a boundary, its cost tags."""
    return synthesize(
        tmp_path_factory.mktemp("production"),
        profile="prod",
        apiDomainName="memory.example.com",
        hostedZoneId="Z0123456789ABCDEFGHIJ",
        hostedZoneName="example.com",
        permissionsBoundaryArn=BOUNDARY,
        tags="cost-center=ml-42,team=memory",
        corsOrigins="https://app.example.com",
    )


def test_a_custom_domain_gets_a_dns_validated_certificate_an_alias_and_the_stage(production: Synthesized) -> None:
    template = production.template
    assert production.nag_findings == []
    certificate_id, certificate = only(template, "AWS::CertificateManager::Certificate")
    assert certificate["Properties"]["DomainName"] == "memory.example.com"
    assert certificate["Properties"]["ValidationMethod"] == "DNS"
    _, domain = only(template, "AWS::ApiGateway::DomainName")
    assert domain["Properties"]["DomainName"] == "memory.example.com"
    assert domain["Properties"]["RegionalCertificateArn"] == {"Ref": certificate_id}
    assert domain["Properties"]["SecurityPolicy"] == "TLS_1_2"
    stage_id, _ = only(template, "AWS::ApiGateway::Stage")
    _, mapping = only(template, "AWS::ApiGateway::BasePathMapping")
    assert mapping["Properties"]["Stage"] == {"Ref": stage_id}
    _, record = only(template, "AWS::Route53::RecordSet")
    assert record["Properties"]["HostedZoneId"] == "Z0123456789ABCDEFGHIJ" and record["Properties"]["Type"] == "A"


def test_a_custom_domain_with_a_certificate_arn_creates_no_certificate(tmp_path: Path) -> None:
    arn = "arn:aws:acm:us-east-1:123456789012:certificate/0b1c2d3e-aaaa-bbbb-cccc-000000000000"
    template = synthesize(tmp_path, profile="dev", apiDomainName="api.example.org", apiCertificateArn=arn).template
    assert resources(template, "AWS::CertificateManager::Certificate") == {}
    _, domain = only(template, "AWS::ApiGateway::DomainName")
    assert domain["Properties"]["RegionalCertificateArn"] == arn
    assert resources(template, "AWS::Route53::RecordSet") == {}


def test_a_custom_domain_without_a_certificate_or_zone_is_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="apiCertificateArn"):
        synthesize(tmp_path, profile="dev", apiDomainName="api.example.org")


def test_every_role_carries_the_permissions_boundary(production: Synthesized) -> None:
    roles = resources(production.template, "AWS::IAM::Role")
    assert roles
    assert {
        logical_id for logical_id, role in roles.items() if role["Properties"].get("PermissionsBoundary") != BOUNDARY
    } == set()


def test_no_boundary_unless_asked(default: Synthesized) -> None:
    roles = resources(default.template, "AWS::IAM::Role")
    assert not [r for r in roles.values() if "PermissionsBoundary" in r["Properties"]]


def test_resources_carry_the_environment_stack_and_cost_tags(production: Synthesized) -> None:
    _, table = memory_table(production.template)
    tags = {tag["Key"]: tag["Value"] for tag in table["Properties"]["Tags"]}
    assert tags["rapport:environment"] == "prod" and tags["rapport:stack"] == "RapportTest"
    assert tags["cost-center"] == "ml-42" and tags["team"] == "memory"


def test_malformed_tags_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="key=value"):
        synthesize(tmp_path, profile="dev", tags="costcenter")


def test_cors_origins_reach_the_api_function_and_api_gateway_errors(production: Synthesized) -> None:
    template = production.template
    _, api = function_by_service(template, "rapport-api")
    assert api["Properties"]["Environment"]["Variables"]["RAPPORT_CORS_ORIGINS"] == "https://app.example.com"
    # The authorizer's 401 and throttling's 429 never reach the function: API Gateway adds the header itself
    responses = {
        r["Properties"]["ResponseType"]: r["Properties"]["ResponseParameters"]
        for r in resources(template, "AWS::ApiGateway::GatewayResponse").values()
    }
    assert set(responses) == {"DEFAULT_4XX", "DEFAULT_5XX"}
    for parameters in responses.values():
        assert parameters["gatewayresponse.header.Access-Control-Allow-Origin"] == "'https://app.example.com'"


def test_no_cors_unless_origins_are_configured(default: Synthesized) -> None:
    _, api = function_by_service(default.template, "rapport-api")
    assert "RAPPORT_CORS_ORIGINS" not in api["Properties"]["Environment"]["Variables"]
    assert resources(default.template, "AWS::ApiGateway::GatewayResponse") == {}


def test_an_unknown_environment_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'qa'"):
        synthesize(tmp_path, profile="qa")


def test_cfn_lint_finds_no_errors_in_the_production_shape(production: Synthesized, tmp_path: Path) -> None:
    from cfnlint.api import ManualArgs, lint_file

    template_file = tmp_path / "production.template.json"
    template_file.write_text(json.dumps(production.json))
    matches = lint_file(template_file, config=ManualArgs(regions=["us-east-1", "eu-west-1"]))
    assert [f"{m.rule.id} {m.message} ({m.path})" for m in matches if m.rule.id.startswith("E")] == []
