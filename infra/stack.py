"""`RapportStack`: the whole service in one stack, composed of one construct per concern (see docs/deploy.md)."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.constructs.api import CustomDomain, RapportApi
from infra.constructs.backup import TableBackup
from infra.constructs.core_layer import CoreLayer
from infra.constructs.firewall import EVALUATION_WINDOW_SECONDS, ApiFirewall
from infra.constructs.function import RapportFunction
from infra.constructs.governance import GovernanceJobs
from infra.constructs.index_sync import IndexSync
from infra.constructs.ingestion import Ingestion
from infra.constructs.monitoring import Monitoring
from infra.constructs.person_keys import PersonKeys
from infra.constructs.pipeline import IngestionPipeline
from infra.constructs.schedules import Schedules
from infra.constructs.table import MemoryTable
from infra.constructs.tenant_access import TenantAccess
from infra.constructs.vector_index import VectorIndex
from infra.constructs.webhook_delivery import WebhookDelivery
from infra.deployment import DeploymentSettings
from rapport.settings import openai_budget_within

# API Gateway stops waiting for an integration after 29 s by default; a longer Lambda timeout would only hide errors.
API_TIMEOUT = cdk.Duration.seconds(29)
AUTHORIZER_TIMEOUT = cdk.Duration.seconds(10)
# Reserved concurrency where a runaway would hurt (reservedConcurrency=false drops them, for small accounts): a
# flood of chat events must not take every OpenAI request slot, nor the whole account's Lambda concurrency.
INGEST_CONCURRENCY = 10
WEBHOOKS_CONCURRENCY = 20
INDEXER_CONCURRENCY = 5
# A request's OpenAI calls retry once inside the function: the API's 29 s cannot hold more with useful timeouts.
OPENAI_RETRIES = 1
ENRICHMENT_CONCURRENCY = 5  # links are an extra: a burst waits in EventBridge's retries rather than crowd the table


class RapportStack(cdk.Stack):
    """Add a concern as one more construct here, not as inline resources."""

    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.settings = settings = DeploymentSettings.from_context(self.node)
        self.log_removal_policy = log_removal_policy = (
            cdk.RemovalPolicy.RETAIN if settings.retain_data else cdk.RemovalPolicy.DESTROY
        )
        self._tag_and_bound(settings)

        # --- data: the table (source of truth), the layer every function carries, the derived vector index -------
        self.memory_table = MemoryTable(self, "MemoryTable", retain_data=settings.retain_data)
        self.backup = TableBackup(self, "Backup", table=self.memory_table.table, retain_data=settings.retain_data)
        self.core_layer = CoreLayer(self, "CoreLayer", skip_bundling=settings.skip_bundling)
        self.openai_key = self._openai_key(settings)
        self.vector_index = VectorIndex(
            self,
            "VectorIndex",
            settings=settings,
            core_layer=self.core_layer.layer_version,
            table=self.memory_table.table,
            log_removal_policy=log_removal_policy,
        )
        # What a function acting for one tenant signs as: that tenant's partitions and index alias only.
        self.tenant_access = TenantAccess(
            self, "TenantAccess", table=self.memory_table.table, table_key=self.memory_table.key
        )
        self.vector_index.admit_tenant_sessions(self.tenant_access)
        # Each end user's data key, apart from the table and its backups: an erasure destroys it.
        self.person_keys = PersonKeys(self, "PersonKeys", retain_data=settings.retain_data)
        self.person_keys.admit_tenant_role(self.tenant_access.role)
        # What a function that embeds and searches needs: the index, the OpenAI embedder, the key's ARN (never the
        # key: the function reads it from Secrets Manager at cold start).
        self.ingestion = Ingestion(self, "Ingestion", retain_data=settings.retain_data)
        self.service_environment = {
            **self.vector_index.environment(),
            "RAPPORT_EMBEDDER": "openai",
            "RAPPORT_OPENAI_API_KEY_SECRET_ARN": self.openai_key.secret_arn,
            # Writers of memories announce them on the bus; the enrichment function links them (docs/graph.md).
            "RAPPORT_GRAPH_ENRICHMENT": "event",
            "RAPPORT_EVENT_BUS_NAME": self.ingestion.bus.event_bus_name,
            **self.person_keys.environment(),
        }

        # --- functions ---------------------------------------------------------------------------------------------
        self.api_function = self._function(
            "ApiFunction",
            entry="api",
            service_name="rapport-api",
            description="Rapport REST API",
            memory_size=1024,  # CPU scales with memory: the import-heavy cold start is what this buys down
            timeout=API_TIMEOUT,
            table_access="tenant",
            searches=True,
        )
        if settings.cors_origins:
            # API Gateway answers the preflight; the function adds the headers to every real response.
            self.api_function.add_environment({"RAPPORT_CORS_ORIGINS": ",".join(settings.cors_origins)})
        self.authorizer_function = self._function(
            "AuthorizerFunction",
            entry="authorizer",
            service_name="rapport-authorizer",
            description="Rapport API-key authorizer: maps a key to its tenant",
            timeout=AUTHORIZER_TIMEOUT,
            table_access="keys",  # it only looks keys up by hash: it can read no item of any tenant's
        )
        self.webhooks_function = self._function(
            "WebhooksFunction",
            entry="webhooks",
            service_name="rapport-webhooks",
            description="Rapport signed ingest routes (Slack, webhook): verify, deduplicate, publish",
            timeout=cdk.Duration.seconds(10),
            table_access="write",  # idempotency claims only; it holds no index or model access
            person_keys=False,  # and no end user's content
            reserved_concurrency=WEBHOOKS_CONCURRENCY,
            environment={
                "RAPPORT_EVENT_BUS_NAME": self.ingestion.bus.event_bus_name,
                "RAPPORT_INGEST_SECRET_BACKEND": "secretsmanager",
                "RAPPORT_INGEST_SECRET_PREFIX": self.ingest_secret_prefix,
                # Counted per tenant once a signature is verified, as WAF cannot (infra/constructs/firewall.py).
                "RAPPORT_INGEST_RATE_LIMIT": str(settings.tenant_rate_limit),
                "RAPPORT_INGEST_RATE_WINDOW_SECONDS": str(EVALUATION_WINDOW_SECONDS),
            },
        )
        self.ingest_function = self._function(
            "IngestFunction",
            entry="ingest",
            service_name="rapport-ingest",
            description="Rapport ingestion consumer: records each Interaction Received event once",
            memory_size=1024,
            timeout=cdk.Duration.minutes(1),
            table_access="tenant",
            searches=True,
            reserved_concurrency=INGEST_CONCURRENCY,
            on_failure=destinations.SqsDestination(self.ingestion.dead_letter_queue),
            retry_attempts=2,
        )
        self.indexer_function = self._function(
            "IndexerFunction",
            entry="indexer",
            service_name="rapport-indexer",
            description="Rapport index sync: table stream to the vector index",
            timeout=cdk.Duration.minutes(1),
            table_access="read",  # a memory's vector is an item of its own, which a memory's record does not carry
            reserved_concurrency=INDEXER_CONCURRENCY,
        )
        self.enrichment_function = self._function(
            "EnrichmentFunction",
            entry="enrichment",
            service_name="rapport-enrichment",
            description="Rapport graph enrichment: links memories just stored (PRECEDED_BY, SIMILAR_TO, patterns)",
            memory_size=1024,
            timeout=cdk.Duration.minutes(1),
            table_access="write",
            searches=True,
            reserved_concurrency=ENRICHMENT_CONCURRENCY,
            # EventBridge invokes it asynchronously: what still fails after Lambda's retries is kept, not dropped
            on_failure=destinations.SqsDestination(self.ingestion.dead_letter_queue),
            retry_attempts=2,
        )
        self.ingestion.enrich_with(self.enrichment_function.function)
        # The indexer needs the index but not the model: it writes the embedding stored in the table.
        self.vector_index.grant_access(self.indexer_function)
        self.indexer_function.add_environment({"RAPPORT_EMBEDDER": "openai"})
        self.index_sync = IndexSync(self, "IndexSync", function=self.indexer_function, table=self.memory_table.table)
        self._grant_ingest_secrets(self.webhooks_function)
        self.ingestion.grant_put(self.webhooks_function.function)
        # The bus's rule delivers to the consumer, which records the interaction; recording starts the pipeline.
        self.ingestion.deliver_to(self.ingest_function.function)

        # --- the API and its edge ------------------------------------------------------------------------------------
        self.api = RapportApi(
            self,
            "Api",
            handler=self.api_function.function,
            authorizer_handler=self.authorizer_function.function,
            throttle_rate_limit=settings.throttle_rate_limit,
            throttle_burst_limit=settings.throttle_burst_limit,
            cors_origins=settings.cors_origins,
            manage_cloudwatch_role=settings.api_gateway_cloudwatch_role,
            log_removal_policy=log_removal_policy,
            ingest_handler=self.webhooks_function.function,
            firewall=settings.waf_enabled,
            stage_name=settings.environment.value,
            tracing=settings.tracing,
            custom_domain=(
                CustomDomain(
                    domain_name=settings.api_domain_name,
                    certificate_arn=settings.api_certificate_arn,
                    hosted_zone_id=settings.hosted_zone_id,
                    hosted_zone_name=settings.hosted_zone_name,
                )
                if settings.api_domain_name
                else None
            ),
        )
        if settings.waf_enabled:
            self.firewall = ApiFirewall(
                self,
                "Firewall",
                stage=self.api.rest_api.deployment_stage,
                tenant_rate_limit=settings.tenant_rate_limit,
                ip_rate_limit=settings.ip_rate_limit,
                log_removal_policy=log_removal_policy,
            )

        # --- the ingestion pipeline (docs/pipeline.md) ----------------------------------------------------------------
        self.pipeline = IngestionPipeline(
            self,
            "Pipeline",
            core_layer=self.core_layer.layer_version,
            table=self.memory_table.table,
            log_removal_policy=log_removal_policy,
            environment=self.service_environment,
            writers=[self.api_function, self.ingest_function],
            openai_api_key_secret_arn=self.openai_key.secret_arn,
            tenant_access=self.tenant_access,
            tracing=settings.tracing,
        )
        self._connect_pipeline()

        # --- the governance jobs and their schedules (docs/governance.md), and monitoring, composed last -----------
        self.governance = GovernanceJobs(self, "Governance", make_function=self._function)
        self.schedules = Schedules(self, "Schedules", jobs=self.governance.scheduled_jobs)
        # Outbound webhooks (docs/webhooks.md): every function whose writes announce an event sends to the queue.
        self.webhook_delivery = WebhookDelivery(
            self,
            "WebhookDelivery",
            make_function=self._function,
            announcers=[
                self.api_function,
                self.ingest_function,
                self.enrichment_function,
                self.governance.worker,
                *getattr(self.pipeline, "functions", {}).values(),
            ],
        )
        self.monitoring = Monitoring(
            self,
            "Monitoring",
            functions=[c for c in self.node.find_all() if isinstance(c, RapportFunction)],
            # Dead-letter queues only: a queue that has one of its own is a work queue, busy by design.
            queues=[c for c in self.node.find_all() if isinstance(c, sqs.Queue) and c.dead_letter_queue is None],
            # ...and a work queue alarms on the age of its oldest message instead.
            work_queues=[c for c in self.node.find_all() if isinstance(c, sqs.Queue) and c.dead_letter_queue],
            state_machines=[c for c in self.node.find_all() if isinstance(c, sfn.StateMachine)],
            api=self.api.rest_api,
            table=self.memory_table.table,
            domain=self.vector_index.domain,
            alarm_email=settings.alarm_email,
            # The table's stream readers: past 24 h behind, records expire before they are applied.
            stream_consumers=[self.indexer_function, self.pipeline.starter],
            runbook_url=settings.runbook_url,
        )
        self._outputs()

    def _tag_and_bound(self, settings: DeploymentSettings) -> None:
        """Cost-allocation tags on every resource, and the account's permissions boundary on every role, if any."""
        for key, value in (
            ("rapport:environment", settings.environment.value),
            ("rapport:stack", self.stack_name),
            *settings.tags,
        ):
            cdk.Tags.of(self).add(key, value)
        if settings.permissions_boundary_arn:
            iam.PermissionsBoundary.of(self).apply(
                iam.ManagedPolicy.from_managed_policy_arn(
                    self, "PermissionsBoundary", settings.permissions_boundary_arn
                )
            )

    @property
    def ingest_secret_prefix(self) -> str:
        """Per-tenant ingestion secrets live under `{stack}/ingest/{tenant}/{slack|webhook}` in Secrets Manager."""
        return f"{self.stack_name}/ingest"

    def _function(
        self,
        construct_id: str,
        *,
        table_access: str | None = None,
        searches: bool = False,
        person_keys: bool = True,
        reserved_concurrency: int = 0,
        **options: Any,
    ) -> RapportFunction:
        """A RapportFunction with the stack's layer and table, and the access it declares: `table_access` read,
        write, `tenant` (the tenant access role only: it acts for one tenant per request or event) or `keys` (the
        API-key lookup), `searches` (vector index and OpenAI key), reserved concurrency unless turned off."""
        function = RapportFunction(
            self,
            construct_id,
            core_layer=self.core_layer.layer_version,
            table=self.memory_table.table,
            log_removal_policy=self.log_removal_policy,
            tracing=self.settings.tracing,
            reserved_concurrency=reserved_concurrency if self.settings.reserved_concurrency else None,
            **options,
        )
        if table_access == "tenant":
            self.tenant_access.admit(function)
        elif table_access == "keys":
            function.grant_api_key_lookup(self.memory_table.table)
        elif table_access is not None:
            function.grant_table_access(self.memory_table.table, read_only=table_access == "read")
        if person_keys and table_access in ("tenant", "read", "write"):
            # Whatever reads or writes an end user's items seals and opens their content with their key: the
            # tenant's session does (its role is admitted above), a function off the request path with its own.
            function.add_environment(self.person_keys.environment())
            if table_access != "tenant":
                self.person_keys.grant(function, make=table_access == "write")
        if searches:
            self.vector_index.grant_access(function, tenant_reads=table_access == "tenant")
            function.add_environment(self.service_environment)
            # One OpenAI call, retries and throttling waits included, ends before the function does.
            timeout = options.get("timeout") or cdk.Duration.seconds(10)
            function.add_environment(
                openai_budget_within(timeout.to_seconds(), max_retries=OPENAI_RETRIES).environment()
            )
            self.openai_key.grant_read(function.function)
            self.ingestion.grant_put(function.function)  # Memories Stored events (graph enrichment)
        return function

    def _openai_key(self, settings: DeploymentSettings) -> secretsmanager.ISecret:
        """An existing secret (openaiApiKeySecretArn), or an empty one this stack creates for the operator to fill
        (`aws secretsmanager put-secret-value`): either way the key never passes through CDK or a template."""
        if settings.openai_api_key_secret_arn:
            return secretsmanager.Secret.from_secret_complete_arn(
                self, "OpenAiApiKey", settings.openai_api_key_secret_arn
            )
        secret = secretsmanager.Secret(
            self,
            "OpenAiApiKey",
            description="OpenAI API key of Rapport: put the key here after the first deploy (docs/deploy.md)",
            removal_policy=cdk.RemovalPolicy.RETAIN if settings.retain_data else cdk.RemovalPolicy.DESTROY,
        )
        # Created without a value, as docs/deploy.md says: CDK would generate a random string, which functions would
        # send to OpenAI as a key. Until the operator puts one, cold starts fail: the secret has no current value.
        cfn_secret = secret.node.default_child
        assert isinstance(cfn_secret, secretsmanager.CfnSecret)
        cfn_secret.add_property_deletion_override("GenerateSecretString")
        cdk.Validations.of(secret).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-SMG4",
                reason=(
                    "A third-party API key: OpenAI issues it, so no rotation Lambda can mint a new one. Rotate it in "
                    "OpenAI's console and put the new value here; warm functions re-read it within five minutes."
                ),
            )
        )
        return secret

    def _grant_ingest_secrets(self, function: RapportFunction) -> None:
        """Read (only) the tenants' ingestion secrets: `{prefix}/*`, no other secret of the account."""
        function.role.add_to_principal_policy(
            cdk.aws_iam.PolicyStatement(
                actions=["secretsmanager:GetSecretValue"],
                resources=[
                    self.format_arn(
                        service="secretsmanager",
                        resource="secret",
                        resource_name=f"{self.ingest_secret_prefix}/*",
                        arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
                    )
                ],
            )
        )
        # cdk-nag names the resource as synthesized: pseudo parameters where the environment is unknown, literals
        # where `cdk synth` knows the account or region.
        partition, region, account = (
            f"<AWS::{name}>" if cdk.Token.is_unresolved(value) else value
            for name, value in (("Partition", self.partition), ("Region", self.region), ("AccountId", self.account))
        )
        cdk.Validations.of(function.role).acknowledge(
            cdk.Acknowledgment(
                id=(
                    f"AwsSolutions-IAM5[Resource::arn:{partition}:secretsmanager:{region}:{account}:secret:"
                    f"{self.ingest_secret_prefix}/*]"
                ),
                reason="One secret per tenant and source under this stack's ingest prefix, created at onboarding.",
            )
        )

    def _connect_pipeline(self) -> None:
        """The pipeline's state machine takes a recorded interaction (PipelineRequest), so the bus cannot start it
        directly: the ingest consumer records the event, as the API does, and the table's stream starts the run."""
        # Of the steps, only `store` searches and writes the index (de-duplication, upserts); the others get the
        # index's address with the shared environment (wiring opens it lazily) but no access to it.
        store_step: RapportFunction | None = getattr(self.pipeline, "functions", {}).get("store")
        if store_step is not None:
            self.vector_index.grant_access(store_step, tenant_reads=True)
            self.ingestion.grant_put(store_step.function)  # it announces the memories it stores

    def _outputs(self) -> None:
        # The stage's base, as `rapport serve` prints its own: every route's path starts with /v1, and the OpenAPI
        # document the API serves names this same URL as its server.
        rest_api = self.api.rest_api
        api_url = (
            f"https://{rest_api.rest_api_id}.execute-api.{self.region}.{self.url_suffix}"
            f"/{rest_api.deployment_stage.stage_name}"
        )
        cdk.CfnOutput(self, "ApiUrl", value=api_url)
        # The page by its file name: that path is the `{proxy+}` resource's, whatever a trailing slash matches.
        cdk.CfnOutput(self, "ExplorerUrl", value=f"{api_url}/explorer/index.html")
        cdk.CfnOutput(self, "TableName", value=self.memory_table.table.table_name)
        # What an operator's CLI needs beside the table to read and write sealed content (docs/deploy.md).
        cdk.CfnOutput(self, "PersonKeysTableName", value=self.person_keys.table.table_name)
        cdk.CfnOutput(self, "PersonKeysKeyArn", value=self.person_keys.key.key_arn)
        cdk.CfnOutput(self, "EventBusName", value=self.ingestion.bus.event_bus_name)
        cdk.CfnOutput(self, "IngestSecretPrefix", value=self.ingest_secret_prefix)
        cdk.CfnOutput(self, "OpenAiKeySecretArn", value=self.openai_key.secret_arn)
        cdk.CfnOutput(self, "VectorIndexUrl", value=self.vector_index.endpoint_url)
        cdk.CfnOutput(self, "AlarmTopicArn", value=self.monitoring.topic.topic_arn)
        cdk.CfnOutput(self, "DeadLetterQueues", value=",".join(q.queue_name for q in self._dead_letter_queues()))

    def _dead_letter_queues(self) -> list[sqs.Queue]:
        return [c for c in self.node.find_all() if isinstance(c, sqs.Queue) and c.dead_letter_queue is None]
