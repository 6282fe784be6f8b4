"""The indexer Lambda over stream records: changes reach the embedded and the faked OpenSearch index; poison fails."""

from __future__ import annotations

import base64
import importlib.util
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import pytest
from boto3.dynamodb.types import TypeSerializer

from rapport.adapters.dynamodb.records import memory_to_item
from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.sqlite_store import SqliteMemoryStore
from rapport.adapters.opensearch.index import OpenSearchVectorIndex, document_id
from rapport.domain.models import Domain, Memory, MemoryStatus
from rapport.domain.scope import Scope
from rapport.errors import NotFoundError
from rapport.ports.store import MemoryStore
from rapport.ports.vector_index import IndexQuery, VectorIndex
from rapport.services.index_sync import IndexSync
from tests.integration.api_events import FakeLambdaContext
from tests.integration.test_opensearch_index import DELETED_DOC, INDEXED_DOC, FakeCluster, make_client

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore:No application metrics to publish")]

FUNCTIONS_DIR = Path(__file__).resolve().parents[2] / "functions"
DIMS = 4
AT = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
STREAM_ARN = "arn:aws:dynamodb:us-east-1:123456789012:table/rapport/stream/2026-01-05T09:00:00.000"
_serializer = TypeSerializer()


def memory(memory_id: str, content: str, *, embedding: list[float], strength: float = 1.0) -> Memory:
    return Memory(
        id=memory_id,
        tenant_id="tenant-a",
        user_id="dana",
        domain=Domain.USER,
        type="fact",
        status=MemoryStatus.ACTIVE,
        content=content,
        strength=strength,
        created_at=AT,
        updated_at=AT,
        last_reinforced_at=AT,
        embedding=embedding,
    )


def wire_image(item: dict[str, Any]) -> dict[str, Any]:
    """A table item as a stream event carries it: DynamoDB JSON, binary values as base64 text."""
    image: dict[str, Any] = {}
    for name, value in item.items():
        serialized = _serializer.serialize(value)
        if "B" in serialized:
            serialized = {"B": base64.b64encode(bytes(serialized["B"])).decode()}
        image[name] = serialized
    return image


def stream_record(
    event_name: str, sequence: str, new: dict[str, Any] | None, old: dict[str, Any] | None
) -> dict[str, Any]:
    keyed = new or old
    assert keyed is not None
    dynamodb: dict[str, Any] = {
        "ApproximateCreationDateTime": 1767603600,
        "Keys": {"pk": {"S": keyed["pk"]}, "sk": {"S": keyed["sk"]}},
        "SequenceNumber": sequence,
        "SizeBytes": 512,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    if new is not None:
        dynamodb["NewImage"] = wire_image(new)
    if old is not None:
        dynamodb["OldImage"] = wire_image(old)
    return {
        "eventID": f"event-{sequence}",
        "eventName": event_name,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": "us-east-1",
        "dynamodb": dynamodb,
        "eventSourceARN": STREAM_ARN,
    }


DOG = memory("01JDOG", "Has a dog named Max", embedding=[1.0, 0.0, 0.0, 0.0])
DOG_RENAMED = DOG.model_copy(update={"content": "Has a dog named Rex", "embedding": [0.0, 1.0, 0.0, 0.0]})
ACME = memory("01JACME", "Works at Acme", embedding=[0.0, 0.0, 1.0, 0.0])
ACME_REINFORCED = ACME.model_copy(update={"strength": 0.7})


class StoredVectors:
    """The table's vector items as the indexer reads them (`MemoryStore.get_memory`): the latest of each memory."""

    def __init__(self, *memories: Memory) -> None:
        self.memories = {m.id: m for m in memories}

    def get_memory(self, scope: Scope, memory_id: str) -> Memory:
        if memory_id not in self.memories:
            raise NotFoundError(f"memory {memory_id} not found")
        return self.memories[memory_id]


def poison_item() -> dict[str, Any]:
    """A MEM# item the indexer cannot read: its (old layout, inline) embedding is five bytes, not whole float32
    values."""
    item = memory_to_item(memory("01JBAD", "Likes tea", embedding=[0.0, 0.0, 0.0, 1.0]))
    item["embedding"] = b"\x00\x01\x02\x03\x04"
    return item


def batch() -> dict[str, Any]:
    # Memory items carry no vector (it is an item of its own): the indexer reads it from the store
    dog, dog_renamed = memory_to_item(DOG), memory_to_item(DOG_RENAMED)
    acme, acme_reinforced = memory_to_item(ACME), memory_to_item(ACME_REINFORCED)
    return {
        "Records": [
            stream_record("INSERT", "100", dog, None),
            stream_record("INSERT", "200", acme, None),
            stream_record("INSERT", "300", poison_item(), None),
            stream_record("MODIFY", "400", dog_renamed, dog),
            stream_record("MODIFY", "500", acme_reinforced, acme),  # strength only: nothing the index holds
            stream_record("REMOVE", "600", None, acme_reinforced),  # a delete, or one memory of an erasure
        ]
    }


def load_indexer(
    index: VectorIndex, monkeypatch: pytest.MonkeyPatch, vectors: StoredVectors | None = None
) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "rapport_indexer_under_test", FUNCTIONS_DIR / "indexer" / "handler.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    stored = vectors or StoredVectors(DOG_RENAMED, ACME_REINFORCED)
    monkeypatch.setattr(module, "index_sync", lambda: IndexSync(index, cast(MemoryStore, stored)))
    return module


def ids(index: VectorIndex, vector: list[float]) -> list[str]:
    query = IndexQuery(tenant_id="tenant-a", user_id="dana", domains=(Domain.USER,), k=10)
    return [hit.memory_id for hit in index.knn_search(query, vector) if hit.score > 0.5]


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[EmbeddedVectorIndex]:
    index = EmbeddedVectorIndex(tmp_path / "vectors.sqlite3", DIMS)
    yield index
    index.close()


def test_a_batch_reaches_the_embedded_index_and_only_the_poison_record_fails(
    embedded: EmbeddedVectorIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexer = load_indexer(embedded, monkeypatch)
    # When the stream hands the indexer inserts, changes, a removal and one unreadable record
    response = indexer.handler(batch(), FakeLambdaContext())
    # Then only the poison record is reported, by its sequence number, so Lambda retries from there alone
    assert response == {"batchItemFailures": [{"itemIdentifier": "300"}]}
    # And the index holds the renamed dog (found by its new vector and words), and no longer the removed memory
    assert embedded.count(Scope("tenant-a", "dana")) == 1
    assert ids(embedded, [0.0, 1.0, 0.0, 0.0]) == ["01JDOG"]
    assert ids(embedded, [1.0, 0.0, 0.0, 0.0]) == []
    query = IndexQuery(tenant_id="tenant-a", user_id="dana", domains=(Domain.USER,), k=10)
    assert [h.memory_id for h in embedded.keyword_search(query, "Rex")] == ["01JDOG"]
    assert embedded.keyword_search(query, "Acme") == []


def test_a_batch_reaches_opensearch_as_document_writes_and_deletes(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = FakeCluster()
    cluster.on("PUT", r"/rapport-memories/_doc/[0-9a-f]+", 200, INDEXED_DOC)
    cluster.on("DELETE", r"/rapport-memories/_doc/[0-9a-f]+", 200, DELETED_DOC)
    index = OpenSearchVectorIndex(make_client(cluster), "rapport-memories", DIMS)
    indexer = load_indexer(index, monkeypatch)

    response = indexer.handler(batch(), FakeLambdaContext())

    assert response == {"batchItemFailures": [{"itemIdentifier": "300"}]}
    dog_doc = f"/rapport-memories/_doc/{document_id('tenant-a', 'dana', '01JDOG')}"
    acme_doc = f"/rapport-memories/_doc/{document_id('tenant-a', 'dana', '01JACME')}"
    # Insert dog, insert acme, rename dog, (strength-only change: no request), remove acme
    assert [(r.method, r.path) for r in cluster.requests] == [
        ("PUT", dog_doc),
        ("PUT", acme_doc),
        ("PUT", dog_doc),
        ("DELETE", acme_doc),
    ]
    renamed = cluster.requests[2].body
    assert renamed["content"] == "Has a dog named Rex" and renamed["embedding"] == [0.0, 1.0, 0.0, 0.0]


def test_an_index_outage_fails_the_records_it_touched_for_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = FakeCluster()
    cluster.on("PUT", r"/rapport-memories/_doc/[0-9a-f]+", 503, {"error": {"type": "unavailable"}, "status": 503})
    cluster.on("DELETE", r"/rapport-memories/_doc/[0-9a-f]+", 200, DELETED_DOC)
    indexer = load_indexer(OpenSearchVectorIndex(make_client(cluster), "rapport-memories", DIMS), monkeypatch)
    response = indexer.handler(batch(), FakeLambdaContext())
    # Every write failed and is reported; the removal (a delete) went through
    assert response == {"batchItemFailures": [{"itemIdentifier": s} for s in ("100", "200", "300", "400")]}


def test_a_memory_whose_vector_is_not_readable_yet_fails_and_its_retry_indexes_it(
    embedded: EmbeddedVectorIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the record of a new memory that reaches the indexer before its vector item is readable
    vectors = StoredVectors(DOG.without_embedding(), ACME)
    indexer = load_indexer(embedded, monkeypatch, vectors)
    dog, acme = memory_to_item(DOG), memory_to_item(ACME)
    record = {"Records": [stream_record("INSERT", "100", dog, None), stream_record("INSERT", "200", acme, None)]}

    # Then the record fails (Lambda retries it), and once the vector is there the retry indexes the memory
    assert indexer.handler(record, FakeLambdaContext()) == {"batchItemFailures": [{"itemIdentifier": "100"}]}
    vectors.memories[DOG.id] = DOG
    assert indexer.handler(record, FakeLambdaContext()) == {"batchItemFailures": []}
    assert ids(embedded, [1.0, 0.0, 0.0, 0.0]) == ["01JDOG"]


def test_the_indexer_wires_an_index_and_the_store_from_its_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, value in {
        "RAPPORT_VECTOR_BACKEND": "embedded",
        "RAPPORT_EMBEDDER": "hashing",
        "RAPPORT_HASHING_DIMENSIONS": "64",
        "RAPPORT_DATA_DIR": str(tmp_path),
    }.items():
        monkeypatch.setenv(name, value)
    spec = importlib.util.spec_from_file_location("rapport_indexer_wiring", FUNCTIONS_DIR / "indexer" / "handler.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from rapport.composition.functions import index_sync

    index_sync.cache_clear()
    sync = module.index_sync()
    assert isinstance(sync._index, EmbeddedVectorIndex) and sync._index.dimensions == 64
    assert isinstance(sync._store, SqliteMemoryStore)  # where the vectors are read; no embedder, no model
