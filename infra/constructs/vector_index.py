"""The vector index: an OpenSearch domain or Serverless collection, and the custom resource that creates its k-NN index.

Never by hand: the index exists because a deployment created it, with the dimensions the deployment names.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import aws_cdk as cdk
import jsii
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_opensearchserverless as aoss
from aws_cdk import aws_opensearchservice as opensearch
from aws_cdk import custom_resources as cr
from constructs import Construct

from infra.constructs.function import RapportFunction
from infra.deployment import DeploymentSettings, VectorIndexKind
from infra.naming import physical_name

INDEX_NAME = "rapport-memories"
ENGINE_VERSION = opensearch.EngineVersion.OPENSEARCH_2_19
# HTTP verbs the functions use on the index: search and count (GET/POST), index and delete documents (PUT/DELETE),
# existence checks (HEAD). Nothing else: no `es:ESHttp*` wildcard, no path outside the index.
INDEX_HTTP_ACTIONS = ["es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut", "es:ESHttpDelete"]
SERVERLESS_PERMISSIONS = [
    "aoss:CreateIndex",
    "aoss:DescribeIndex",
    "aoss:UpdateIndex",
    "aoss:ReadDocument",
    "aoss:WriteDocument",
]


@jsii.implements(cdk.IStableListProducer)
class _ListProducer:
    def __init__(self, produce: Callable[[], list[str]]) -> None:
        self._produce = produce

    def produce(self) -> list[str]:
        return self._produce()


@jsii.implements(cdk.IStableStringProducer)
class _StringProducer:
    def __init__(self, produce: Callable[[], str]) -> None:
        self._produce = produce

    def produce(self) -> str:
        return self._produce()


def search_domain_name(stack: cdk.Stack) -> str:
    """Domain names: 3-28 characters, lowercase letters, digits and hyphens, starting with a letter."""
    return physical_name(stack, max_length=28)


def collection_base_name(stack: cdk.Stack) -> str:
    """Serverless names: 3-32 characters; the policies' names add up to five (`-data`)."""
    return physical_name(stack, max_length=32, reserve=len("-data"))


class VectorIndex(Construct):
    """Owns the search engine, its encryption key, the index-setup function and the access of every function.

    `grant_access(fn)` is the one way a function reaches the index: an IAM statement scoped to the memory index,
    plus (domain) a fine-grained-access backend role or (Serverless) a principal of the data access policy.
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
        self.kind = settings.vector_backend
        self.embedding_dimensions = settings.embedding_dimensions
        self._backend_roles: list[str] = list(settings.opensearch_operator_role_arns)
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
            timeout=cdk.Duration.minutes(5),
        )
        self.domain: opensearch.Domain | None = None
        self.collection: aoss.CfnCollection | None = None
        if self.kind is VectorIndexKind.SERVERLESS:
            self.endpoint_url, self.service = self._serverless(settings)
        else:
            self.endpoint_url, self.service = self._domain(settings, removal_policy, log_removal_policy)
        self.setup_function.add_environment(self.environment())
        self.grant_access(self.setup_function, manage=True)
        self._index_resource(log_removal_policy)

    # --- the engines -------------------------------------------------------------------------------------------

    def _domain(
        self, settings: DeploymentSettings, removal_policy: cdk.RemovalPolicy, log_removal_policy: cdk.RemovalPolicy
    ) -> tuple[str, str]:
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
        return f"https://{self.domain.domain_endpoint}", "es"

    def _serverless(self, settings: DeploymentSettings) -> tuple[str, str]:
        stack = cdk.Stack.of(self)
        name = collection_base_name(stack)
        encryption = aoss.CfnSecurityPolicy(
            self,
            "EncryptionPolicy",
            name=f"{name}-enc",
            type="encryption",
            policy=stack.to_json_string(
                {
                    "Rules": [{"ResourceType": "collection", "Resource": [f"collection/{name}"]}],
                    "KmsARN": self.key.key_arn,
                }
            ),
        )
        # Public endpoint, private data: every request is SigV4-signed and must pass the data access policy below.
        network = aoss.CfnSecurityPolicy(
            self,
            "NetworkPolicy",
            name=f"{name}-net",
            type="network",
            policy=json.dumps(
                [
                    {
                        "Rules": [{"ResourceType": "collection", "Resource": [f"collection/{name}"]}],
                        "AllowFromPublic": True,
                    }
                ]
            ),
        )
        self.collection = aoss.CfnCollection(
            self,
            "Collection",
            name=name,
            type="VECTORSEARCH",
            description="Rapport memories: k-NN and BM25 over every tenant's memories",
            standby_replicas="ENABLED" if settings.serverless_standby_replicas else "DISABLED",
        )
        self.collection.add_resource_dependency(encryption)
        self.collection.add_resource_dependency(network)
        aoss.CfnAccessPolicy(
            self,
            "DataAccessPolicy",
            name=f"{name}-data",
            type="data",
            # Lazy: functions granted after this construct (the pipeline's, the jobs') still land in the policy.
            policy=cdk.Lazy.string(
                _StringProducer(
                    lambda: stack.to_json_string(
                        [
                            {
                                "Rules": [
                                    {
                                        "ResourceType": "index",
                                        "Resource": [f"index/{name}/{INDEX_NAME}*"],
                                        "Permission": SERVERLESS_PERMISSIONS,
                                    }
                                ],
                                "Principal": self._backend_roles,
                            }
                        ]
                    )
                )
            ),
        )
        return self.collection.attr_collection_endpoint, "aoss"

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

    # --- access ------------------------------------------------------------------------------------------------

    def environment(self) -> dict[str, str]:
        """What a function needs to open the index (rapport.settings reads these)."""
        return {
            "RAPPORT_VECTOR_BACKEND": "opensearch",
            "RAPPORT_OPENSEARCH_URL": self.endpoint_url,
            "RAPPORT_OPENSEARCH_SERVICE": self.service,
            "RAPPORT_OPENSEARCH_INDEX": INDEX_NAME,
            "RAPPORT_EMBEDDING_DIMENSIONS": str(self.embedding_dimensions),
        }

    def grant_access(self, function: RapportFunction, *, manage: bool = False) -> None:
        """Documents of the memory index (and, for the setup function, the security API and index creation)."""
        function.add_environment(self.environment())
        self._backend_roles.append(function.role.role_arn)
        if self.collection is not None:
            function.role.add_to_principal_policy(
                iam.PolicyStatement(actions=["aoss:APIAccessAll"], resources=[self.collection.attr_arn])
            )
            return
        assert self.domain is not None
        arn = self.domain.domain_arn
        resources = [f"{arn}/{INDEX_NAME}", f"{arn}/{INDEX_NAME}/*"]
        if manage:
            resources.append(f"{arn}/_plugins/_security/api/*")
        function.role.add_to_principal_policy(iam.PolicyStatement(actions=INDEX_HTTP_ACTIONS, resources=resources))
        cdk.Validations.of(function.role).acknowledge(
            cdk.Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{self._domain_logical_id()}.Arn>/{INDEX_NAME}/*]",
                reason="Document paths under the one memory index of this domain (`/_doc/{id}`, `/_search`).",
            ),
            cdk.Acknowledgment(
                id=f"AwsSolutions-IAM5[Resource::<{self._domain_logical_id()}.Arn>/_plugins/_security/api/*]",
                reason="The setup function (the domain's IAM master) maps roles through the security API.",
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
