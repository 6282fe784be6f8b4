"""Operating a deployment from the `rapport` command, and the deploy-time index setup against the recorded fake."""

from __future__ import annotations

import importlib.util
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from rapport.adapters.dynamodb.store import create_table
from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.adapters.opensearch import access
from rapport.adapters.opensearch.access import ROLE_NAME, prepare_index
from rapport.cli import main
from rapport.composition.adapters import build_store
from rapport.composition.services import Services
from rapport.domain.models import Domain
from rapport.domain.scope import Scope
from rapport.services.auth import ApiKeyAuthenticator, hash_key
from rapport.services.memories import NewMemory
from rapport.settings import Settings
from tests.integration.test_opensearch_index import CREATED_INDEX, FakeCluster, make_client

pytestmark = pytest.mark.integration

FUNCTIONS_DIR = Path(__file__).resolve().parents[2] / "functions"


@pytest.fixture
def dynamodb_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("RAPPORT_STORE", "dynamodb")
    monkeypatch.setenv("RAPPORT_TABLE_NAME", "rapport-cli")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    with mock_aws():
        yield create_table(boto3.resource("dynamodb", region_name="us-east-1"), "rapport-cli")


def test_keys_create_writes_only_the_hash_to_dynamodb_and_the_authorizer_finds_it(
    dynamodb_env: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "create", "--tenant", "acme"]) == 0
    key = capsys.readouterr().out.strip()
    assert key.startswith("rk_")
    items = dynamodb_env.scan()["Items"]
    assert key not in repr(items) and hash_key(key) in repr(items)
    # The authorizer's lookup (by hash, through gsi3) maps it to the tenant
    assert ApiKeyAuthenticator(build_store(Settings())).tenant_for_key(key) == "acme"


def test_ingest_secret_set_stores_the_secret_in_secrets_manager_under_the_stack_prefix(
    dynamodb_env: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAPPORT_INGEST_SECRET_BACKEND", "secretsmanager")
    monkeypatch.setenv("RAPPORT_INGEST_SECRET_PREFIX", "Rapport/ingest")
    monkeypatch.setattr(sys, "stdin", io.StringIO("slack-signing-secret\n"))
    assert main(["ingest-secret", "set", "--tenant", "acme", "--source", "slack"]) == 0
    assert "slack-signing-secret" not in capsys.readouterr().out
    value = boto3.client("secretsmanager", region_name="us-east-1").get_secret_value(
        SecretId="Rapport/ingest/acme/slack"
    )
    assert value["SecretString"] == "slack-signing-secret"
    # Nothing of it in the table
    assert "slack-signing-secret" not in repr(dynamodb_env.scan()["Items"])


def test_an_empty_secret_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))
    assert main(["ingest-secret", "set", "--tenant", "acme", "--source", "webhook", "--data-dir", str(tmp_path)]) == 2


def test_reindex_rebuilds_a_lost_index_from_the_store_without_embedding_calls(
    services: Services, settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given memories of two tenants in the local store
    for tenant, content in (
        ("tenant-a", "Has a dog named Max"),
        ("tenant-a", "Works at Acme"),
        ("tenant-b", "Likes tea"),
    ):
        services.memories.remember(Scope(tenant, "dana"), NewMemory(content=content, domain=Domain.USER))
    assert isinstance(services.store, SqliteMemoryStore)
    services.store.close()
    # And an index that lost everything (a new data volume, a changed backend)
    services.index.close()  # type: ignore[attr-defined]
    settings.embedded_index_path.unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{settings.embedded_index_path}{suffix}").unlink(missing_ok=True)
    # When the operator runs `rapport reindex --tenant tenant-a` (no model may be called for it)
    monkeypatch.setenv("RAPPORT_EMBEDDER", "hashing")
    monkeypatch.setenv("RAPPORT_HASHING_DIMENSIONS", str(settings.hashing_dimensions))
    monkeypatch.setattr("rapport.composition.embedders.build_embedder", _no_embedder)
    assert main(["reindex", "--tenant", "tenant-a", "--data-dir", str(settings.data_dir)]) == 0
    assert "re-indexed 2 memories of tenant tenant-a" in capsys.readouterr().out
    # Then that tenant's memories are searchable again, the other tenant's are not touched
    index = EmbeddedVectorIndex(settings.embedded_index_path, settings.hashing_dimensions)
    assert index.count(Scope("tenant-a", "dana")) == 2 and index.count(Scope("tenant-b", "dana")) == 0
    index.close()
    assert main(["reindex", "--data-dir", str(settings.data_dir)]) == 0
    assert "re-indexed 3 memories of every tenant" in capsys.readouterr().out


def _no_embedder(settings: Settings) -> Any:
    raise AssertionError("reindex must not build an embedder: embeddings are stored with the items")


def test_index_create_on_the_embedded_index_says_there_is_nothing_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RAPPORT_EMBEDDER", "hashing")
    assert main(["index", "create", "--data-dir", str(tmp_path)]) == 0
    assert "needs no creation" in capsys.readouterr().out


# --- deploy-time index setup (the custom resource) --------------------------------------------------------------


def test_prepare_index_maps_the_roles_then_creates_the_knn_index() -> None:
    cluster = FakeCluster()
    cluster.on("PUT", r"/_plugins/_security/api/roles/.*", 200, {"status": "OK"})
    cluster.on("PUT", r"/_plugins/_security/api/rolesmapping/.*", 200, {"status": "OK"})
    cluster.on("HEAD", r"/rapport-memories", 404, None)
    cluster.on("PUT", r"/rapport-memories", 200, CREATED_INDEX)
    settings = Settings(opensearch_url="https://search.example", embedding_dimensions=16)
    roles = ["arn:aws:iam::123456789012:role/api", "arn:aws:iam::123456789012:role/indexer"]

    assert prepare_index(settings, roles, client=make_client(cluster)) is True

    role, mapping, _, create = cluster.requests
    assert role.path == f"/_plugins/_security/api/roles/{ROLE_NAME}"
    assert role.body["index_permissions"][0]["index_patterns"] == ["rapport-memories", "rapport-memories-*"]
    assert mapping.body == {"backend_roles": sorted(roles)}
    assert create.body["mappings"]["properties"]["embedding"]["dimension"] == 16


def test_the_setup_handler_prepares_on_create_and_update_and_leaves_the_index_on_delete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RAPPORT_OPENSEARCH_URL", "https://search.example")
    spec = importlib.util.spec_from_file_location(
        "rapport_index_setup_under_test", FUNCTIONS_DIR / "index_setup" / "handler.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    calls: list[list[str]] = []
    # The handler imports opensearch-py's side only when an event comes, so the stand-in goes where it looks then.
    monkeypatch.setattr(access, "prepare_index", lambda settings, roles, tenant_roles=(): calls.append(roles) or True)
    from tests.integration.api_events import FakeLambdaContext

    for request_type in ("Create", "Update", "Delete"):
        answer = module.handler(
            {"RequestType": request_type, "ResourceProperties": {"BackendRoles": ["arn:r"], "Dimensions": "8"}},
            FakeLambdaContext(),
        )
        assert answer == {"PhysicalResourceId": "https://search.example/rapport-memories"}
    assert calls == [["arn:r"], ["arn:r"]]
