"""`RapportFunction`: the defaults every Rapport Lambda shares, so no function is configured by copy and paste."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.constructs.core_layer import ARCHITECTURE, RUNTIME
from rapport.adapters.dynamodb.keys import GSI_BY_API_KEY

PROJECT_ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS_DIR = PROJECT_ROOT / "functions"
METRICS_NAMESPACE = "Rapport"
CODE_EXCLUDES = ["__pycache__", "*.pyc"]
# What the store sends (docs/data-model.md, "Requests per call"): single items, batches and transactions (a
# transaction's actions are authorized as these), queries. No Scan.
READ_ACTIONS = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query"]
WRITE_ACTIONS = [
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:BatchWriteItem",
    "dynamodb:ConditionCheckItem",
]


class RapportFunction(Construct):
    """A Lambda from `functions/<entry>/handler.py`: arm64, Python 3.12, JSON logs, the core layer, X-Ray if `tracing`.

    `handler` names the entry point in that module: functions sharing one module (the pipeline's steps) share one
    asset and differ by entry point and service name.

    Its role starts empty apart from writing its own log group (no AWSLambdaBasicExecutionRole, whose
    `logs:*` on every group is broader than needed); callers add what it needs with `grant_*`.
    `reserved_concurrency` caps a function whose runaway would hurt (a flood of events against OpenAI or the
    table); `on_failure` keeps what an asynchronous invocation could not process after its retries. With `tracing`
    off the function records no trace and `POWERTOOLS_TRACE_DISABLED` keeps the X-Ray SDK out of its cold start.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        entry: str,
        service_name: str,
        handler: str = "handler.handler",
        description: str,
        core_layer: lambda_.ILayerVersion,
        table: dynamodb.ITable,
        log_removal_policy: cdk.RemovalPolicy,
        tracing: bool,
        memory_size: int = 512,
        timeout: cdk.Duration | None = None,
        environment: Mapping[str, str] | None = None,
        reserved_concurrency: int | None = None,
        on_failure: lambda_.IDestination | None = None,
        retry_attempts: int | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.service_name = service_name
        self.log_group = logs.LogGroup(
            self,
            "Logs",
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=log_removal_policy,
        )
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"Runs the {service_name} function",
        )
        self.log_group.grant_write(self.role)

        self.function = lambda_.Function(
            self,
            "Function",
            description=description,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            # The handler's dependencies all live in the core layer, so its folder ships as is.
            code=lambda_.Code.from_asset(str(FUNCTIONS_DIR / entry), exclude=CODE_EXCLUDES),
            handler=handler,
            layers=[core_layer],
            role=self.role,
            memory_size=memory_size,
            timeout=timeout or cdk.Duration.seconds(10),
            tracing=lambda_.Tracing.ACTIVE if tracing else lambda_.Tracing.DISABLED,
            logging_format=lambda_.LoggingFormat.JSON,
            log_group=self.log_group,
            reserved_concurrent_executions=reserved_concurrency or None,
            on_failure=on_failure,
            retry_attempts=retry_attempts,
            environment={
                "POWERTOOLS_SERVICE_NAME": service_name,
                "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
                "RAPPORT_STORE": "dynamodb",
                "RAPPORT_TABLE_NAME": table.table_name,
                **({} if tracing else {"POWERTOOLS_TRACE_DISABLED": "true"}),
                **(environment or {}),
            },
        )
        self._acknowledge_serverless_findings(tracing=tracing, on_failure=on_failure, retry_attempts=retry_attempts)
        cdk.Validations.of(self.role).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-IAM5[Resource::*]",
                reason=(
                    "Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, and a stream consumer "
                    "dynamodb:ListStreams: none supports resource-level permissions. Every other statement of this "
                    "role names its resources."
                ),
            )
        )
        cdk.Validations.of(self.function).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-L1",
                reason=(
                    "Pinned to python3.12 on purpose: the core layer is built for CPython 3.12 wheels; moving to a "
                    "newer runtime means rebuilding the layer for it, which is a deliberate upgrade, not a default."
                ),
            )
        )

    def _acknowledge_serverless_findings(
        self, *, tracing: bool, on_failure: lambda_.IDestination | None, retry_attempts: int | None
    ) -> None:
        """What this construct alone knows; how the function is invoked (and so whether a dead-letter queue could
        ever receive anything) is acknowledged where it is wired to its caller."""
        acknowledgments = [
            cdk.Acknowledgment(
                id="Serverless-LambdaLatestVersion",
                reason=(
                    "pinned to 3.12, the version the layer lock is resolved for: requirements.lock and the core "
                    "layer's wheels are CPython 3.12 builds, so a newer runtime is a deliberate rebuild of both."
                ),
            )
        ]
        if not tracing:
            acknowledgments.append(
                cdk.Acknowledgment(
                    id="Serverless-LambdaTracing",
                    reason=(
                        "Tracing is off for this stack (the `tracing` context value, off by default in dev only): "
                        "no traces are recorded or billed, and the X-Ray SDK stays out of the cold start."
                    ),
                )
            )
        if on_failure is not None:
            retries = 2 if retry_attempts is None else retry_attempts
            acknowledgments.append(
                cdk.Acknowledgment(
                    id="Serverless-LambdaDLQ",
                    reason=(
                        f"Invoked asynchronously: what still fails after Lambda's {retries} retries goes to its "
                        "on-failure destination, which keeps the event with the error; a DeadLetterConfig would be "
                        "a second, poorer copy of the same failures."
                    ),
                )
            )
        cdk.Validations.of(self.function).acknowledge(*acknowledgments)

    def grant_api_key_lookup(self, table: dynamodb.Table) -> None:
        """The authorizer's only access: a query of the API-key index by a key's hash (it runs before any tenant is
        known, so it cannot act for one), and decryption of what it reads."""
        self.role.add_to_principal_policy(
            iam.PolicyStatement(actions=["dynamodb:Query"], resources=[f"{table.table_arn}/index/{GSI_BY_API_KEY}"])
        )
        if table.encryption_key is not None:
            table.encryption_key.grant_decrypt(self.role)

    def add_environment(self, environment: Mapping[str, str]) -> None:
        for name, value in environment.items():
            self.function.add_environment(name, value)

    def grant_table_access(self, table: dynamodb.Table, *, read_only: bool) -> None:
        """Read (or read and write) items of `table` and its indexes, and use its KMS key for that. Explicit
        actions, never `grant_read_data` and the like: those grant `dynamodb:Scan`, which no function needs (the
        only scan, `rapport reindex`, runs with an operator's credentials)."""
        actions = READ_ACTIONS if read_only else [*READ_ACTIONS, *WRITE_ACTIONS]
        self.role.add_to_principal_policy(
            iam.PolicyStatement(actions=actions, resources=[table.table_arn, f"{table.table_arn}/index/*"])
        )
        if table.encryption_key is not None:
            if read_only:
                table.encryption_key.grant_decrypt(self.role)
            else:
                table.encryption_key.grant_encrypt_decrypt(self.role)

        table_resource = table.node.default_child
        if not isinstance(table_resource, cdk.CfnElement):
            raise TypeError("grant_table_access needs a table defined in this app, not an imported one")
        table_logical_id = cdk.Stack.of(table).get_logical_id(table_resource)
        acknowledgments = [
            cdk.Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{table_logical_id}.Arn>/index/*]",
                reason="`index/*` under this one table's ARN: its own GSIs (gsi1-gsi3), which the store queries.",
            )
        ]
        if not read_only:
            acknowledgments += [
                cdk.Acknowledgment(
                    id=f"AwsSolutions-IAM5[Action::{action}]",
                    reason=(
                        "Writing items of a table encrypted with a customer-managed key needs kms:GenerateDataKey* "
                        "and kms:ReEncrypt* on that key; the statement's only resource is the table's key."
                    ),
                )
                for action in ("kms:GenerateDataKey*", "kms:ReEncrypt*")
            ]
        cdk.Validations.of(self.role).acknowledge(*acknowledgments)
