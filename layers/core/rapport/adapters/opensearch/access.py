"""Deploy-time index setup: fine-grained access for the functions' roles, then the k-NN index (`prepare_index`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import OpenSearchException

from rapport.adapters.opensearch.index import TENANT_ALIAS_PREFIX, OpenSearchVectorIndex, build_opensearch_client
from rapport.errors import StorageError
from rapport.settings import Settings

# The fine-grained-access role the Rapport functions are mapped to: read and write documents of the memory index,
# nothing else (no other index, no cluster settings, no security API). Its name is the stack's, not the tenant's.
ROLE_NAME = "rapport_memory_index"
# The tenant access role's sessions: reads and a user's erasure through the tenants' filtered aliases only. Which
# alias a session may name is IAM's part (the session's tenant tag in the resource path); this role admits the alias
# pattern and no index, so a session cannot read the index around its alias's filter.
TENANT_ROLE_NAME = "rapport_tenant_aliases"


def tenant_role_definition() -> dict[str, Any]:
    return {
        "description": "Rapport tenant sessions: reads through the tenants' filtered aliases",
        # mget and the bulk deletes of a delete by query are cluster-level actions in OpenSearch.
        "cluster_permissions": ["cluster_composite_ops"],
        "index_permissions": [
            {
                "index_patterns": [f"{TENANT_ALIAS_PREFIX}*"],
                "allowed_actions": [
                    "read",
                    "indices:data/write/delete",
                    "indices:data/write/delete/byquery",
                    "indices:data/write/bulk*",
                ],
            }
        ],
    }


def role_definition(index_name: str) -> dict[str, Any]:
    return {
        "description": "Rapport functions: documents of the memory index",
        # bulk and multi-get are cluster-level actions in OpenSearch, even when every document is in one index.
        "cluster_permissions": ["cluster_composite_ops"],
        "index_permissions": [
            {
                "index_patterns": [index_name, f"{index_name}-*"],
                "allowed_actions": [
                    "crud",
                    "indices:admin/mappings/get",
                    "indices:admin/exists",
                    "indices:admin/aliases",
                ],
            },
            # Making a tenant's alias names the alias as well as the index.
            {"index_patterns": [f"{TENANT_ALIAS_PREFIX}*"], "allowed_actions": ["indices:admin/aliases"]},
        ],
    }


def ensure_role_mapping(
    client: OpenSearch, *, index_name: str, backend_roles: Sequence[str], tenant_roles: Sequence[str] = ()
) -> None:
    """Create or replace the roles and map exactly these IAM role ARNs to them (every PUT is idempotent)."""
    try:
        client.security.create_role(role=ROLE_NAME, body=role_definition(index_name))
        client.security.create_role_mapping(role=ROLE_NAME, body={"backend_roles": sorted(set(backend_roles))})
        if tenant_roles:
            client.security.create_role(role=TENANT_ROLE_NAME, body=tenant_role_definition())
            client.security.create_role_mapping(
                role=TENANT_ROLE_NAME, body={"backend_roles": sorted(set(tenant_roles))}
            )
    except OpenSearchException as exc:
        raise StorageError(f"OpenSearch security API failed: {type(exc).__name__} {getattr(exc, 'error', '')}") from exc


def prepare_index(
    settings: Settings,
    backend_roles: Sequence[str],
    *,
    client: OpenSearch | None = None,
    tenant_roles: Sequence[str] = (),
) -> bool:
    """Map the roles (the domain's fine-grained access) and create the k-NN index when missing. True when the index
    was created by this call.

    An existing index of another width fails the deployment with the fix in the message (`rapport reindex`).
    """
    if not settings.opensearch_url:
        raise ValueError("RAPPORT_OPENSEARCH_URL is required to prepare the index")
    client = client or build_opensearch_client(settings.opensearch_url, region=settings.aws_region)
    ensure_role_mapping(
        client, index_name=settings.opensearch_index, backend_roles=backend_roles, tenant_roles=tenant_roles
    )
    index = OpenSearchVectorIndex(client, settings.opensearch_index, settings.embedding_dimensions)
    return index.ensure_index()
