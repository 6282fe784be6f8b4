"""`DeploymentSettings`: the CDK context values the stack reads (defaults in cdk.json; `-c name=value` overrides)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from constructs import Node


class Environment(StrEnum):
    """`-c env=...`: the API's stage name, and the sizes and data policy a stack of that kind starts from."""

    DEV = "dev"
    STAGING = "staging"
    PROD = "prod"


@dataclass(frozen=True)
class Profile:
    """What an environment implies unless a context value says otherwise (docs/deploy.md#environments)."""

    retain_data: bool
    reserved_concurrency: bool
    opensearch_instance_type: str
    opensearch_data_nodes: int
    opensearch_master_nodes: int
    opensearch_master_instance_type: str = "m7g.large.search"
    # X-Ray on the functions, the state machine and the API stage: where traces are read, and paid for per trace.
    tracing: bool = True


PROFILES: dict[Environment, Profile] = {
    # One small node, everything deletable with the stack, no reservations a fresh account cannot give.
    Environment.DEV: Profile(
        retain_data=False,
        reserved_concurrency=False,
        opensearch_instance_type="t3.small.search",
        opensearch_data_nodes=1,
        opensearch_master_nodes=0,
        tracing=False,
    ),
    # Production's instance type over two zones, without the masters: rehearses deploys at a third of the cost.
    Environment.STAGING: Profile(
        retain_data=True,
        reserved_concurrency=True,
        opensearch_instance_type="r7g.large.search",
        opensearch_data_nodes=2,
        opensearch_master_nodes=0,
    ),
    # Three data nodes in three zones and three dedicated masters: a zone lost keeps a quorum and every shard.
    Environment.PROD: Profile(
        retain_data=True,
        reserved_concurrency=True,
        opensearch_instance_type="r7g.large.search",
        opensearch_data_nodes=3,
        opensearch_master_nodes=3,
    ),
}


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


def _as_tags(value: Any) -> tuple[tuple[str, str], ...]:
    """A JSON object from cdk.json, or `key=value,key=value` from the command line."""
    if isinstance(value, dict):
        pairs = [(str(k), str(v)) for k, v in value.items()]
    else:
        pairs = []
        for item in _as_list(value):
            key, sep, tag_value = item.partition("=")
            if not sep or not key.strip():
                raise ValueError(f"context tags: {item!r} is not key=value")
            pairs.append((key.strip(), tag_value.strip()))
    return tuple(pairs)


def _as_int(name: str, value: Any, low: int, high: int) -> int:
    number = int(value)
    if not low <= number <= high:
        raise ValueError(f"context {name}={value!r} must be between {low} and {high}")
    return number


@dataclass(frozen=True)
class DeploymentSettings:
    """Every knob a platform team turns per environment; docs/deploy.md lists them with their defaults."""

    environment: Environment = Environment.PROD
    retain_data: bool = True
    skip_bundling: bool = False
    throttle_rate_limit: float = 100
    throttle_burst_limit: int = 200
    cors_origins: tuple[str, ...] = ()
    api_gateway_cloudwatch_role: bool = True
    # vector index: an OpenSearch Service domain
    embedding_dimensions: int = 1536
    opensearch_instance_type: str = "r7g.large.search"
    opensearch_data_nodes: int = 3
    opensearch_master_nodes: int = 3
    opensearch_master_instance_type: str = "m7g.large.search"
    # Multi-AZ with Standby: one zone of the three holds no active shards and takes over in under a minute
    # (needs three zones, dedicated masters and a data node count that is a multiple of three).
    opensearch_standby: bool = False
    opensearch_volume_gib: int = 20
    opensearch_operator_role_arns: tuple[str, ...] = ()
    # secrets, edge protection, capacity, alarms
    openai_api_key_secret_arn: str = ""
    waf_enabled: bool = True
    tenant_rate_limit: int = 3000  # per 5 minutes: per API key (WAF), per ingest tenant once its signature verifies
    ip_rate_limit: int = 6000  # requests per client IP per 5 minutes
    reserved_concurrency: bool = True
    tracing: bool = True
    alarm_email: str = ""
    # where the alarms' descriptions point: docs/operations.md in the repository the team reads
    runbook_url: str = "docs/operations.md"
    # edge, accounts, cost allocation
    api_domain_name: str = ""
    api_certificate_arn: str = ""
    hosted_zone_id: str = ""
    hosted_zone_name: str = ""
    permissions_boundary_arn: str = ""
    tags: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_context(cls, node: Node) -> DeploymentSettings:
        """The environment's profile first, then any context value given: `-c env=dev -c opensearchDataNodes=2`."""
        environment = Environment(str(node.try_get_context("env") or Environment.PROD.value).strip().lower())
        profile = PROFILES[environment]

        def get(name: str, default: Any) -> Any:
            value = node.try_get_context(name)
            return default if value is None else value

        d = cls()
        master_nodes = _as_int(
            "opensearchMasterNodes", get("opensearchMasterNodes", profile.opensearch_master_nodes), 0, 5
        )
        if master_nodes not in (0, 3, 5):
            raise ValueError(f"context opensearchMasterNodes={master_nodes} must be 0, 3 or 5 (a quorum)")
        backend = str(get("vectorBackend", "opensearch")).strip()
        if backend != "opensearch":
            # Refused, not ignored: a deploy asking for another engine must not get a domain it did not expect.
            raise ValueError(
                f"context vectorBackend={backend!r}: the index runs on an OpenSearch Service domain only "
                "('opensearch'); a Serverless vector collection assigns its own document ids, which the index's "
                "upserts, deletes and reads by id rely on (docs/deploy.md)"
            )
        return cls(
            environment=environment,
            retain_data=_as_bool("retainData", get("retainData", profile.retain_data)),
            skip_bundling=_as_bool("skipBundling", get("skipBundling", d.skip_bundling)),
            throttle_rate_limit=float(get("throttleRateLimit", d.throttle_rate_limit)),
            throttle_burst_limit=int(get("throttleBurstLimit", d.throttle_burst_limit)),
            cors_origins=_as_list(get("corsOrigins", d.cors_origins)),
            api_gateway_cloudwatch_role=_as_bool(
                "apiGatewayCloudWatchRole", get("apiGatewayCloudWatchRole", d.api_gateway_cloudwatch_role)
            ),
            embedding_dimensions=_as_int(
                "embeddingDimensions", get("embeddingDimensions", d.embedding_dimensions), 16, 3072
            ),
            opensearch_instance_type=str(get("opensearchInstanceType", profile.opensearch_instance_type)).strip(),
            opensearch_data_nodes=_as_int(
                "opensearchDataNodes", get("opensearchDataNodes", profile.opensearch_data_nodes), 1, 40
            ),
            opensearch_master_nodes=master_nodes,
            opensearch_master_instance_type=str(
                get("opensearchMasterInstanceType", profile.opensearch_master_instance_type)
            ).strip(),
            opensearch_standby=_as_bool("opensearchStandby", get("opensearchStandby", d.opensearch_standby)),
            opensearch_volume_gib=_as_int(
                "opensearchVolumeGiB", get("opensearchVolumeGiB", d.opensearch_volume_gib), 10, 16_384
            ),
            opensearch_operator_role_arns=_as_list(get("opensearchOperatorRoleArns", d.opensearch_operator_role_arns)),
            openai_api_key_secret_arn=str(get("openaiApiKeySecretArn", d.openai_api_key_secret_arn)).strip(),
            waf_enabled=_as_bool("wafEnabled", get("wafEnabled", d.waf_enabled)),
            # WAF's rate-based rules accept 10 to 2 billion requests per evaluation window.
            tenant_rate_limit=_as_int(
                "tenantRateLimit", get("tenantRateLimit", d.tenant_rate_limit), 10, 2_000_000_000
            ),
            ip_rate_limit=_as_int("ipRateLimit", get("ipRateLimit", d.ip_rate_limit), 10, 2_000_000_000),
            reserved_concurrency=_as_bool(
                "reservedConcurrency", get("reservedConcurrency", profile.reserved_concurrency)
            ),
            tracing=_as_bool("tracing", get("tracing", profile.tracing)),
            alarm_email=str(get("alarmEmail", d.alarm_email)).strip(),
            runbook_url=str(get("runbookUrl", d.runbook_url)).strip() or d.runbook_url,
            api_domain_name=str(get("apiDomainName", d.api_domain_name)).strip().lower().rstrip("."),
            api_certificate_arn=str(get("apiCertificateArn", d.api_certificate_arn)).strip(),
            hosted_zone_id=str(get("hostedZoneId", d.hosted_zone_id)).strip(),
            hosted_zone_name=str(get("hostedZoneName", d.hosted_zone_name)).strip().rstrip("."),
            permissions_boundary_arn=str(get("permissionsBoundaryArn", d.permissions_boundary_arn)).strip(),
            tags=_as_tags(get("tags", d.tags)),
        )._checked()

    def _checked(self) -> DeploymentSettings:
        if self.api_domain_name and not (self.api_certificate_arn or self.hosted_zone_id):
            raise ValueError(
                f"context apiDomainName={self.api_domain_name} needs apiCertificateArn (an ACM certificate in this "
                "region) or hostedZoneId and hostedZoneName (the stack then creates a DNS-validated one)"
            )
        if bool(self.hosted_zone_id) != bool(self.hosted_zone_name):
            raise ValueError("context hostedZoneId and hostedZoneName go together")
        if self.opensearch_standby and (self.opensearch_master_nodes == 0 or self.opensearch_data_nodes % 3):
            raise ValueError(
                "context opensearchStandby=true needs dedicated masters (opensearchMasterNodes=3) and a multiple of "
                f"three data nodes (opensearchDataNodes={self.opensearch_data_nodes})"
            )
        return self

    @property
    def opensearch_zones(self) -> int:
        """Three zones when the data nodes divide into three (and always with standby), else two, else one."""
        nodes = self.opensearch_data_nodes
        if self.opensearch_standby or (nodes >= 3 and nodes % 3 == 0):
            return 3
        return 2 if nodes >= 2 and nodes % 2 == 0 else 1
