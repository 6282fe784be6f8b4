"""The vector index: an OpenSearch Service domain, and the custom resource that creates its k-NN index.

Never by hand: the index exists because a deployment created it, with the dimensions the deployment names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import aws_cdk as cdk
import jsii
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchservice as opensearch
from aws_cdk import custom_resources as cr
from constructs import Construct

from infra.constructs.function import RapportFunction
from infra.deployment import DeploymentSettings
from infra.nag import acknowledge_no_dead_letter_queue
from infra.naming import physical_name
from rapport.adapters.opensearch.index import TENANT_ALIAS_PREFIX

if TYPE_CHECKING:
    from infra.constructs.tenant_access import TenantAccess

INDEX_NAME = "rapport-memories"
ENGINE_VERSION = opensearch.EngineVersion.OPENSEARCH_2_19
# HTTP verbs the functions use on the index: search and count (GET/POST), index and delete documents (PUT/DELETE),
# existence checks (HEAD). Nothing else: no `es:ESHttp*` wildcard, no path outside the index.
INDEX_HTTP_ACTIONS = ["es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut", "es:ESHttpDelete"]
# A function that reads as its tenant (through the tenant's alias) keeps, on its own role, only the writes of one
# document by id and the making of a tenant's alias: it cannot search, count or read the index as a whole.
DOCUMENT_WRITE_ACTIONS = ["es:ESHttpPut", "es:ESHttpDelete"]
# Multi-document requests naming indexes in their body (`_bulk`, `_mget`, `_msearch`) would slip past IAM's
# per-path check of an alias; with this off, the index named in the path is the only one a request reaches.
ADVANCED_OPTIONS = {"rest.action.multi.allow_explicit_index": "false"}


@jsii.implements(cdk.IStableListProducer)
class _ListProducer:
    def __init__(self, produce: Callable[[], list[str]]) -> None:
        self._produce = produce

    def produce(self) -> list[str]:
        return self._produce()


def search_domain_name(stack: cdk.Stack) -> str:
    """Domain names: 3-28 characters, lowercase letters, digits and hyphens, starting with a letter."""
    return physical_name(stack, max_length=28)


class VectorIndex(Construct):
    """Owns the search engine, its encryption key, the index-setup function and the access of every function.

    `grant_access(fn)` is the one way a function reaches the index: an IAM statement scoped to the memory index,
    plus a fine-grained-access backend role mapped by the index setup.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: DeploymentSettings,
        core_layer: lambda_.ILayerVersion,
        table: dynamodb.ITable,
        log_removal_policy: cdk.RemovalPolicy,
    ) -> None:
        super().__init__(scope, construct_id)
        self.embedding_dimensions = settings.embedding_dimensions
        self._backend_roles: list[str] = list(settings.opensearch_operator_role_arns)
        self._tenant_roles: list[str] = []
        removal_policy = cdk.RemovalPolicy.RETAIN if settings.retain_data else cdk.RemovalPolicy.DESTROY
        self.key = kms.Key(
            self,
            "Key",
            description="Encrypts the Rapport vector index (memory text and embeddings) at rest",
            enable_key_rotation=True,
            removal_policy=removal_policy,
        )
        self.setup_function = RapportFunction(
            self,
            "SetupFunction",
            entry="index_setup",
            service_name="rapport-index-setup",
            description="Creates the Rapport k-NN index and maps the functions' roles (deploy time only)",
            core_layer=core_layer,
            table=table,
            log_removal_policy=log_removal_policy,
            tracing=settings.tracing,
            timeout=cdk.Duration.minutes(5),
        )
        self.domain: opensearch.Domain | None = None
        self.endpoint_url = self._domain(settings, removal_policy, log_removal_policy)
        self.setup_function.add_environment(self.environment())
        self.grant_access(self.setup_function, manage=True)
        self._index_resource(log_removal_policy)

    # --- the engines -------------------------------------------------------------------------------------------

    def _domain(
        self, settings: DeploymentSettings, removal_policy: cdk.RemovalPolicy, log_removal_policy: cdk.RemovalPolicy
    ) -> str:
        nodes, masters, zones = (
            settings.opensearch_data_nodes,
            settings.opensearch_master_nodes,
            settings.opensearch_zones,
        )
        stack = cdk.Stack.of(self)
        # An explicit name lets the access policy below name the domain's ARN without referring to the domain; it
        # carries the stack id's suffix, so a retained domain of a destroyed stack never blocks a new deploy.
        domain_name = search_domain_name(stack)
        domain_arn = stack.format_arn(service="es", resource="domain", resource_name=domain_name)
        slow_logs = logs.LogGroup(
            self, "SlowLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=log_removal_policy
        )
        app_logs = logs.LogGroup(
            self, "AppLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=log_removal_policy
        )
        self.domain = opensearch.Domain(
            self,
            "Domain",
            domain_name=domain_name,
            version=ENGINE_VERSION,
            capacity=opensearch.CapacityConfig(
                data_nodes=nodes,
                data_node_instance_type=settings.opensearch_instance_type,
                master_nodes=masters or None,
                master_node_instance_type=settings.opensearch_master_instance_type if masters else None,
                multi_az_with_standby_enabled=settings.opensearch_standby,
            ),
            zone_awareness=opensearch.ZoneAwarenessConfig(
                enabled=zones > 1, availability_zone_count=zones if zones > 1 else None
            ),
            ebs=opensearch.EbsOptions(
                volume_size=settings.opensearch_volume_gib, volume_type=cdk.aws_ec2.EbsDeviceVolumeType.GP3
            ),
            encryption_at_rest=opensearch.EncryptionAtRestOptions(enabled=True, kms_key=self.key),
            advanced_options=ADVANCED_OPTIONS,
            node_to_node_encryption=True,
            enforce_https=True,
            tls_security_policy=opensearch.TLSSecurityPolicy.TLS_1_2,
            # Fine-grained access with an IAM master: the setup function's role, which maps the other functions'
            # roles to a role limited to the memory index. No internal user database, no password anywhere.
            fine_grained_access_control=opensearch.AdvancedSecurityOptions(
                master_user_arn=self.setup_function.role.role_arn
            ),
            logging=opensearch.LoggingOptions(
                slow_search_log_enabled=True,
                slow_search_log_group=slow_logs,
                slow_index_log_enabled=True,
                slow_index_log_group=slow_logs,
                app_log_enabled=True,
                app_log_group=app_logs,
            ),
            # The log delivery policy is the native resource below, not CDK's custom-resource Lambda.
            suppress_logs_resource_policy=True,
            enable_auto_software_update=True,
            removal_policy=removal_policy,
        )
        logs.ResourcePolicy(
            self,
            "SearchLogDelivery",
            policy_statements=[
                iam.PolicyStatement(
                    principals=[iam.ServicePrincipal("es.amazonaws.com")],
                    actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                    resources=[slow_logs.log_group_arn, app_logs.log_group_arn],
                    conditions={"StringEquals": {"aws:SourceAccount": stack.account}},
                )
            ],
        )
        # Only this account's principals, and of those only who IAM allows (grant_access): signed requests only.
        # Set on the resource itself: the construct's `access_policies` would add a custom-resource Lambda.
        cfn_domain = self.domain.node.default_child
        assert isinstance(cfn_domain, opensearch.CfnDomain)
        cfn_domain.access_policies = {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"AWS": f"arn:{stack.partition}:iam::{stack.account}:root"},
                    "Action": INDEX_HTTP_ACTIONS,
                    "Resource": f"{domain_arn}/*",
                }
            ],
        }
        self._acknowledge_domain_findings(settings)
        return f"https://{self.domain.domain_endpoint}"

    def _index_resource(self, log_removal_policy: cdk.RemovalPolicy) -> None:
        provider = cr.Provider(
            self,
            "SetupProvider",
            on_event_handler=self.setup_function.function,
            log_group=logs.LogGroup(
                self, "ProviderLogs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=log_removal_policy
            ),
        )
        self.index_resource = cdk.CustomResource(
            self,
            "Index",
            service_token=provider.service_token,
            resource_type="Custom::RapportVectorIndex",
            # A change to any of these re-runs the setup: a new role is mapped, a new width fails loudly.
            properties={
                "IndexName": INDEX_NAME,
                "Dimensions": self.embedding_dimensions,
                "BackendRoles": cdk.Lazy.list(_ListProducer(lambda: list(self._backend_roles))),
                "TenantRoles": cdk.Lazy.list(_ListProducer(lambda: list(self._tenant_roles))),
            },
        )
        # The mapping must not race the setup role's own permissions.
        self.index_resource.node.add_dependency(self.setup_function.role)
        setup_resource = self.setup_function.function.node.default_child
        assert isinstance(setup_resource, cdk.CfnElement)
        setup_logical_id = cdk.Stack.of(self).get_logical_id(setup_resource)
        cdk.Validations.of(provider).acknowledge(
            cdk.Acknowledgment(
                id="AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
                reason="The CDK custom-resource provider framework's own function (deploy time only) uses it.",
            ),
            cdk.Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{setup_logical_id}.Arn>:*]",
                reason="The provider framework invokes any version of the one setup function it fronts.",
            ),
            cdk.Acknowledgment(
                id="AwsSolutions-L1",
                reason="The provider framework's runtime is chosen and updated by the CDK release, not here.",
            ),
        )
        self._acknowledge_deploy_time_invocations(provider)

    def _acknowledge_deploy_time_invocations(self, provider: cr.Provider) -> None:
        """The setup function and the provider's relay run only while CloudFormation deploys, which reports a
        failure of either as the deploy's own."""
        acknowledge_no_dead_letter_queue(
            self.setup_function.function,
            invoked_by=(
                "The provider framework invokes it synchronously and reports its error to CloudFormation, which "
                "fails the deploy with it"
            ),
        )
        relay = provider.node.find_child("framework-onEvent")
        relay_resource = relay.node.default_child
        assert isinstance(relay_resource, lambda_.CfnFunction)
        # Lambda's smallest size, set explicitly: the relay only forwards one event and posts one answer back.
        relay_resource.memory_size = 128
        cdk.Validations.of(relay).acknowledge(
            cdk.Acknowledgment(
                id="Serverless-LambdaDLQ",
                reason=(
                    "CloudFormation invokes this relay once per change of the index resource and waits for its "
                    "answer: a failure fails or times out the deploy in the stack's events, where it is acted on."
                ),
            ),
            cdk.Acknowledgment(
                id="Serverless-LambdaTracing",
                reason=(
                    "CDK's provider framework relay: its trace would show one invocation of the setup function, "
                    "whose own logs (and trace, with tracing on) hold the work."
                ),
            ),
        )

    # --- access ------------------------------------------------------------------------------------------------

    def environment(self) -> dict[str, str]:
        """What a function needs to open the index (rapport.settings reads these)."""
        return {
            "RAPPORT_VECTOR_BACKEND": "opensearch",
            "RAPPORT_OPENSEARCH_URL": self.endpoint_url,
            "RAPPORT_OPENSEARCH_INDEX": INDEX_NAME,
            "RAPPORT_EMBEDDING_DIMENSIONS": str(self.embedding_dimensions),
        }

    def admit_tenant_sessions(self, tenant_access: TenantAccess) -> None:
        """The tenant access role's sessions read through their tenant's alias, mapped by the index setup."""
        assert self.domain is not None
        self._tenant_roles.append(tenant_access.role.role_arn)
        tenant_access.admit_index_alias(self.domain.domain_arn)

    def grant_access(self, function: RapportFunction, *, manage: bool = False, tenant_reads: bool = False) -> None:
        """Documents of the memory index (and, for the setup function, the security API and index creation).
        `tenant_reads`: the function reads as its tenant (`admit_tenant_sessions`); its own role then only writes
        documents by id and makes tenants' aliases."""
        function.add_environment(self.environment())
        self._backend_roles.append(function.role.role_arn)
        assert self.domain is not None
        arn = self.domain.domain_arn
        if tenant_reads:
            function.role.add_to_principal_policy(
                iam.PolicyStatement(
                    actions=DOCUMENT_WRITE_ACTIONS,
                    resources=[f"{arn}/{INDEX_NAME}/_doc/*", f"{arn}/{INDEX_NAME}/_alias/{TENANT_ALIAS_PREFIX}*"],
                )
            )
            self._acknowledge_index_paths(function)
            return
        resources = [f"{arn}/{INDEX_NAME}", f"{arn}/{INDEX_NAME}/*"]
        if manage:
            resources.append(f"{arn}/_plugins/_security/api/*")
        function.role.add_to_principal_policy(iam.PolicyStatement(actions=INDEX_HTTP_ACTIONS, resources=resources))
        self._acknowledge_index_paths(function)

    def _acknowledge_index_paths(self, function: RapportFunction) -> None:
        cdk.Validations.of(function.role).acknowledge(
            cdk.Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{self._domain_logical_id()}.Arn>/{INDEX_NAME}/*]",
                reason="Document paths under the one memory index of this domain (`/_doc/{id}`, `/_search`).",
            ),
            cdk.Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{self._domain_logical_id()}.Arn>/_plugins/_security/api/*]",
                reason="The setup function (the domain's IAM master) maps roles through the security API.",
            ),
            cdk.Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{self._domain_logical_id()}.Arn>/{INDEX_NAME}/_doc/*]",
                reason="One document by id (index, delete) of the one memory index; no search or read of it.",
            ),
            cdk.Acknowledgment(
                id=(
                    f"AwsSolutions-IAM5[Resource::<{self._domain_logical_id()}.Arn>/{INDEX_NAME}/_alias/"
                    f"{TENANT_ALIAS_PREFIX}*]"
                ),
                reason="Making a tenant's filtered alias the first time the tenant reads; reading it takes the "
                "tenant's own session.",
            ),
        )

    def _domain_logical_id(self) -> str:
        assert self.domain is not None
        resource = self.domain.node.default_child
        assert isinstance(resource, cdk.CfnElement)
        return cdk.Stack.of(self).get_logical_id(resource)

    def _acknowledge_domain_findings(self, settings: DeploymentSettings) -> None:
        assert self.domain is not None
        environment = settings.environment.value
        acknowledgments = [
            cdk.Acknowledgment(
                id="AwsSolutions-OS1",
                reason=(
                    "A public endpoint with IAM (SigV4) authentication and fine-grained access: a VPC would put every "
                    "function in it and add NAT gateways for the OpenAI calls, for no gain in who can reach the data."
                ),
            ),
            cdk.Acknowledgment(
                id="AwsSolutions-OS3",
                reason="Access is by IAM identity (SigV4) mapped through fine-grained access control, not by IP.",
            ),
        ]
        if settings.opensearch_master_nodes == 0:
            acknowledgments.append(
                cdk.Acknowledgment(
                    id="AwsSolutions-OS4",
                    reason=(
                        f"The {environment} profile runs {settings.opensearch_data_nodes} data node(s) without "
                        "dedicated masters: the elected master shares a data node, so a node lost can stall writes "
                        "until a new one is elected. Accepted outside production: the index is derived data, rebuilt "
                        "from the table with `rapport reindex`; the prod profile runs three dedicated masters."
                    ),
                )
            )
        if settings.opensearch_zones < 2:
            acknowledgments.append(
                cdk.Acknowledgment(
                    id="AwsSolutions-OS7",
                    reason=(
                        f"{settings.opensearch_data_nodes} data node(s) cannot be spread evenly over two or three "
                        f"zones (the {environment} profile): a zone outage makes the index unavailable until it "
                        "recovers, "
                        "and the table, the source of truth, is unaffected."
                    ),
                )
            )
        cdk.Validations.of(self.domain).acknowledge(*acknowledgments)
