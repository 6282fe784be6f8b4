"""Tenancy below the application, as synthesized: the tenant access role's fences, who may assume it, and no Scan
(nor any item access of their own) on the request path's roles."""

from __future__ import annotations

from typing import Any

from aws_cdk.assertions import Template

from infra.constructs.tenant_access import TENANT_LEADING_KEYS
from rapport.adapters.dynamodb import keys
from rapport.domain.models import Domain
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

TENANT_SCOPED = (
    "rapport-api",
    "rapport-ingest",
    "rapport-pipeline-record",
    "rapport-pipeline-extract-user",
    "rapport-pipeline-extract-relational",
    "rapport-pipeline-store",
)
ITEM_ACTIONS = {
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
}


def tenant_role(template: Template) -> tuple[str, dict[str, Any]]:
    (found,) = [
        (logical_id, role)
        for logical_id, role in resources(template, "AWS::IAM::Role").items()
        if logical_id.startswith("TenantAccessRole")
    ]
    return found


def tenant_role_statements(template: Template) -> list[dict[str, Any]]:
    logical_id, _ = tenant_role(template)
    return [
        statement
        for policy in resources(template, "AWS::IAM::Policy").values()
        if {"Ref": logical_id} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def by_sid(statements: list[dict[str, Any]], sid: str) -> dict[str, Any]:
    (found,) = [s for s in statements if s.get("Sid") == sid]
    return found


def all_role_statements(template: Template) -> list[dict[str, Any]]:
    return [
        statement
        for policy in resources(template, "AWS::IAM::Policy").values()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_no_role_of_the_stack_may_scan_the_table(default: Synthesized, variant: Synthesized) -> None:
    # grant_read_data and grant_read_write_data both grant Scan; every grant here names its actions instead.
    for synthesized in (default, variant):
        for statement in all_role_statements(synthesized.template):
            actions = set(as_list(statement["Action"]))
            assert not {"dynamodb:Scan", "dynamodb:*", "dynamodb:PartiQLSelect"} & actions, statement


def test_the_tenant_role_admits_only_the_tagged_tenants_partitions(template: Template) -> None:
    statement = by_sid(tenant_role_statements(template), "TenantPartitionsOnly")
    assert set(as_list(statement["Action"])) == ITEM_ACTIONS
    leading = statement["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]
    assert (
        leading
        == TENANT_LEADING_KEYS
        == [
            "TENANT#${aws:PrincipalTag/tenant}",
            "TENANT#${aws:PrincipalTag/tenant}#*",
            "AUDIT#${aws:PrincipalTag/tenant}",
            "AUDIT#${aws:PrincipalTag/tenant}#*",
        ]
    )
    assert statement["Condition"]["Null"] == {"aws:PrincipalTag/tenant": "false"}
    # The table and the memory indexes; the API-key index (gsi3, partitioned by key hash) is not among them.
    table_logical_id, _ = memory_table(template)
    table_arn = {"Fn::GetAtt": [table_logical_id, "Arn"]}
    assert as_list(statement["Resource"]) == [
        table_arn,
        {"Fn::Join": ["", [table_arn, f"/index/{keys.GSI_BY_DOMAIN}"]]},
        {"Fn::Join": ["", [table_arn, f"/index/{keys.GSI_BY_TYPE}"]]},
    ]


def test_every_partition_form_of_the_data_model_lies_under_the_tenant_fence() -> None:
    # Each key builder's output for tenant "acme" matches one of the role's patterns with the tag set to "acme";
    # another tenant's ("acme2", a prefix sharer) matches none.
    import fnmatch

    def fenced(partition: str, tenant: str) -> bool:
        patterns = [p.replace("${aws:PrincipalTag/tenant}", tenant) for p in TENANT_LEADING_KEYS]
        return any(fnmatch.fnmatchcase(partition, p) for p in patterns)

    partitions = [
        keys.tenant_partition("acme"),
        keys.user_partition("acme", "u1"),
        keys.audit_partition("acme"),
        keys.domain_partition("acme", "u1", Domain.USER),
        keys.type_partition("acme", "u1", "fact"),
    ]
    assert all(fenced(p, "acme") for p in partitions)
    assert not any(fenced(p, "acme2") or fenced(p, "acm") for p in partitions)
    assert not fenced(keys.api_key_lookup_partition("abc"), "acme")
    assert not fenced(keys.TENANT_REGISTRY_PARTITION, "acme")


def test_the_registry_of_tenants_is_put_only_with_its_four_attributes(template: Template) -> None:
    statement = by_sid(tenant_role_statements(template), "RegistryEntryPutOnly")
    assert as_list(statement["Action"]) == ["dynamodb:PutItem"]
    condition = statement["Condition"]["ForAllValues:StringEquals"]
    assert condition["dynamodb:LeadingKeys"] == [keys.TENANT_REGISTRY_PARTITION]
    assert condition["dynamodb:Attributes"] == [keys.PARTITION_KEY, keys.SORT_KEY, "entity", "tenant_id"]
    assert statement["Condition"]["StringEqualsIfExists"] == {"dynamodb:ReturnValues": "NONE"}


def test_only_the_tenant_scoped_functions_may_assume_it_and_only_with_both_tags(template: Template) -> None:
    logical_id, role = tenant_role(template)
    (trust,) = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert set(trust["Action"]) == {"sts:AssumeRole", "sts:TagSession"}
    assert trust["Condition"]["StringLike"] == {"aws:RequestTag/tenant": "?*", "aws:RequestTag/tenant_digest": "?*"}
    assert trust["Condition"]["ForAllValues:StringEquals"] == {"aws:TagKeys": ["tenant", "tenant_digest"]}
    principals = {p["Fn::GetAtt"][0] for p in as_list(trust["Principal"]["AWS"])}
    expected = {function_by_service(template, s)[1]["Properties"]["Role"]["Fn::GetAtt"][0] for s in TENANT_SCOPED}
    assert principals == expected
    role_arn = {"Fn::GetAtt": [logical_id, "Arn"]}
    for service in TENANT_SCOPED:
        _, function = function_by_service(template, service)
        assert function["Properties"]["Environment"]["Variables"]["RAPPORT_TENANT_ACCESS_ROLE_ARN"] == role_arn
        statements = policy_statements_of(template, function)
        assume = [s for s in statements if "sts:AssumeRole" in as_list(s["Action"])]
        assert assume and all(s["Resource"] == role_arn for s in assume)


def test_tenant_scoped_functions_hold_no_item_access_of_their_own(template: Template) -> None:
    for service in TENANT_SCOPED:
        statements = policy_statements_of(template, function_by_service(template, service)[1])
        granted = {a for s in statements for a in as_list(s["Action"]) if a.startswith("dynamodb:")}
        assert not granted & ITEM_ACTIONS, (service, granted)


def test_the_authorizer_may_only_query_the_api_key_index(template: Template) -> None:
    table_logical_id, _ = memory_table(template)
    statements = policy_statements_of(template, function_by_service(template, "rapport-authorizer")[1])
    table_statements = [s for s in statements if any(a.startswith("dynamodb:") for a in as_list(s["Action"]))]
    assert table_statements == [
        {
            "Action": "dynamodb:Query",
            "Effect": "Allow",
            "Resource": {"Fn::Join": ["", [{"Fn::GetAtt": [table_logical_id, "Arn"]}, "/index/gsi3"]]},
        }
    ]


def test_functions_off_the_request_path_name_their_actions(template: Template) -> None:
    for logical_id, function in rapport_functions(template).items():
        for statement in policy_statements_of(template, function):
            actions = {a for a in as_list(statement["Action"]) if a.startswith("dynamodb:")}
            assert actions <= ITEM_ACTIONS | {
                "dynamodb:DescribeStream",
                "dynamodb:GetRecords",
                "dynamodb:GetShardIterator",
                "dynamodb:ListStreams",
            }, (logical_id, actions)


def test_the_tenant_session_reaches_its_own_alias_only(template: Template) -> None:
    statement = by_sid(tenant_role_statements(template), "TenantAliasOnly")
    assert set(as_list(statement["Action"])) == {"es:ESHttpGet", "es:ESHttpPost"}
    paths = [resource["Fn::Join"][1][-1] for resource in as_list(statement["Resource"])]
    assert sorted(paths) == sorted(
        f"/rapport-t-${{aws:PrincipalTag/tenant_digest}}/{operation}"
        for operation in ("_search", "_msearch", "_count", "_mget", "_delete_by_query")
    )
    # The domain refuses multi-document requests that name their indexes in the body, which IAM's path check
    # would not see.
    _, domain = only(template, "AWS::OpenSearchService::Domain")
    assert domain["Properties"]["AdvancedOptions"]["rest.action.multi.allow_explicit_index"] == "false"


def test_tenant_scoped_functions_cannot_read_the_index_as_a_whole(template: Template) -> None:
    for service in ("rapport-api", "rapport-ingest", "rapport-pipeline-store"):
        statements = policy_statements_of(template, function_by_service(template, service)[1])
        search = [s for s in statements if any(a.startswith("es:") for a in as_list(s["Action"]))]
        assert search, service
        for statement in search:
            assert set(as_list(statement["Action"])) == {"es:ESHttpPut", "es:ESHttpDelete"}
            paths = [resource["Fn::Join"][1][-1] for resource in as_list(statement["Resource"])]
            assert sorted(paths) == ["/rapport-memories/_alias/rapport-t-*", "/rapport-memories/_doc/*"]


def test_the_index_setup_maps_the_tenant_role_to_the_alias_role(template: Template) -> None:
    logical_id, _ = tenant_role(template)
    (index,) = resources(template, "Custom::RapportVectorIndex").values()
    assert index["Properties"]["TenantRoles"] == [{"Fn::GetAtt": [logical_id, "Arn"]}]
