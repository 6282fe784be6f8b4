"""CloudFormation custom resource: prepares the OpenSearch k-NN index (access role mapping, then the index itself)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from rapport.composition.functions import settings_from_environment

logger = Logger(service="rapport-index-setup")


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """The CDK provider framework calls this and answers CloudFormation; an exception fails the deployment step.

    Create and Update do the same idempotent work (an Update brings a new list of roles to map). Delete leaves the
    index alone: it goes with the domain or collection, and a retained one is rebuilt by `rapport reindex`.
    """
    from rapport.adapters.opensearch.access import prepare_index  # opensearch-py: only when an event comes

    settings = settings_from_environment()
    physical_id = f"{settings.opensearch_url}/{settings.opensearch_index}"
    if event["RequestType"] in ("Create", "Update"):
        roles = [str(role) for role in event["ResourceProperties"].get("BackendRoles", [])]
        tenant_roles = [str(role) for role in event["ResourceProperties"].get("TenantRoles", [])]
        created = prepare_index(settings, roles, tenant_roles=tenant_roles)
        logger.info(
            "vector index ready", index=settings.opensearch_index, index_created=created, mapped_roles=len(roles)
        )
    return {"PhysicalResourceId": physical_id}
