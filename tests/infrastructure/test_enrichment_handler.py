"""The enrichment Lambda in process, against a moto table: an EventBridge event of stored memories in, links out."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import boto3
import pytest
from moto import mock_aws
from pydantic import ValidationError

from rapport.adapters.dynamodb.store import create_table
from rapport.composition.services import services_from_environment
from rapport.domain.models import Domain
from rapport.domain.relations import EnrichmentType
from rapport.domain.scope import Scope
from rapport.services.memories import NewMemory
from tests.integration.api_events import FakeLambdaContext

pytestmark = [pytest.mark.infrastructure, pytest.mark.filterwarnings("ignore:No application metrics to publish")]

HANDLER = Path(__file__).resolve().parents[2] / "functions" / "enrichment" / "handler.py"
TABLE_NAME = "rapport-test"


@pytest.fixture
def enrichment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ModuleType]:
    # The API's write path leaves enrichment to this function, as the AWS deployment does.
    for name, value in {
        "RAPPORT_STORE": "dynamodb",
        "RAPPORT_TABLE_NAME": TABLE_NAME,
        "AWS_REGION": "us-east-1",
        "RAPPORT_VECTOR_BACKEND": "embedded",
        "RAPPORT_EMBEDDER": "hashing",
        "RAPPORT_DATA_DIR": str(tmp_path / "data"),
        "RAPPORT_GRAPH_ENRICHMENT": "off",
        "POWERTOOLS_TRACE_DISABLED": "1",
    }.items():
        monkeypatch.setenv(name, value)
    services_from_environment.cache_clear()
    with mock_aws():
        create_table(boto3.resource("dynamodb", region_name="us-east-1"), TABLE_NAME)
        spec = importlib.util.spec_from_file_location("rapport_enrichment_handler_under_test", HANDLER)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    services_from_environment.cache_clear()


def test_an_eventbridge_event_of_stored_memories_gets_them_linked(enrichment: ModuleType) -> None:
    services = services_from_environment()
    ids = [
        services.memories.remember(Scope("tenant-a", "dana"), NewMemory(content=text, domain=Domain.USER)).id
        for text in ("Has a dog named Max", "Has a dog named Max at home")
    ]
    assert services.graph.associations.list_for(Scope("tenant-a", "dana"), ids[1]) == []  # nothing on the write path
    event = {
        "source": "rapport.memories",
        "detail-type": "MemoriesStored",
        "detail": {"tenant_id": "tenant-a", "user_id": "dana", "memory_ids": ids},
    }
    outcome = enrichment.handler(event, FakeLambdaContext())
    assert (outcome["preceded_by"], outcome["similar_to"]) == (1, 2)
    relations = {a.relation for a in services.graph.associations.list_for(Scope("tenant-a", "dana"), ids[1])}
    assert relations == {EnrichmentType.PRECEDED_BY, EnrichmentType.SIMILAR_TO}


def test_a_malformed_event_fails_loudly(enrichment: ModuleType) -> None:
    with pytest.raises(ValidationError):
        enrichment.handler({"detail": {"tenant_id": "tenant-a"}}, FakeLambdaContext())
