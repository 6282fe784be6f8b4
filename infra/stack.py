"""`RapportStack`: composes one construct per concern; today table, core layer, the two functions and the API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct, Node

from infra.constructs.api import RapportApi
from infra.constructs.core_layer import CoreLayer
from infra.constructs.function import RapportFunction
from infra.constructs.table import MemoryTable

# API Gateway stops waiting for an integration after 29 s by default; a longer Lambda timeout would only hide errors.
API_TIMEOUT = cdk.Duration.seconds(29)
AUTHORIZER_TIMEOUT = cdk.Duration.seconds(10)


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "1", "yes"}:
        return True
    if text in {"false", "0", "no"}:
        return False
    raise ValueError(f"context {name}={value!r} must be true or false")


def _as_list(value: Any) -> tuple[str, ...]:
    """A JSON list from cdk.json, or a comma-separated string from `-c name=a,b` on the command line."""
    items = value if isinstance(value, list | tuple) else str(value or "").split(",")
    return tuple(item.strip() for item in items if item and item.strip())


@dataclass(frozen=True)
class DeploymentSettings:
    """The context values the stack reads (defaults in cdk.json); `-c name=value` overrides one per synth."""

    retain_data: bool = True
    skip_bundling: bool = False
    throttle_rate_limit: float = 100
    throttle_burst_limit: int = 200
    cors_origins: tuple[str, ...] = ()
    vector_backend: str = "opensearch"
    opensearch_endpoint: str = ""
    openai_api_key_secret_arn: str = ""
    api_gateway_cloudwatch_role: bool = True

    @classmethod
    def from_context(cls, node: Node) -> DeploymentSettings:
        def get(name: str, default: Any) -> Any:
            value = node.try_get_context(name)
            return default if value is None else value

        defaults = cls()
        return cls(
            retain_data=_as_bool("retainData", get("retainData", defaults.retain_data)),
            skip_bundling=_as_bool("skipBundling", get("skipBundling", defaults.skip_bundling)),
            throttle_rate_limit=float(get("throttleRateLimit", defaults.throttle_rate_limit)),
            throttle_burst_limit=int(get("throttleBurstLimit", defaults.throttle_burst_limit)),
            cors_origins=_as_list(get("corsOrigins", defaults.cors_origins)),
            vector_backend=str(get("vectorBackend", defaults.vector_backend)),
            opensearch_endpoint=str(get("opensearchEndpoint", defaults.opensearch_endpoint)).strip(),
            openai_api_key_secret_arn=str(get("openaiApiKeySecretArn", defaults.openai_api_key_secret_arn)).strip(),
            api_gateway_cloudwatch_role=_as_bool(
                "apiGatewayCloudWatchRole", get("apiGatewayCloudWatchRole", defaults.api_gateway_cloudwatch_role)
            ),
        )

    def api_environment(self) -> dict[str, str]:
        """What the API function's full service wiring needs beyond the store (the authorizer needs only the store)."""
        environment = {"RAPPORT_VECTOR_BACKEND": self.vector_backend}
        # The OpenSearch domain construct arrives with a later issue; until then the endpoint comes from context.
        # Empty values are left unset so the settings see None, not "".
        if self.opensearch_endpoint:
            environment["RAPPORT_OPENSEARCH_URL"] = self.opensearch_endpoint
        if self.openai_api_key_secret_arn:
            environment["RAPPORT_OPENAI_API_KEY_SECRET_ARN"] = self.openai_api_key_secret_arn
        return environment


class RapportStack(cdk.Stack):
    """The whole Rapport service in one stack. Add a concern as one more construct here, not inline resources."""

    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        settings = DeploymentSettings.from_context(self.node)
        log_removal_policy = cdk.RemovalPolicy.RETAIN if settings.retain_data else cdk.RemovalPolicy.DESTROY

        self.memory_table = MemoryTable(self, "MemoryTable", retain_data=settings.retain_data)
        self.core_layer = CoreLayer(self, "CoreLayer", skip_bundling=settings.skip_bundling)
        self.api_function = RapportFunction(
            self,
            "ApiFunction",
            entry="api",
            service_name="rapport-api",
            description="Rapport REST API",
            memory_size=1024,  # CPU scales with memory: the import-heavy cold start is what this buys down
            timeout=API_TIMEOUT,
            core_layer=self.core_layer.layer_version,
            table=self.memory_table.table,
            log_removal_policy=log_removal_policy,
            environment=settings.api_environment(),
        )
        self.authorizer_function = RapportFunction(
            self,
            "AuthorizerFunction",
            entry="authorizer",
            service_name="rapport-authorizer",
            description="Rapport API-key authorizer: maps a key to its tenant",
            memory_size=512,
            timeout=AUTHORIZER_TIMEOUT,
            core_layer=self.core_layer.layer_version,
            table=self.memory_table.table,
            log_removal_policy=log_removal_policy,
        )
        self.api_function.grant_table_access(self.memory_table.table, read_only=False)
        # The authorizer only looks keys up: it can never change a tenant's data.
        self.authorizer_function.grant_table_access(self.memory_table.table, read_only=True)
        if settings.openai_api_key_secret_arn:
            # The secret itself is created outside the stack, so its value never passes through CDK or a template.
            openai_key = secretsmanager.Secret.from_secret_complete_arn(
                self, "OpenAiApiKey", settings.openai_api_key_secret_arn
            )
            openai_key.grant_read(self.api_function.function)

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
        )

        cdk.CfnOutput(self, "ApiUrl", value=self.api.rest_api.url_for_path(self.api.v1.path))
        cdk.CfnOutput(self, "TableName", value=self.memory_table.table.table_name)
