"""The tenant access role: what a function acting for one tenant assumes, tagged with that tenant, so that DynamoDB
and OpenSearch themselves refuse any other tenant's data (docs/security.md, "Isolation model").

Its policies fence on the session's tags (`${aws:PrincipalTag/tenant}`): `dynamodb:LeadingKeys` admits the tenant's
partitions only, and the index admits the tenant's filtered alias only. A function is admitted with `admit(fn)`: it
may assume the role and tag the session, and its own role keeps no access to the table's items.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
import jsii
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from infra.constructs.function import READ_ACTIONS, WRITE_ACTIONS, RapportFunction
from rapport.adapters.dynamodb.keys import (
    AUDIT_PREFIX,
    GSI_BY_DOMAIN,
    GSI_BY_TYPE,
    PARTITION_KEY,
    SORT_KEY,
    TENANT_PREFIX,
    TENANT_REGISTRY_PARTITION,
)
from rapport.tenancy import TENANT_DIGEST_TAG, TENANT_TAG

TENANT = f"${{aws:PrincipalTag/{TENANT_TAG}}}"
TENANT_DIGEST = f"${{aws:PrincipalTag/{TENANT_DIGEST_TAG}}}"
# Every partition a tenant's requests touch, as docs/data-model.md lists them: its end users' (`TENANT#{t}#USER#{u}`
# and the memory indexes' `…#DOMAIN#…`, `…#TYPE#…`), its own (`TENANT#{t}`: users, API keys, plans, idempotency
# records, ingest claims, webhooks, the knowledge graph) and its audit trail (`AUDIT#{t}`, `AUDIT#{t}#…`).
TENANT_LEADING_KEYS = [
    f"{TENANT_PREFIX}{TENANT}",
    f"{TENANT_PREFIX}{TENANT}#*",
    f"{AUDIT_PREFIX}{TENANT}",
    f"{AUDIT_PREFIX}{TENANT}#*",
]
# The registry of tenants (`TENANTS` / `TENANT#{t}`) is one partition for all: a tenant's first user adds its entry.
# IAM cannot fence a sort key, so the session may only put items of exactly these attributes there, and read nothing.
REGISTRY_ATTRIBUTES = [PARTITION_KEY, SORT_KEY, "entity", "tenant_id"]
# The index paths a tenant's session may call: its alias's searches (a recall's two in one `_msearch`), counts,
# multi-gets and deletes by query.
ALIAS_OPERATIONS = ["_search", "_msearch", "_count", "_mget", "_delete_by_query"]
ALIAS_HTTP_ACTIONS = ["es:ESHttpGet", "es:ESHttpPost"]
SESSION_TAG_KEYS = [TENANT_TAG, TENANT_DIGEST_TAG]


class TenantAccess(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, table: dynamodb.Table, table_key: kms.IKey) -> None:
        super().__init__(scope, construct_id)
        self._admitted: list[RapportFunction] = []
        self.role = iam.Role(
            self,
            "Role",
            # Replaced below by the admitted functions' roles, each bound to tag its session.
            assumed_by=iam.AccountPrincipal(cdk.Stack.of(self).account),
            description="A Rapport function acting for one tenant: that tenant's items and index alias only",
            max_session_duration=cdk.Duration.hours(1),
        )
        cfn_role = self.role.node.default_child
        assert isinstance(cfn_role, iam.CfnRole)
        cfn_role.add_property_override("AssumeRolePolicyDocument", cdk.Lazy.any(_Producer(self._trust_policy)))
        table_arn = table.table_arn
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="TenantPartitionsOnly",
                actions=[*READ_ACTIONS, *WRITE_ACTIONS],
                # The table and the two memory indexes; not gsi3, the API keys by hash (the authorizer's alone).
                resources=[table_arn, f"{table_arn}/index/{GSI_BY_DOMAIN}", f"{table_arn}/index/{GSI_BY_TYPE}"],
                conditions={
                    "ForAllValues:StringLike": {"dynamodb:LeadingKeys": TENANT_LEADING_KEYS},
                    "Null": {f"aws:PrincipalTag/{TENANT_TAG}": "false"},
                },
            )
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="RegistryEntryPutOnly",
                actions=["dynamodb:PutItem"],
                resources=[table_arn],
                conditions={
                    "ForAllValues:StringEquals": {
                        "dynamodb:LeadingKeys": [TENANT_REGISTRY_PARTITION],
                        "dynamodb:Attributes": REGISTRY_ATTRIBUTES,
                    },
                    "StringEqualsIfExists": {"dynamodb:ReturnValues": "NONE"},
                    "Null": {f"aws:PrincipalTag/{TENANT_TAG}": "false"},
                },
            )
        )
        table_key.grant_encrypt_decrypt(self.role)
        cdk.Validations.of(self.role).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-IAM5[Action::kms:GenerateDataKey*]",
                reason="Items of a table encrypted with a customer-managed key; the only resource is that key.",
            ),
            cdk.Acknowledgment(
                id="AwsSolutions-IAM5[Action::kms:ReEncrypt*]",
                reason="Items of a table encrypted with a customer-managed key; the only resource is that key.",
            ),
        )

    def admit(self, function: RapportFunction) -> None:
        """`function` may assume this role with its tenant's tags (and is told its ARN)."""
        self._admitted.append(function)
        function.role.add_to_principal_policy(
            iam.PolicyStatement(actions=["sts:AssumeRole", "sts:TagSession"], resources=[self.role.role_arn])
        )
        function.add_environment({"RAPPORT_TENANT_ACCESS_ROLE_ARN": self.role.role_arn})
        cdk.Validations.of(function.role).acknowledge(
            *(
                cdk.Acknowledgment(
                    id=f"AwsSolutions-IAM5[Action::{action}]",
                    reason=(
                        "Writing to what a customer-managed key encrypts (its failure destination, the bus) needs "
                        "kms:GenerateDataKey* and kms:ReEncrypt*; each such statement's only resource is that key."
                    ),
                )
                for action in ("kms:GenerateDataKey*", "kms:ReEncrypt*")
            )
        )

    def admit_index_alias(self, domain_arn: str) -> None:
        """Reads of the tenant's own filtered alias on the domain (`rapport-t-{digest}`); the FGAC role that admits
        alias names only is mapped by the index setup."""
        alias = f"rapport-t-{TENANT_DIGEST}"
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="TenantAliasOnly",
                actions=ALIAS_HTTP_ACTIONS,
                resources=[f"{domain_arn}/{alias}/{operation}" for operation in ALIAS_OPERATIONS],
                conditions={"Null": {f"aws:PrincipalTag/{TENANT_DIGEST_TAG}": "false"}},
            )
        )

    def _trust_policy(self) -> dict[str, object]:
        return {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": [function.role.role_arn for function in self._admitted]},
                    "Action": ["sts:AssumeRole", "sts:TagSession"],
                    # A session must carry both tags, and only these: untagged, the policies above match nothing.
                    "Condition": {
                        "StringLike": {f"aws:RequestTag/{key}": "?*" for key in SESSION_TAG_KEYS},
                        "ForAllValues:StringEquals": {"aws:TagKeys": SESSION_TAG_KEYS},
                    },
                }
            ],
        }


@jsii.implements(cdk.IStableAnyProducer)
class _Producer:
    def __init__(self, produce: Callable[[], Any]) -> None:
        self._produce = produce

    def produce(self) -> Any:
        return self._produce()
