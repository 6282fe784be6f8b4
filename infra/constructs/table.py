"""The single DynamoDB table: source of truth for every tenant's memories, history, API keys and audit events."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

from rapport.adapters.dynamodb.keys import (
    GSI_KEYS,
    MEMORY_INDEX_ATTRIBUTES,
    PARTITION_KEY,
    PROJECTED_INDEXES,
    SORT_KEY,
    TTL_ATTRIBUTE,
)

# One spelling of the table's keys and of what the memory indexes carry: the DynamoDB adapter's (the CDK app runs
# in the project's environment). The memory indexes (gsi1, gsi2) leave the embedding out: it is most of a memory
# item, and no listing returns it; gsi3 (API keys) projects ALL.


def _string_attribute(name: str) -> dynamodb.Attribute:
    return dynamodb.Attribute(name=name, type=dynamodb.AttributeType.STRING)


class MemoryTable(Construct):
    """The table, its customer-managed KMS key, its stream and its three overloaded GSIs."""

    def __init__(self, scope: Construct, construct_id: str, *, retain_data: bool) -> None:
        super().__init__(scope, construct_id)
        # Retained by default: losing this table loses every tenant's memories. Dev stacks opt out (retainData=false).
        removal_policy = cdk.RemovalPolicy.RETAIN if retain_data else cdk.RemovalPolicy.DESTROY

        self.key = kms.Key(
            self,
            "Key",
            description="Encrypts the Rapport memory table, its stream and backups",
            enable_key_rotation=True,
            removal_policy=removal_policy,
        )
        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=_string_attribute(PARTITION_KEY),
            sort_key=_string_attribute(SORT_KEY),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            encryption=dynamodb.TableEncryption.CUSTOMER_MANAGED,
            encryption_key=self.key,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=TTL_ATTRIBUTE,
            # Old and new images: the vector-index sync and the audit trail need both sides of a change.
            stream=dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
            deletion_protection=retain_data,
            removal_policy=removal_policy,
        )
        for index_name, (partition, sort) in GSI_KEYS.items():
            projected = index_name in PROJECTED_INDEXES
            self.table.add_global_secondary_index(
                index_name=index_name,
                partition_key=_string_attribute(partition),
                sort_key=_string_attribute(sort),
                projection_type=dynamodb.ProjectionType.INCLUDE if projected else dynamodb.ProjectionType.ALL,
                non_key_attributes=list(MEMORY_INDEX_ATTRIBUTES) if projected else None,
            )
