"""`DeploymentSettings`: the CDK context values the stack reads (defaults in cdk.json; `-c name=value` overrides)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from constructs import Node


class VectorIndexKind(StrEnum):
    DOMAIN = "opensearch"  # an OpenSearch Service domain (default)
    SERVERLESS = "opensearch-serverless"  # an OpenSearch Serverless vector-search collection


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
    return tuple(item.strip() for item in items if item and str(item).strip())


def _as_int(name: str, value: Any, low: int, high: int) -> int:
    number = int(value)
    if not low <= number <= high:
        raise ValueError(f"context {name}={value!r} must be between {low} and {high}")
    return number


@dataclass(frozen=True)
class DeploymentSettings:
    """Every knob a platform team turns per environment; docs/deploy.md lists them with their defaults."""

    retain_data: bool = True
    skip_bundling: bool = False
    throttle_rate_limit: float = 100
    throttle_burst_limit: int = 200
    cors_origins: tuple[str, ...] = ()
    api_gateway_cloudwatch_role: bool = True
    # vector index
    vector_backend: VectorIndexKind = VectorIndexKind.DOMAIN
    embedding_dimensions: int = 1536
    opensearch_instance_type: str = "r7g.large.search"
    opensearch_data_nodes: int = 2
    opensearch_volume_gib: int = 20
    opensearch_operator_role_arns: tuple[str, ...] = ()
    serverless_standby_replicas: bool = True
    # secrets, edge protection, capacity, alarms
    openai_api_key_secret_arn: str = ""
    waf_enabled: bool = True
    tenant_rate_limit: int = 3000  # per 5 minutes: per API key (WAF), per ingest tenant once its signature verifies
    ip_rate_limit: int = 6000  # requests per client IP per 5 minutes
    reserved_concurrency: bool = True
    alarm_email: str = ""

    @classmethod
    def from_context(cls, node: Node) -> DeploymentSettings:
        def get(name: str, default: Any) -> Any:
            value = node.try_get_context(name)
            return default if value is None else value

        d = cls()
        return cls(
            retain_data=_as_bool("retainData", get("retainData", d.retain_data)),
            skip_bundling=_as_bool("skipBundling", get("skipBundling", d.skip_bundling)),
            throttle_rate_limit=float(get("throttleRateLimit", d.throttle_rate_limit)),
            throttle_burst_limit=int(get("throttleBurstLimit", d.throttle_burst_limit)),
            cors_origins=_as_list(get("corsOrigins", d.cors_origins)),
            api_gateway_cloudwatch_role=_as_bool(
                "apiGatewayCloudWatchRole", get("apiGatewayCloudWatchRole", d.api_gateway_cloudwatch_role)
            ),
            vector_backend=VectorIndexKind(str(get("vectorBackend", d.vector_backend))),
            embedding_dimensions=_as_int(
                "embeddingDimensions", get("embeddingDimensions", d.embedding_dimensions), 16, 3072
            ),
            opensearch_instance_type=str(get("opensearchInstanceType", d.opensearch_instance_type)).strip(),
            opensearch_data_nodes=_as_int(
                "opensearchDataNodes", get("opensearchDataNodes", d.opensearch_data_nodes), 1, 40
            ),
            opensearch_volume_gib=_as_int(
                "opensearchVolumeGiB", get("opensearchVolumeGiB", d.opensearch_volume_gib), 10, 16_384
            ),
            opensearch_operator_role_arns=_as_list(get("opensearchOperatorRoleArns", d.opensearch_operator_role_arns)),
            serverless_standby_replicas=_as_bool(
                "serverlessStandbyReplicas", get("serverlessStandbyReplicas", d.serverless_standby_replicas)
            ),
            openai_api_key_secret_arn=str(get("openaiApiKeySecretArn", d.openai_api_key_secret_arn)).strip(),
            waf_enabled=_as_bool("wafEnabled", get("wafEnabled", d.waf_enabled)),
            # WAF's rate-based rules accept 10 to 2 billion requests per evaluation window.
            tenant_rate_limit=_as_int(
                "tenantRateLimit", get("tenantRateLimit", d.tenant_rate_limit), 10, 2_000_000_000
            ),
            ip_rate_limit=_as_int("ipRateLimit", get("ipRateLimit", d.ip_rate_limit), 10, 2_000_000_000),
            reserved_concurrency=_as_bool("reservedConcurrency", get("reservedConcurrency", d.reserved_concurrency)),
            alarm_email=str(get("alarmEmail", d.alarm_email)).strip(),
        )
