"""The per-person keys: a KMS key that wraps each end user's data key, and the table that holds the wrapped keys,
which has no point-in-time recovery, no backup plan and no stream on purpose, so deleting a person's item (their
erasure) leaves no copy of their key and every copy of their content elsewhere unreadable (docs/security.md,
"Per-person keys")."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from infra.constructs.function import RapportFunction
from infra.constructs.tenant_access import TENANT
from rapport.adapters.dynamodb.keys import PARTITION_KEY, TENANT_PREFIX
from rapport.adapters.dynamodb.person_keys import PERSON_PREFIX

# What a tenant's session may touch in the keys table: its own people's keys (`TENANT#{t}#PERSON#{hash}`).
TENANT_PERSON_KEYS = [f"{TENANT_PREFIX}{TENANT}#{PERSON_PREFIX}*"]
# The encryption context every data key is made and unwrapped with; the tenant's session may only name its tenant.
CONTEXT_TENANT = "kms:EncryptionContext:tenant"
CONTEXT_KEYS = ["tenant", "user_hash"]


class PersonKeys(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, retain_data: bool) -> None:
        super().__init__(scope, construct_id)
        removal_policy = cdk.RemovalPolicy.RETAIN if retain_data else cdk.RemovalPolicy.DESTROY
        # One key for the stack, not one per tenant: the encryption context binds each wrapped key to its tenant
        # and person (a key made for one does not unwrap as another's), and the tenant access role may name only
        # its own tenant in it, which is the fence a key per tenant would give, without a key to create (and pay
        # for, $1 a month) at each tenant's first request.
        self.key = kms.Key(
            self,
            "Key",
            description="Wraps the data key of each Rapport end user (per-person content encryption)",
            enable_key_rotation=True,
            removal_policy=removal_policy,
        )
        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=dynamodb.Attribute(name=PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            # The items are KMS-wrapped keys already; the table's own encryption is the service default.
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=False
            ),
            deletion_protection=retain_data,
            removal_policy=removal_policy,
        )
        cdk.Validations.of(self.table).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-DDB3",
                reason=(
                    "Point-in-time recovery is off on purpose: this table holds each end user's wrapped data key, and "
                    "an erasure must destroy it for good. A recovery point would keep the key, and with it every "
                    "copy of the person's content in the memory table's own backups. Losing this table loses all "
                    "content, so it has deletion protection instead (retainData)."
                ),
            )
        )

    def environment(self) -> dict[str, str]:
        return {"RAPPORT_PERSON_KEYS_TABLE": self.table.table_name, "RAPPORT_PERSON_KEYS_KMS_KEY_ID": self.key.key_arn}

    def admit_tenant_role(self, role: iam.IRole) -> None:
        """The tenant access role: its own tenant's people's keys only, read, made and destroyed (erasure)."""
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="TenantPersonKeysOnly",
                actions=["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem"],
                resources=[self.table.table_arn],
                conditions={"ForAllValues:StringLike": {"dynamodb:LeadingKeys": TENANT_PERSON_KEYS}},
            )
        )
        role.add_to_principal_policy(
            iam.PolicyStatement(
                sid="TenantDataKeysOnly",
                actions=["kms:GenerateDataKey", "kms:Decrypt"],
                resources=[self.key.key_arn],
                conditions={
                    "StringEquals": {CONTEXT_TENANT: TENANT},
                    "ForAllValues:StringEquals": {"kms:EncryptionContextKeys": CONTEXT_KEYS},
                },
            )
        )

    def grant(self, function: RapportFunction, *, make: bool) -> None:
        """A function off the request path (its own role, every tenant): read people's keys, and with `make` create
        a key for a person who has none yet. Never delete one: only an erasure does, on the tenant's session."""
        actions = ["dynamodb:GetItem", *(["dynamodb:PutItem"] if make else [])]
        function.role.add_to_principal_policy(iam.PolicyStatement(actions=actions, resources=[self.table.table_arn]))
        kms_actions = ["kms:Decrypt", *(["kms:GenerateDataKey"] if make else [])]
        function.role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=kms_actions,
                resources=[self.key.key_arn],
                conditions={"ForAllValues:StringEquals": {"kms:EncryptionContextKeys": CONTEXT_KEYS}},
            )
        )
