"""Deploy-time index setup: fine-grained access for the functions' roles, then the k-NN index (`prepare_index`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import OpenSearchException

from rapport.adapters.opensearch.index import OpenSearchVectorIndex, build_opensearch_client
from rapport.errors import StorageError
from rapport.settings import Settings

# The fine-grained-access role the Rapport functions are mapped to: read and write documents of the memory index,
# nothing else (no other index, no cluster settings, no security API). Its name is the stack's, not the tenant's.
ROLE_NAME = "rapport_memory_index"


def role_definition(index_name: str) -> dict[str, Any]:
    return {
        "description": "Rapport functions: documents of the memory index",
        # bulk and multi-get are cluster-level actions in OpenSearch, even when every document is in one index.
        "cluster_permissions": ["cluster_composite_ops"],
        "index_permissions": [
            {
                "index_patterns": [index_name, f"{index_name}-*"],
                "allowed_actions": ["crud", "indices:admin/mappings/get", "indices:admin/exists"],
            }
        ],
    }


def ensure_role_mapping(client: OpenSearch, *, index_name: str, backend_roles: Sequence[str]) -> None:
    """Create or replace the role and map exactly these IAM role ARNs to it (both PUTs are idempotent)."""
    try:
        client.security.create_role(role=ROLE_NAME, body=role_definition(index_name))
        client.security.create_role_mapping(role=ROLE_NAME, body={"backend_roles": sorted(set(backend_roles))})
    except OpenSearchException as exc:
        raise StorageError(f"OpenSearch security API failed: {type(exc).__name__} {getattr(exc, 'error', '')}") from exc


def prepare_index(settings: Settings, backend_roles: Sequence[str], *, client: OpenSearch | None = None) -> bool:
    """Map the roles (a managed domain with fine-grained access; Serverless uses its data access policy instead)
    and create the k-NN index when missing. True when the index was created by this call.

    An existing index of another width fails the deployment with the fix in the message (`rapport reindex`).
    """
    if not settings.opensearch_url:
        raise ValueError("RAPPORT_OPENSEARCH_URL is required to prepare the index")
    client = client or build_opensearch_client(
        settings.opensearch_url, region=settings.aws_region, service=settings.opensearch_service
    )
    if settings.opensearch_service == "es":
        ensure_role_mapping(client, index_name=settings.opensearch_index, backend_roles=backend_roles)
    index = OpenSearchVectorIndex(client, settings.opensearch_index, settings.embedding_dimensions)
    return index.ensure_index()
