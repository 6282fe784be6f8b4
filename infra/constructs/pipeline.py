"""`IngestionPipeline`: the Express state machine record → Parallel(extract user, extract relational) → filter →
store, one thin Lambda per step (five entry points of functions/pipeline/handler.py), retries with backoff and
jitter, and a dead-letter queue for what still fails."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aws_cdk as cdk
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

if TYPE_CHECKING:
    from infra.constructs.tenant_access import TenantAccess

from infra.constructs.function import RapportFunction
from infra.constructs.queues import dead_letter_queue
from infra.nag import acknowledge_last_queue, acknowledge_no_dead_letter_queue
from rapport.adapters.dynamodb.keys import INTERACTION_PREFIX
from rapport.settings import openai_budget_within


class TableAccess:
    NONE = "none"
    READ = "read"
    WRITE = "write"


@dataclass(frozen=True)
class Step:
    name: str  # the state's name
    entry: str  # the step's key: its service name (rapport-pipeline-<entry>) and `functions[entry]`
    description: str
    table: str  # TableAccess
    timeout_seconds: int
    handler: str | None = None  # its entry point in functions/pipeline/handler.py, when not `entry`
    openai_retries: int = 2  # retries of one OpenAI call inside the function (record calls none: its budget is 0)

    @property
    def entry_point(self) -> str:
        return f"handler.{self.handler or self.entry}"


# Express executions end after 5 minutes, and an execution timeout is not catchable: it would skip the dead-letter
# queue. So the worst case must fit: per step, attempts x function timeout + the waits between them. The functions'
# own OpenAI retries are cut to fit their timeout (`openai_budget_within`: 3 attempts x 9.6 s + 2 x 2 s of waits + 5 s
# of headroom <= 38 s), and upstream errors get one
# retry here: 2 x 10 (record) + 3 x 2 x 38 (extract, filter, store) + 4 x 4 s of waits = 264 s < 300 s.
# tests/infrastructure/test_pipeline_state_machine.py recomputes this from the template.
STEPS: tuple[Step, ...] = (
    Step(
        "Record", "record", "Ingestion pipeline: check the interaction and open the run", TableAccess.WRITE, 10, None, 0
    ),
    Step("ExtractUser", "extract_user", "Ingestion pipeline: extract user memories", TableAccess.READ, 38),
    Step(
        "ExtractRelational",
        "extract_relational",
        "Ingestion pipeline: extract relational memories",
        TableAccess.READ,
        38,
    ),
    # `filter` would shadow the builtin in the handler module.
    Step(
        "Filter",
        "filter",
        "Ingestion pipeline: the constructive filter",
        TableAccess.NONE,
        38,
        handler="constructive_filter",
    ),
    Step("Store", "store", "Ingestion pipeline: embed, de-duplicate, link and store", TableAccess.WRITE, 38),
)
EXECUTION_TIMEOUT = cdk.Duration.minutes(5)  # the Express maximum

# Errors worth another attempt. Lambda's own (throttling, a busy service) clear within seconds; the core's
# UpstreamError (the model or embeddings still failing after the function's retries) and StorageError (DynamoDB
# or the index) may clear in a few. Anything else (a missing interaction, bad input) fails the same way again.
LAMBDA_TRANSIENT_ERRORS = [
    "Lambda.ClientExecutionTimeoutException",
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
]
UPSTREAM_ERRORS = ["UpstreamError", "StorageError"]
FAILED_ERROR = "IngestionFailed"
# Not `rapport-pipeline-…`: that prefix names the state machine's steps.
STARTER_SERVICE = "rapport-starter"
STARTER_TIMEOUT_SECONDS = 30
STARTER_STREAM_RETRIES = 10


class IngestionPipeline(Construct):
    """The pipeline's functions, state machine, dead-letter queue and the stream starter; `writers` (the API, the
    ingest consumer) record interactions, and the table's stream starts their runs."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        core_layer: lambda_.ILayerVersion,
        table: dynamodb.Table,
        log_removal_policy: cdk.RemovalPolicy,
        environment: Mapping[str, str],
        writers: Sequence[RapportFunction] = (),
        openai_api_key_secret_arn: str = "",
        tenant_access: TenantAccess | None = None,
        tracing: bool,
    ) -> None:
        """`tenant_access`: the steps that touch the table act for the run's tenant through it, with no table
        access of their own (each task's input names its tenant). `tracing`: X-Ray on the state machine and the
        functions."""
        super().__init__(scope, construct_id)
        self.functions: dict[str, RapportFunction] = {}
        secret = (
            secretsmanager.Secret.from_secret_complete_arn(self, "OpenAiApiKey", openai_api_key_secret_arn)
            if openai_api_key_secret_arn
            else None
        )
        for step in STEPS:
            function = RapportFunction(
                self,
                f"{step.name}Function",
                # One asset for the five: the same module, a different entry point and service name each.
                entry="pipeline",
                handler=step.entry_point,
                service_name=f"rapport-pipeline-{step.entry.replace('_', '-')}",
                description=step.description,
                core_layer=core_layer,
                table=table,
                log_removal_policy=log_removal_policy,
                tracing=tracing,
                timeout=cdk.Duration.seconds(step.timeout_seconds),
                # The steps never start another pipeline, whatever the API's settings say.
                environment={
                    **environment,
                    **openai_budget_within(step.timeout_seconds, max_retries=step.openai_retries).environment(),
                    "RAPPORT_PIPELINE": "off",
                },
            )
            if step.table != TableAccess.NONE and tenant_access is not None:
                tenant_access.admit(function)
            elif step.table != TableAccess.NONE:
                function.grant_table_access(table, read_only=step.table == TableAccess.READ)
            if secret is not None:
                secret.grant_read(function.function)
            self.functions[step.entry] = function

        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            # SQS's longest retention: time to notice, fix and redrive (docs/pipeline.md says how).
            retention_period=cdk.Duration.days(14),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
        )
        self.log_group = logs.LogGroup(
            self, "ExecutionLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=log_removal_policy
        )
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_type=sfn.StateMachineType.EXPRESS,
            definition_body=sfn.DefinitionBody.from_chainable(self._definition()),
            timeout=EXECUTION_TIMEOUT,
            tracing_enabled=tracing,
            logs=sfn.LogOptions(
                destination=self.log_group,
                level=sfn.LogLevel.ALL,
                # State inputs and outputs carry end users' memories: log the transitions, not the data.
                include_execution_data=False,
            ),
        )
        self.starter = self._starter(core_layer, table, log_removal_policy, tracing=tracing)
        for writer in writers:
            # The writers only record: the table's stream is their outbox, and the starter takes it from there.
            writer.add_environment({"RAPPORT_PIPELINE": "stream"})
        self._acknowledge_findings(tracing=tracing)

    def _starter(
        self,
        core_layer: lambda_.ILayerVersion,
        table: dynamodb.Table,
        log_removal_policy: cdk.RemovalPolicy,
        *,
        tracing: bool,
    ) -> RapportFunction:
        """The stream's consumer that starts an execution per new history item; a failed start (after the SDK's
        retries) is parked in the dead-letter queue, and only a queue that refuses it fails the record, which the
        stream retries (bisecting the batch), then hands to its own failure queue as a pointer."""
        starter = RapportFunction(
            self,
            "StarterFunction",
            entry="pipeline_starter",
            service_name=STARTER_SERVICE,
            description="Rapport pipeline starter: the table's stream of new interactions to executions",
            core_layer=core_layer,
            table=table,
            log_removal_policy=log_removal_policy,
            tracing=tracing,
            timeout=cdk.Duration.seconds(STARTER_TIMEOUT_SECONDS),
            environment={
                "RAPPORT_PIPELINE": "step_functions",
                "RAPPORT_PIPELINE_STATE_MACHINE_ARN": self.state_machine.state_machine_arn,
                "RAPPORT_PIPELINE_DEAD_LETTER_QUEUE_URL": self.dead_letter_queue.queue_url,
            },
        )
        self.state_machine.grant_start_execution(starter.function)
        self.dead_letter_queue.grant_send_messages(starter.function)
        self.starter_failures = dead_letter_queue(
            self, "StarterFailureQueue", receives="the pipeline starter (stream batch pointers, no content)"
        )
        starter.function.add_event_source(
            sources.DynamoEventSource(
                table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=100,
                bisect_batch_on_error=True,
                report_batch_item_failures=True,
                retry_attempts=STARTER_STREAM_RETRIES,
                max_record_age=cdk.Duration.hours(24),
                on_failure=sources.SqsDlq(self.starter_failures),
                filters=[
                    lambda_.FilterCriteria.filter(
                        {
                            "eventName": lambda_.FilterRule.is_equal("INSERT"),
                            "dynamodb": {"Keys": {"sk": {"S": lambda_.FilterRule.begins_with(INTERACTION_PREFIX)}}},
                        }
                    )
                ],
            )
        )
        acknowledge_no_dead_letter_queue(
            starter.function,
            invoked_by=(
                "The table's stream invokes it synchronously through its event source mapping; a batch that still "
                "fails after the mapping's retries has its pointers sent to the mapping's on-failure queue"
            ),
        )
        return starter

    def _task(self, step: str, result_path: str | None) -> tasks.LambdaInvoke:
        spec = next(s for s in STEPS if s.entry == step)
        task = tasks.LambdaInvoke(
            self,
            spec.name,
            lambda_function=self.functions[step].function,
            payload_response_only=True,  # the function's answer is the step's result, no invocation envelope
            retry_on_service_exceptions=False,  # the retries below say exactly which errors and how
            result_path=result_path,
            task_timeout=sfn.Timeout.duration(cdk.Duration.seconds(spec.timeout_seconds + 5)),
        )
        task.add_retry(
            errors=LAMBDA_TRANSIENT_ERRORS,
            interval=cdk.Duration.seconds(1),
            max_attempts=4,
            backoff_rate=2,
            max_delay=cdk.Duration.seconds(8),
            jitter_strategy=sfn.JitterType.FULL,
        )
        task.add_retry(
            errors=UPSTREAM_ERRORS,
            interval=cdk.Duration.seconds(2),
            max_attempts=1,
            backoff_rate=2,
            max_delay=cdk.Duration.seconds(4),
            jitter_strategy=sfn.JitterType.FULL,
        )
        return task

    def _definition(self) -> sfn.IChainable:
        dead_letter = tasks.SqsSendMessage(
            self,
            "SendToDeadLetterQueue",
            queue=self.dead_letter_queue,
            # Enough to redrive: the request as the execution got it, what failed, and where to read more.
            message_body=sfn.TaskInput.from_object(
                {
                    "request": {
                        "tenant_id": sfn.JsonPath.string_at("$.tenant_id"),
                        "user_id": sfn.JsonPath.string_at("$.user_id"),
                        "interaction_id": sfn.JsonPath.string_at("$.interaction_id"),
                    },
                    "failure": sfn.JsonPath.object_at("$.failure"),
                    "execution_id": sfn.JsonPath.string_at("$$.Execution.Id"),
                }
            ),
            result_path=sfn.JsonPath.DISCARD,
        ).next(sfn.Fail(self, "Failed", error=FAILED_ERROR, cause="parked in the dead-letter queue"))

        record = self._task("record", "$.recorded")
        extract = sfn.Parallel(self, "Extract", result_path="$.extracted")
        extract.branch(self._task("extract_user", None))
        extract.branch(self._task("extract_relational", None))
        constructive_filter = self._task("filter", "$.filtered")
        store = self._task("store", "$.stored")
        for state in (record, extract, constructive_filter, store):
            state.add_catch(dead_letter, errors=["States.ALL"], result_path="$.failure")
        return record.next(extract).next(constructive_filter).next(store).next(sfn.Succeed(self, "Stored"))

    def _acknowledge_findings(self, *, tracing: bool) -> None:
        cdk.Validations.of(self.dead_letter_queue).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-SQS3",
                reason="This queue is the pipeline's dead-letter queue; a dead-letter queue of its own would be a "
                "queue nobody reads.",
            )
        )
        acknowledge_last_queue(self.dead_letter_queue, receives="the pipeline's runs (the state machine's catch)")
        for function in self.functions.values():
            acknowledge_no_dead_letter_queue(
                function.function,
                invoked_by=(
                    "Step Functions invokes it synchronously (a LambdaInvoke task) and gets its error back: the "
                    "state machine retries it, then parks the run in the pipeline's dead-letter queue"
                ),
            )
        if not tracing:
            reason = (
                "Tracing is off for this stack (the `tracing` context value, off by default in dev only); the "
                "execution log group still records every state transition."
            )
            cdk.Validations.of(self.state_machine).acknowledge(
                *(
                    cdk.Acknowledgment(id=rule, reason=reason)
                    for rule in ("AwsSolutions-SF2", "Serverless-StepFunctionStateMachineXray")
                )
            )
        cdk.Validations.of(self.state_machine).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-IAM5[Resource::*]",
                reason="Log delivery to CloudWatch (logs:CreateLogDelivery and friends) and X-Ray tracing support no "
                "resource-level permissions; every other statement names its resources.",
            ),
            *(
                cdk.Acknowledgment(
                    id=f"AwsSolutions-IAM5[Resource::<{self._logical_id(function.function)}.Arn>:*]",
                    reason="`:*` under this one function's ARN: its versions and aliases, which Step Functions may "
                    "invoke; the grant names no other function.",
                )
                for function in self.functions.values()
            ),
        )

    @staticmethod
    def _logical_id(function: lambda_.Function) -> str:
        resource = function.node.default_child
        assert isinstance(resource, cdk.CfnElement)
        return cdk.Stack.of(function).get_logical_id(resource)
