"""Monitoring: alarms into one SNS topic, each pointing at its runbook in docs/operations.md, and one dashboard."""

from __future__ import annotations

import re
from collections.abc import Sequence

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_opensearchservice as opensearch
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.constructs.function import METRICS_NAMESPACE, RapportFunction

PERIOD = cdk.Duration.minutes(5)
# Thresholds: any Lambda error or throttle, any dead letter, any failed execution is worth a look; the API alarms
# on a burst of 5xx rather than one (a single upstream hiccup is retried by clients).
API_5XX_THRESHOLD = 5
OPENSEARCH_FREE_STORAGE_MB = 4096
OPENSEARCH_JVM_PRESSURE_PERCENT = 90
# A work queue is busy by design, so its depth says nothing; its oldest message does: the nightly governance fan-out
# drains in minutes, so a message two hours old means the workers are stuck or failing before they delete it.
WORK_QUEUE_MAX_AGE = cdk.Duration.hours(2)
# Stream records expire after 24 h (and the mapping gives up on them then): an hour behind leaves a day to act.
STREAM_MAX_ITERATOR_AGE = cdk.Duration.hours(1)
# A model answer that does not validate now and then is the model's noise; several in five minutes is a change
# (a new model version, a prompt that no longer fits) that degrades every extraction.
MODEL_FALLBACK_THRESHOLD = 3
# The custom metrics the functions emit (Powertools EMF, namespace Rapport, dimension `service`).
MODEL_FALLBACKS = "ModelFallbacks"
EXTRACTING_SERVICES = ("rapport-pipeline-extract-user", "rapport-pipeline-extract-relational")
PIPELINE_STARTS_PARKED = "PipelineStartsParked"
PIPELINE_STARTER_SERVICE = "rapport-pipeline-starter"  # functions/pipeline_starter/handler.py names its metrics so

# Each alarm's runbook: a section of docs/operations.md whose heading has this anchor.
RUNBOOKS = {
    "api-5xx": "Api5xx",
    "function-errors": "<Function>Errors",
    "function-throttles": "<Function>Throttles",
    "stream-iterator-age": "<Reader>IteratorAge",
    "dead-letters": "<Queue>Depth",
    "work-queue-age": "<Queue>Age",
    "pipeline-failed": "<StateMachine>Failed",
    "pipeline-timed-out": "<StateMachine>TimedOut",
    "table-throttles": "TableThrottles",
    "search-cluster-red": "SearchClusterRed",
    "search-low-storage": "SearchLowStorage",
    "search-jvm-pressure": "SearchJvmPressure",
    "search-knn-errors": "SearchKnnErrors",
    "search-writes-blocked": "SearchWritesBlocked",
    "model-fallbacks": "ModelFallbacks",
    "pipeline-start-failures": "PipelineStartFailures",
}


def _id_of(path: str) -> str:
    """A construct id from a path, minus the stack's name: `Ingestion/DeadLetterQueue` -> `IngestionDeadLetterQueue`."""
    return re.sub(r"[^A-Za-z0-9]", "", path.split("/", 1)[-1])


class Monitoring(Construct):
    """Given what to watch; the stack passes every function, queue and state machine it holds, so a new one is
    watched without touching this file."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        functions: Sequence[RapportFunction],
        queues: Sequence[sqs.IQueue],
        work_queues: Sequence[sqs.IQueue] = (),
        state_machines: Sequence[sfn.IStateMachine],
        api: apigw.RestApi,
        table: dynamodb.ITable,
        domain: opensearch.Domain | None,
        alarm_email: str,
        stream_consumers: Sequence[RapportFunction] = (),
        runbook_url: str = "docs/operations.md",
    ) -> None:
        super().__init__(scope, construct_id)
        self.runbook_url = runbook_url
        # CloudWatch publishes to an encrypted topic only if the key lets it: the AWS-managed SNS key does not.
        key = kms.Key(
            self,
            "Key",
            description="Encrypts Rapport alarm notifications",
            enable_key_rotation=True,
            removal_policy=cdk.RemovalPolicy.DESTROY,  # it encrypts messages in flight, nothing kept
        )
        key.grant(iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*")
        self.topic = sns.Topic(self, "AlarmTopic", display_name="Rapport alarms", master_key=key, enforce_ssl=True)
        if alarm_email:
            subscription = self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
            cdk.Validations.of(subscription).acknowledge(
                cdk.Acknowledgment(
                    id="Serverless-SNSRedrivePolicy",
                    reason=(
                        "Alarm mail: an alarm whose mail SNS cannot deliver stays in ALARM in CloudWatch, and a "
                        "dead-letter queue of undelivered alarms would alarm through this same topic."
                    ),
                )
            )
        self.alarms: list[cloudwatch.Alarm] = []
        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", default_interval=cdk.Duration.hours(3))

        self._api(api)
        for function in functions:
            self._function(function)
        for queue in queues:
            self._queue(queue)
        for queue in work_queues:
            self._work_queue(queue)
        for machine in state_machines:
            self._state_machine(machine)
        for consumer in stream_consumers:
            self._stream_consumer(consumer)
        self._table(table)
        if domain is not None:
            self._domain(domain)
        self._pipeline_metrics()

    def _alarm(
        self,
        name: str,
        metric: cloudwatch.IMetric,
        threshold: float,
        description: str,
        *,
        runbook: str,
        comparison: cloudwatch.ComparisonOperator = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    ) -> cloudwatch.Alarm:
        if runbook not in RUNBOOKS:
            raise ValueError(f"alarm {name}: no runbook section {runbook!r} in docs/operations.md")
        description = f"{description}. Runbook: {self.runbook_url}#{runbook}"
        alarm = cloudwatch.Alarm(
            self,
            name,
            metric=metric,
            threshold=threshold,
            evaluation_periods=1,
            comparison_operator=comparison,
            # No data means nothing happened (no invocations, an empty queue), which is not a problem.
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
        alarm.add_alarm_action(actions.SnsAction(self.topic))
        self.alarms.append(alarm)
        return alarm

    def _api(self, api: apigw.RestApi) -> None:
        server_errors = api.metric_server_error(period=PERIOD, statistic="Sum")
        self._alarm(
            "Api5xx", server_errors, API_5XX_THRESHOLD, "The REST API answered 5xx repeatedly", runbook="api-5xx"
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(title="API requests", left=[api.metric_count(period=PERIOD)], width=8),
            cloudwatch.GraphWidget(
                title="API errors",
                left=[api.metric_client_error(period=PERIOD), server_errors],
                width=8,
            ),
            cloudwatch.GraphWidget(
                title="API latency (p50, p99)",
                left=[
                    api.metric_latency(period=PERIOD, statistic="p50"),
                    api.metric_latency(period=PERIOD, statistic="p99"),
                ],
                width=8,
            ),
        )

    def _function(self, function: RapportFunction) -> None:
        fn, name = function.function, function.service_name
        errors = fn.metric_errors(period=PERIOD, statistic="Sum")
        throttles = fn.metric_throttles(period=PERIOD, statistic="Sum")
        self._alarm(
            f"{_id_of(function.node.path)}Errors", errors, 1, f"{name}: invocations failed", runbook="function-errors"
        )
        self._alarm(
            f"{_id_of(function.node.path)}Throttles",
            throttles,
            1,
            f"{name}: invocations were throttled",
            runbook="function-throttles",
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title=f"{name}: invocations, errors, throttles",
                left=[fn.metric_invocations(period=PERIOD, statistic="Sum"), errors, throttles],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title=f"{name}: duration (p50, p99)",
                left=[
                    fn.metric_duration(period=PERIOD, statistic="p50"),
                    fn.metric_duration(period=PERIOD, statistic="p99"),
                ],
                width=12,
            ),
        )

    def _queue(self, queue: sqs.IQueue) -> None:
        depth = queue.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum")
        self._alarm(
            f"{_id_of(queue.node.path)}Depth",
            depth,
            1,
            f"Messages are waiting in {queue.node.path}: work that failed after its retries",
            runbook="dead-letters",
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(title=f"Dead letters: {queue.node.path}", left=[depth], width=8)
        )

    def _work_queue(self, queue: sqs.IQueue) -> None:
        age = queue.metric_approximate_age_of_oldest_message(period=PERIOD, statistic="Maximum")
        self._alarm(
            f"{_id_of(queue.node.path)}Age",
            age,
            WORK_QUEUE_MAX_AGE.to_seconds(),
            f"Work has waited over {WORK_QUEUE_MAX_AGE.to_hours()} h in {queue.node.path}: are its workers failing?",
            runbook="work-queue-age",
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title=f"Work queue: {queue.node.path}",
                left=[queue.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum")],
                right=[age],
                width=8,
            )
        )

    def _state_machine(self, machine: sfn.IStateMachine) -> None:
        failed = machine.metric_failed(period=PERIOD, statistic="Sum")
        timed_out = machine.metric_timed_out(period=PERIOD, statistic="Sum")
        path = machine.node.path
        self._alarm(f"{_id_of(path)}Failed", failed, 1, f"{path}: executions failed", runbook="pipeline-failed")
        self._alarm(
            f"{_id_of(path)}TimedOut", timed_out, 1, f"{path}: executions timed out", runbook="pipeline-timed-out"
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title=f"State machine {path}",
                left=[
                    machine.metric_started(period=PERIOD, statistic="Sum"),
                    machine.metric_succeeded(period=PERIOD, statistic="Sum"),
                    failed,
                    timed_out,
                ],
                width=12,
            )
        )

    def _table(self, table: dynamodb.ITable) -> None:
        throttled = cloudwatch.MathExpression(
            expression="reads + writes",
            using_metrics={
                "reads": table.metric("ReadThrottleEvents", period=PERIOD, statistic="Sum"),
                "writes": table.metric("WriteThrottleEvents", period=PERIOD, statistic="Sum"),
            },
            label="throttled requests",
            period=PERIOD,
        )
        self._alarm("TableThrottles", throttled, 1, "The memory table throttled requests", runbook="table-throttles")
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Memory table: consumed capacity",
                left=[
                    table.metric_consumed_read_capacity_units(period=PERIOD, statistic="Sum"),
                    table.metric_consumed_write_capacity_units(period=PERIOD, statistic="Sum"),
                ],
                right=[throttled],
                width=12,
            )
        )

    def _domain(self, domain: opensearch.Domain) -> None:
        red = domain.metric_cluster_status_red(period=PERIOD, statistic="Maximum")
        storage = domain.metric_free_storage_space(period=PERIOD, statistic="Minimum")
        jvm = domain.metric_jvm_memory_pressure(period=PERIOD, statistic="Maximum")
        knn_errors = cloudwatch.MathExpression(
            expression="FILL(queries, 0) + FILL(indexing, 0)",
            using_metrics={
                "queries": domain.metric("KNNGraphQueryErrors", period=PERIOD, statistic="Sum"),
                "indexing": domain.metric("KNNGraphIndexErrors", period=PERIOD, statistic="Sum"),
            },
            label="k-NN graph errors",
            period=PERIOD,
        )
        writes_blocked = domain.metric_cluster_index_writes_blocked(period=PERIOD, statistic="Maximum")
        self._alarm(
            "SearchClusterRed",
            red,
            1,
            "The OpenSearch domain is red: some index data is unavailable",
            runbook="search-cluster-red",
        )
        self._alarm(
            "SearchLowStorage",
            storage,
            OPENSEARCH_FREE_STORAGE_MB,
            "The OpenSearch domain's free storage is low (MB, lowest node)",
            runbook="search-low-storage",
            comparison=cloudwatch.ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD,
        )
        self._alarm(
            "SearchJvmPressure",
            jvm,
            OPENSEARCH_JVM_PRESSURE_PERCENT,
            "The OpenSearch domain's JVM memory is nearly full",
            runbook="search-jvm-pressure",
        )
        self._alarm(
            "SearchKnnErrors",
            knn_errors,
            1,
            "k-NN searches or graph builds failed on the OpenSearch domain",
            runbook="search-knn-errors",
        )
        self._alarm(
            "SearchWritesBlocked",
            writes_blocked,
            1,
            "The OpenSearch domain refuses writes (disk or memory watermark): the index is falling behind",
            runbook="search-writes-blocked",
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(title="Vector index: cluster red", left=[red], width=8),
            cloudwatch.GraphWidget(title="Vector index: free storage (MB)", left=[storage], width=8),
            cloudwatch.GraphWidget(title="Vector index: JVM memory pressure (%)", left=[jvm], width=8),
            cloudwatch.GraphWidget(
                title="Vector index: k-NN errors, writes blocked", left=[knn_errors], right=[writes_blocked], width=8
            ),
        )

    def _stream_consumer(self, function: RapportFunction) -> None:
        """How far behind the table's stream a consumer reads: past 24 h records expire unapplied."""
        age = function.function.metric("IteratorAge", period=PERIOD, statistic="Maximum")
        self._alarm(
            f"{_id_of(function.node.path).removesuffix('Function')}IteratorAge",
            age,
            STREAM_MAX_ITERATOR_AGE.to_milliseconds(),
            f"{function.service_name} reads the table's stream over {STREAM_MAX_ITERATOR_AGE.to_hours()} h behind; "
            "records expire after 24 h",
            runbook="stream-iterator-age",
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(title=f"{function.service_name}: stream iterator age (ms)", left=[age], width=8)
        )

    def _pipeline_metrics(self) -> None:
        """The pipeline's own signals, which no AWS metric shows: a model answer replaced by the rules, and an
        interaction recorded whose pipeline run could not start (parked for the redrive)."""
        fallbacks = _sum_over_services(MODEL_FALLBACKS, EXTRACTING_SERVICES, "model fallbacks")
        parked = cloudwatch.Metric(
            namespace=METRICS_NAMESPACE,
            metric_name=PIPELINE_STARTS_PARKED,
            dimensions_map={"service": PIPELINE_STARTER_SERVICE},
            period=PERIOD,
            statistic="Sum",
        )
        self._alarm(
            "ModelFallbacks",
            fallbacks,
            MODEL_FALLBACK_THRESHOLD,
            "The language model's extractions failed validation and the rule-based model stood in",
            runbook="model-fallbacks",
        )
        self._alarm(
            "PipelineStartFailures",
            parked,
            1,
            "Interactions were recorded but their pipeline run could not be started",
            runbook="pipeline-start-failures",
        )
        self.dashboard.add_widgets(
            cloudwatch.GraphWidget(title="Pipeline: model fallbacks, starts parked", left=[fallbacks, parked], width=8)
        )


def _sum_over_services(metric_name: str, services: Sequence[str], label: str) -> cloudwatch.MathExpression:
    """One series over several functions' metric; a function that emitted nothing in a period counts as zero."""
    using = {
        f"m{i}": cloudwatch.Metric(
            namespace=METRICS_NAMESPACE,
            metric_name=metric_name,
            dimensions_map={"service": service},
            period=PERIOD,
            statistic="Sum",
        )
        for i, service in enumerate(services)
    }
    return cloudwatch.MathExpression(
        expression=" + ".join(f"FILL({m}, 0)" for m in using), using_metrics=using, label=label, period=PERIOD
    )
