"""AWS Backup for the memory table: daily and monthly recovery points in a vault of their own, beside point-in-time
recovery (35 days, in place), so a table deleted or corrupted past PITR's window still has a copy."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_backup as backup
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_events as events
from aws_cdk import aws_kms as kms
from constructs import Construct

DAILY_RETENTION = cdk.Duration.days(35)
MONTHLY_RETENTION = cdk.Duration.days(365)


class TableBackup(Construct):
    """A KMS-encrypted vault (retained with the data unless retainData=false) and one plan with two rules."""

    def __init__(self, scope: Construct, construct_id: str, *, table: dynamodb.ITable, retain_data: bool) -> None:
        super().__init__(scope, construct_id)
        removal_policy = cdk.RemovalPolicy.RETAIN if retain_data else cdk.RemovalPolicy.DESTROY
        self.key = kms.Key(
            self,
            "Key",
            description="Encrypts the Rapport memory table's backups",
            enable_key_rotation=True,
            removal_policy=removal_policy,
        )
        self.vault = backup.BackupVault(self, "Vault", encryption_key=self.key, removal_policy=removal_policy)
        self.plan = backup.BackupPlan(self, "Plan", backup_vault=self.vault)
        self.plan.add_rule(
            backup.BackupPlanRule(
                rule_name="Daily",
                schedule_expression=events.Schedule.cron(hour="3", minute="0"),
                delete_after=DAILY_RETENTION,
            )
        )
        self.plan.add_rule(
            backup.BackupPlanRule(
                rule_name="Monthly",
                schedule_expression=events.Schedule.cron(day="1", hour="4", minute="0"),
                move_to_cold_storage_after=cdk.Duration.days(30),
                delete_after=MONTHLY_RETENTION,
            )
        )
        self.selection = self.plan.add_selection("Table", resources=[backup.BackupResource.from_dynamo_db_table(table)])
        cdk.Validations.of(self.selection).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSBackupServiceRolePolicyForBackup]",
                reason=(
                    "The role AWS Backup assumes to take the table's recovery points: this AWS-managed policy is the "
                    "documented one, kept current by AWS as Backup changes; only the Backup service assumes it."
                ),
            )
        )
