"""The per-person keys as synthesized: their table keeps no copy (no PITR, no backup plan, no stream), the tenant
access role reaches its own tenant's people's keys only, and each function off the request path gets what it
needs of them (the indexer reads, never writes or deletes)."""

from __future__ import annotations

import fnmatch
import json
from typing import Any

import pytest
from aws_cdk.assertions import Template

from infra.constructs.person_keys import TENANT_PERSON_KEYS
from rapport.adapters.dynamodb.person_keys import person_key_partition
from rapport.domain.scope import Scope
from tests.infrastructure.conftest import (
    Synthesized,
    as_list,
    function_by_service,
    policy_statements_of,
    rapport_functions,
    resources,
)
from tests.infrastructure.test_tenant_access import tenant_role_statements

pytestmark = pytest.mark.infrastructure


def keys_table(template: Template) -> tuple[str, dict[str, Any]]:
    (found,) = [(i, t) for i, t in resources(template, "AWS::DynamoDB::Table").items() if i.startswith("PersonKeys")]
    return found


def keys_table_statements(template: Template, statements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    table_id, _ = keys_table(template)
    arn = {"Fn::GetAtt": [table_id, "Arn"]}
    return [s for s in statements if arn in as_list(s["Resource"])]


def test_the_keys_table_keeps_no_copy_of_a_key(template: Template) -> None:
    table_id, table = keys_table(template)
    properties = table["Properties"]
    assert properties["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    assert properties.get("PointInTimeRecoverySpecification", {}).get("PointInTimeRecoveryEnabled") is not True
    assert "StreamSpecification" not in properties
    assert properties["DeletionProtectionEnabled"] is True  # losing it loses every person's content
    # The backup plan selects the memory table and nothing else
    for selection in resources(template, "AWS::Backup::BackupSelection").values():
        assert table_id not in json.dumps(selection)


def test_the_pitr_exception_is_acknowledged_with_its_reason(default: Synthesized) -> None:
    assert not [f for f in default.nag_findings if "PersonKeys" in f]


def test_the_tenant_role_reaches_its_own_tenants_people_only(template: Template) -> None:
    statements = tenant_role_statements(template)
    (table_statement,) = keys_table_statements(template, statements)
    assert set(as_list(table_statement["Action"])) == {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"}
    leading = table_statement["Condition"]["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]
    assert leading == TENANT_PERSON_KEYS
    patterns = [p.replace("${aws:PrincipalTag/tenant}", "acme") for p in leading]
    assert any(fnmatch.fnmatchcase(person_key_partition("acme", Scope("acme", "u").user_hash), p) for p in patterns)
    assert not any(fnmatch.fnmatchcase(person_key_partition("acme2", "sha256:x"), p) for p in patterns)
    (kms_statement,) = [s for s in statements if s.get("Sid") == "TenantDataKeysOnly"]
    assert set(as_list(kms_statement["Action"])) == {"kms:GenerateDataKey", "kms:Decrypt"}
    assert kms_statement["Condition"]["StringEquals"] == {"kms:EncryptionContext:tenant": "${aws:PrincipalTag/tenant}"}


def test_each_function_gets_what_it_needs_of_the_keys(template: Template) -> None:
    def access(service: str) -> set[str]:
        _, function = function_by_service(template, service)
        found = keys_table_statements(template, policy_statements_of(template, function))
        return {action for s in found for action in as_list(s["Action"])}

    # The request path signs as the tenant: its own role reaches no key
    assert access("rapport-api") == set() and access("rapport-ingest") == set()
    # The indexer opens what the stream carries; enrichment and the jobs also seal what they write
    assert access("rapport-indexer") == {"dynamodb:GetItem"}
    assert access("rapport-enrichment") == {"dynamodb:GetItem", "dynamodb:PutItem"}
    # Tenant items only: no key at all
    assert access("rapport-webhooks") == set() and access("rapport-authorizer") == set()
    # Nobody but the tenant's session (an erasure) deletes a key
    for function in rapport_functions(template).values():
        found = keys_table_statements(template, policy_statements_of(template, function))
        assert not any("dynamodb:DeleteItem" in as_list(s["Action"]) for s in found)
    # ...and the functions that seal or open know where the keys are
    for service in ("rapport-api", "rapport-ingest", "rapport-indexer", "rapport-enrichment"):
        variables = function_by_service(template, service)[1]["Properties"]["Environment"]["Variables"]
        assert {"RAPPORT_PERSON_KEYS_TABLE", "RAPPORT_PERSON_KEYS_KMS_KEY_ID"} <= variables.keys(), service
