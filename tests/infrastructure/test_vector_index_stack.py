"""The vector index in the template: domain security, the index custom resource, access, the engine refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk.assertions import Template

from infra.constructs.vector_index import INDEX_NAME
from infra.naming import name_base
from tests.infrastructure.conftest import (
    Synthesized,
    actions_of,
    as_list,
    function_by_service,
    only,
    policy_statements_of,
    rapport_functions,
    resources,
    synthesize,
)

pytestmark = pytest.mark.infrastructure

SEARCHING_SERVICES = ("rapport-api", "rapport-ingest", "rapport-indexer", "rapport-pipeline-store")


# `<base>-<first group of the stack id's UUID>`: new for every stack created, so never a destroyed stack's name.
STACK_SUFFIX = {
    "Fn::Select": [0, {"Fn::Split": ["-", {"Fn::Select": [2, {"Fn::Split": ["/", {"Ref": "AWS::StackId"}]}]}]}]
}


def stack_derived_name(base: str) -> dict[str, Any]:
    return {"Fn::Join": ["", [f"{base}-", STACK_SUFFIX]]}


def role_arn_of(function: dict[str, Any]) -> dict[str, Any]:
    return {"Fn::GetAtt": [function["Properties"]["Role"]["Fn::GetAtt"][0], "Arn"]}


# --- the managed domain (default) ------------------------------------------------------------------------------------


def test_the_domain_encrypts_at_rest_with_its_key_between_nodes_and_in_transit(template: Template) -> None:
    _, domain = only(template, "AWS::OpenSearchService::Domain")
    properties = domain["Properties"]
    assert properties["EncryptionAtRestOptions"]["Enabled"] is True
    key_id = properties["EncryptionAtRestOptions"]["KmsKeyId"]["Ref"]
    assert resources(template, "AWS::KMS::Key")[key_id]["Properties"]["EnableKeyRotation"] is True
    assert properties["NodeToNodeEncryptionOptions"] == {"Enabled": True}
    assert properties["DomainEndpointOptions"]["EnforceHTTPS"] is True
    assert properties["DomainEndpointOptions"]["TLSSecurityPolicy"].startswith("Policy-Min-TLS-1-2")


def test_fine_grained_access_has_the_setup_role_as_its_only_master_and_no_internal_users(template: Template) -> None:
    _, domain = only(template, "AWS::OpenSearchService::Domain")
    security = domain["Properties"]["AdvancedSecurityOptions"]
    assert security["Enabled"] is True
    assert security["InternalUserDatabaseEnabled"] is False
    _, setup = function_by_service(template, "rapport-index-setup")
    assert security["MasterUserOptions"] == {"MasterUserARN": role_arn_of(setup)}


def test_the_access_policy_admits_signed_requests_of_this_account_only(template: Template) -> None:
    _, domain = only(template, "AWS::OpenSearchService::Domain")
    (statement,) = domain["Properties"]["AccessPolicies"]["Statement"]
    assert statement["Effect"] == "Allow"
    principal = json.dumps(statement["Principal"])
    assert '"*"' not in principal and "AWS::AccountId" in principal and ":root" in principal


def test_the_prod_domain_spans_three_zones_with_dedicated_masters_and_logs_slow_queries(template: Template) -> None:
    _, domain = only(template, "AWS::OpenSearchService::Domain")
    properties = domain["Properties"]
    assert properties["DomainName"] == stack_derived_name("rapporttest")
    cluster = properties["ClusterConfig"]
    assert cluster["InstanceCount"] == 3 and cluster["InstanceType"] == "r7g.large.search"
    assert cluster["ZoneAwarenessEnabled"] is True and cluster["ZoneAwarenessConfig"] == {"AvailabilityZoneCount": 3}
    assert cluster["DedicatedMasterEnabled"] is True and cluster["DedicatedMasterCount"] == 3
    assert cluster["MultiAZWithStandbyEnabled"] is False
    assert properties["EBSOptions"]["VolumeType"] == "gp3"
    published = properties["LogPublishingOptions"]
    assert {"SEARCH_SLOW_LOGS", "INDEX_SLOW_LOGS", "ES_APPLICATION_LOGS"} <= set(published)
    assert all(option["Enabled"] for option in published.values())


def test_the_k_nn_index_is_created_by_a_custom_resource_with_every_searching_role(template: Template) -> None:
    _, index = only(template, "Custom::RapportVectorIndex")
    properties = index["Properties"]
    assert properties["IndexName"] == INDEX_NAME
    assert properties["Dimensions"] == 1536
    for service in (*SEARCHING_SERVICES, "rapport-index-setup"):
        assert role_arn_of(function_by_service(template, service)[1]) in properties["BackendRoles"], service
    # And the provider runs the setup function: the core's prepare_index, not a hand-made index
    setup_id, _ = function_by_service(template, "rapport-index-setup")
    provider_id = properties["ServiceToken"]["Fn::GetAtt"][0]
    provider = resources(template, "AWS::Lambda::Function")[provider_id]
    assert setup_id in json.dumps(provider["Properties"]["Environment"])


def test_searching_functions_reach_only_the_memory_index_with_http_verbs(template: Template) -> None:
    domain_id, _ = only(template, "AWS::OpenSearchService::Domain")
    index_paths = [
        {"Fn::Join": ["", [{"Fn::GetAtt": [domain_id, "Arn"]}, f"/{INDEX_NAME}"]]},
        {"Fn::Join": ["", [{"Fn::GetAtt": [domain_id, "Arn"]}, f"/{INDEX_NAME}/*"]]},
    ]
    # Those that read as their tenant (through its alias: test_tenant_access.py) write documents by id only.
    tenant_reads = {"rapport-api", "rapport-ingest", "rapport-pipeline-store"}
    document_paths = [
        {"Fn::Join": ["", [{"Fn::GetAtt": [domain_id, "Arn"]}, f"/{INDEX_NAME}/_alias/rapport-t-*"]]},
        {"Fn::Join": ["", [{"Fn::GetAtt": [domain_id, "Arn"]}, f"/{INDEX_NAME}/_doc/*"]]},
    ]
    for service in SEARCHING_SERVICES:
        statements = policy_statements_of(template, function_by_service(template, service)[1])
        es_statements = [s for s in statements if actions_of([s], "es:")]
        assert es_statements, service
        for statement in es_statements:
            assert "es:*" not in as_list(statement["Action"]) and "es:ESHttp*" not in as_list(statement["Action"])
            expected = document_paths if service in tenant_reads else index_paths
            assert as_list(statement["Resource"]) == expected, service
        variables = function_by_service(template, service)[1]["Properties"]["Environment"]["Variables"]
        assert variables["RAPPORT_OPENSEARCH_INDEX"] == INDEX_NAME


def test_functions_that_do_not_search_have_no_index_access(template: Template) -> None:
    for function in rapport_functions(template).values():
        variables = function["Properties"]["Environment"]["Variables"]
        service = variables["POWERTOOLS_SERVICE_NAME"]
        statements = policy_statements_of(template, function)
        if service in ("rapport-authorizer", "rapport-webhooks", "rapport-pipeline-filter"):
            assert not actions_of(statements, "es:"), service


# --- the engine -------------------------------------------------------------------------------------------------


def test_another_engine_than_a_domain_is_refused_with_the_reason(tmp_path: Any) -> None:
    # A Serverless vector collection assigns its own document ids: the index's upserts and deletes by id, its
    # multi-get and an erasure's guarantee cannot hold there, so the option is refused rather than half-supported.
    with pytest.raises(ValueError, match=r"vectorBackend='opensearch-serverless'.*own document ids"):
        synthesize(tmp_path, vectorBackend="opensearch-serverless")


def test_names_derived_from_the_stack_fit_the_services_limits() -> None:
    suffix = "-1a2b3c4d"  # what the stack id's first UUID group adds
    for stack_name in ("Rapport", "Rapport-alice-experimental-branch-42", "1stack", "UPPER_and.dots"):
        domain = name_base(stack_name, 28 - len(suffix)) + suffix
        assert 3 <= len(domain) <= 28 and domain[0].isalpha() and domain == domain.lower(), domain


@pytest.mark.parametrize(
    ("profile", "data_nodes", "zones", "masters"),
    [("dev", 1, None, 0), ("staging", 2, 2, 0), ("prod", 3, 3, 3)],
)
def test_each_environment_profile_sizes_the_domain(
    tmp_path: Any, profile: str, data_nodes: int, zones: int | None, masters: int
) -> None:
    synthesized = synthesize(tmp_path, profile=profile)
    assert synthesized.nag_findings == []
    _, domain = only(synthesized.template, "AWS::OpenSearchService::Domain")
    cluster = domain["Properties"]["ClusterConfig"]
    assert cluster["InstanceCount"] == data_nodes
    assert cluster.get("ZoneAwarenessConfig", {}).get("AvailabilityZoneCount") == zones
    assert cluster.get("ZoneAwarenessEnabled", False) is (zones is not None)
    assert cluster.get("DedicatedMasterCount", 0) == masters
    # The stage is named after the environment, and every resource is tagged with it for cost allocation
    _, stage = only(synthesized.template, "AWS::ApiGateway::Stage")
    assert stage["Properties"]["StageName"] == profile
    assert {"Key": "rapport:environment", "Value": profile} in domain["Properties"]["Tags"]
    # Only a profile without masters (or a second zone) acknowledges their absence, and says which profile it is
    reasons = acknowledgement_reasons(synthesized, "AwsSolutions-OS4")
    assert (reasons == []) is (masters > 0)
    assert all(profile in reason for reason in reasons)


def test_multi_az_with_standby_on_request(tmp_path: Any) -> None:
    synthesized = synthesize(tmp_path, profile="prod", opensearchStandby="true")
    _, domain = only(synthesized.template, "AWS::OpenSearchService::Domain")
    cluster = domain["Properties"]["ClusterConfig"]
    assert cluster["MultiAZWithStandbyEnabled"] is True and cluster["ZoneAwarenessConfig"]["AvailabilityZoneCount"] == 3
    assert synthesized.nag_findings == []


def test_standby_without_masters_is_refused_with_the_fix(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="opensearchMasterNodes=3"):
        synthesize(tmp_path, profile="staging", opensearchStandby="true")


def test_fixed_physical_names_carry_the_stack_id(tmp_path: Any) -> None:
    # Given the resources that need a name of their own (the domain, WAF's log group), in two stacks
    for stack_name in ("RapportA", "RapportB"):
        template = synthesize(tmp_path / stack_name, stack_name=stack_name, profile="dev").template
        _, domain = only(template, "AWS::OpenSearchService::Domain")
        # Then each is the stack's name plus its id's suffix: two stacks, or a redeploy after `cdk destroy` beside a
        # retained domain, never ask for a name that is taken
        assert domain["Properties"]["DomainName"] == stack_derived_name(stack_name.lower())
        waf_logs = [
            group["Properties"]["LogGroupName"]
            for group in resources(template, "AWS::Logs::LogGroup").values()
            if "aws-waf-logs-" in json.dumps(group["Properties"].get("LogGroupName", ""))
        ]
        assert len(waf_logs) == 1 and "AWS::StackId" in json.dumps(waf_logs[0])


def acknowledgement_reasons(synthesized: Synthesized, rule: str) -> list[str]:
    return [
        reason
        for construct in synthesized.stack.node.find_all()
        for entry in construct.node.metadata
        if entry.type == "aws:cdk:acknowledged-rules"
        for acknowledged, reason in entry.data.items()
        if acknowledged.removeprefix("Annotation::") == rule
    ]
