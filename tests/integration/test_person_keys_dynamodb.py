"""Per-person keys on DynamoDB (moto, KMS included): an end user's content is ciphertext in the table's items, the
API still reads it, and once they are erased the items copied before (what point-in-time recovery, a backup, a
stream record or a dead letter keeps) no longer open, while everyone else's still do."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from boto3.dynamodb.types import Binary, TypeDeserializer
from botocore.exceptions import ClientError
from moto import mock_aws

from rapport.adapters.aws.kms_data_keys import KmsDataKeys
from rapport.adapters.dynamodb import keys
from rapport.adapters.dynamodb.person_keys import (
    WRAPPED_ATTRIBUTE,
    DynamoDbPersonKeys,
    create_person_keys_table,
    person_key_partition,
)
from rapport.adapters.dynamodb.sealing import open_image, open_wire_item
from rapport.adapters.dynamodb.store import DynamoDbMemoryStore, create_table
from rapport.adapters.dynamodb.stream import memory_change
from rapport.adapters.local.embedded_index import EmbeddedVectorIndex
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.composition.services import Services, build_services
from rapport.domain.models import Domain, Memory
from rapport.domain.scope import Scope
from rapport.errors import ErasedContentError
from rapport.ports.items import ItemScope
from rapport.sealing import SEALED_BYTES_PREFIX, Keyring
from rapport.services.memories import NewMemory
from rapport.settings import Settings
from tests.integration.test_erasure_leaves_nothing import talk

pytestmark = pytest.mark.integration

TABLE = "rapport-sealed"
KEYS_TABLE = "rapport-person-keys"
GONE = Scope("tenant-a", "zed-erase-4821")
KEPT = Scope("tenant-a", "yara-keep-1193")
WORDS = ["Quokka7731", "Marzipanfabrik", "Bartholomew"]
_deserialize = TypeDeserializer().deserialize


class Aws:
    def __init__(self) -> None:
        self.resource = boto3.resource("dynamodb", region_name="us-east-1")
        create_table(self.resource, TABLE)
        create_person_keys_table(self.resource, KEYS_TABLE)
        self.kms = boto3.client("kms", region_name="us-east-1")
        self.key_id = self.kms.create_key(Description="rapport person keys")["KeyMetadata"]["KeyId"]
        # A client of its own, without the store's hooks: what a backup, a restore or an operator reads.
        self.raw = boto3.client("dynamodb", region_name="us-east-1")

    def keyring(self) -> Keyring:
        """A process's keys (a new one each time: nothing cached)."""
        person_keys = DynamoDbPersonKeys(
            KEYS_TABLE,
            KmsDataKeys(self.key_id, client=self.kms),
            dynamodb_resource=boto3.resource("dynamodb", region_name="us-east-1"),
        )
        return Keyring(person_keys, ttl_seconds=60)

    def store(self, keyring: Keyring | None) -> DynamoDbMemoryStore:
        # Each store its own resource, so a plain store's client carries no sealing hooks of another's.
        resource = boto3.resource("dynamodb", region_name="us-east-1")
        return DynamoDbMemoryStore(TABLE, dynamodb_resource=resource, keyring=keyring)

    def items_of(self, scope: Scope) -> list[dict[str, Any]]:
        """Every item of the person's partition in the wire form, as a backup or the stream holds it."""
        partition = keys.user_partition(scope.tenant_id, scope.user_id)
        found = self.raw.query(
            TableName=TABLE,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": partition}},
        )["Items"]
        assert found
        return found


@pytest.fixture
def aws() -> Iterator[Aws]:
    with mock_aws():
        yield Aws()


def services_over(settings: Settings, clock: object, store: DynamoDbMemoryStore) -> Services:
    embedder = HashingEmbedder(settings.hashing_dimensions)
    index = EmbeddedVectorIndex(settings.embedded_index_path, embedder.dimensions)
    return build_services(settings, clock=clock, store=store, index=index, embedder=embedder)  # type: ignore[arg-type]


def spelled(items: list[dict[str, Any]], needles: list[str]) -> list[str]:
    def raw(value: Any) -> str:
        return bytes(value).decode("latin-1") if isinstance(value, bytes | Binary) else str(value)

    return [n for item in items for n in needles if n in json.dumps(item, default=raw)]


def test_content_is_ciphertext_in_the_table_and_the_api_still_reads_it(
    aws: Aws, settings: Settings, clock: object
) -> None:
    services = services_over(settings, clock, aws.store(aws.keyring()))
    ids = talk(services, GONE, "Quokka7731 sandwiches", "sess-9911-zed", "Bartholomew", "Marzipanfabrik")

    assert "Quokka7731" in services.store.get_memory(GONE, ids[1]).content
    assert "Marzipanfabrik" in services.store.get_interaction(GONE, ids[0]).messages[0].content
    assert any(p.name == "Bartholomew" for p in services.people.list_people(GONE, limit=10, cursor=None).items)
    assert services.store.get_memories(GONE, [ids[3]])[0].embedding is not None

    items = aws.items_of(GONE)
    assert spelled(items, WORDS) == []
    vectors = [item for item in items if item[keys.SORT_KEY]["S"].startswith(keys.EMBEDDING_PREFIX)]
    assert vectors and all(bytes(v["embedding"]["B"]).startswith(SEALED_BYTES_PREFIX) for v in vectors)
    # What drives the queries stays readable: ids, domain, type, status, scores, times, the assistant
    memory = next(item for item in items if item[keys.SORT_KEY]["S"] == keys.memory_sort_key(ids[1]))
    assert memory["content"]["S"].startswith("enc:v1:")
    assert {"domain", "type", "status", "strength", "created_at", "gsi1pk", "gsi2pk"} <= memory.keys()
    assert memory["domain"] == {"S": "user"}
    # The key is in its own table, wrapped, naming the person by hash
    wrapped = aws.raw.scan(TableName=KEYS_TABLE)["Items"]
    assert [item[keys.PARTITION_KEY]["S"] for item in wrapped] == [person_key_partition(GONE.tenant_id, GONE.user_hash)]


def test_the_wrapped_key_is_bound_to_its_person_by_the_kms_encryption_context(aws: Aws) -> None:
    store = aws.store(aws.keyring())
    store.put_item(_item_scope(GONE), "NOTE", "n1", {"text": "Quokka7731"}, now=_now())
    (item,) = aws.raw.scan(TableName=KEYS_TABLE)["Items"]
    wrapped = item[WRAPPED_ATTRIBUTE]["B"]
    context = {"tenant": GONE.tenant_id, "user_hash": GONE.user_hash}
    assert len(aws.kms.decrypt(CiphertextBlob=wrapped, EncryptionContext=context)["Plaintext"]) == 32
    # Moved under another person (or with no context), KMS refuses to unwrap it
    for wrong in ({"tenant": KEPT.tenant_id, "user_hash": KEPT.user_hash}, {}):
        with pytest.raises(ClientError):
            aws.kms.decrypt(CiphertextBlob=wrapped, EncryptionContext=wrong)


def test_erasure_destroys_the_key_and_copies_from_before_no_longer_open(
    aws: Aws, settings: Settings, clock: object
) -> None:
    ring = aws.keyring()
    services = services_over(settings, clock, aws.store(ring))
    gone_ids = talk(services, GONE, "Quokka7731 sandwiches", "sess-9911-zed", "Bartholomew", "Marzipanfabrik")
    kept_ids = talk(services, KEPT, "plain toast", "sess-keep", "Wilhelmina", "Brickworks")
    # What point-in-time recovery, a backup, the stream or a dead letter keeps: the items as they were
    gone_copy, kept_copy = aws.items_of(GONE), aws.items_of(KEPT)
    assert any(_opened(ring, item) for item in gone_copy)  # they opened before

    services.privacy.erase_user(GONE, actor="test")

    keys_left = [item[keys.PARTITION_KEY]["S"] for item in aws.raw.scan(TableName=KEYS_TABLE)["Items"]]
    assert keys_left == [person_key_partition(KEPT.tenant_id, KEPT.user_hash)]
    sealed_copies = [item for item in gone_copy if _holds_sealed(item)]
    assert len(sealed_copies) >= len(gone_ids)
    for process in (ring, aws.keyring()):  # the erasing process, and one that never cached the key
        for item in sealed_copies:
            with pytest.raises(ErasedContentError):
                open_wire_item(process, json.loads(json.dumps(item, default=_bytes_as_latin1), object_hook=_bytes))
        # Everyone else's copies open as before
        opened = [_opened(process, item) for item in kept_copy]
        assert any("Brickworks" in json.dumps(item, default=str) for item in opened)
    # A stream record of the erased person's memory, delivered late, removes it from the index instead of failing
    image = {name: _deserialize(value) for name, value in _memory_item(gone_copy, gone_ids[1]).items()}
    change = memory_change("MODIFY", {k: image[k] for k in (keys.PARTITION_KEY, keys.SORT_KEY)}, image, None, ring)
    assert change.removed is not None and change.removed.memory_id == gone_ids[1]
    # ...and the other person's reaches the index with its words
    image = {name: _deserialize(value) for name, value in _memory_item(kept_copy, kept_ids[1]).items()}
    change = memory_change("INSERT", {k: image[k] for k in (keys.PARTITION_KEY, keys.SORT_KEY)}, image, None, ring)
    assert change.memory is not None and "toast" in change.memory.content


def test_items_written_before_sealing_still_read(aws: Aws, settings: Settings, clock: object) -> None:
    plain = services_over(settings, clock, aws.store(None))
    ids = talk(plain, KEPT, "plain toast", "sess-keep", "Wilhelmina", "Brickworks")
    assert spelled(aws.items_of(KEPT), ["Brickworks"])  # written in clear

    sealed = services_over(settings, clock, aws.store(aws.keyring()))
    assert "toast" in sealed.store.get_memory(KEPT, ids[1]).content
    assert "Brickworks" in sealed.store.get_interaction(KEPT, ids[0]).messages[0].content
    assert any(p.name == "Wilhelmina" for p in sealed.people.list_people(KEPT, limit=10, cursor=None).items)
    added = sealed.memories.remember(KEPT, NewMemory(content="Collects Quokka7731 stamps", domain=Domain.USER))
    assert sealed.store.get_memory(KEPT, added.id).content == "Collects Quokka7731 stamps"
    assert "Quokka7731" not in json.dumps(_memory_item(aws.items_of(KEPT), added.id))
    # A stream image of a plain item needs no key at all
    assert open_image(None, {"pk": "x", "content": "plain"}) == {"pk": "x", "content": "plain"}


def test_a_tampered_or_moved_ciphertext_is_refused(aws: Aws) -> None:
    store = aws.store(aws.keyring())
    mine = _memory(store, GONE, "Hates Quokka7731 films")
    theirs = _memory(store, KEPT, "Loves toast")
    item = _memory_item(aws.items_of(GONE), mine)
    sealed = item["content"]["S"]
    item["content"] = {"S": sealed[:20] + ("A" if sealed[20] != "A" else "B") + sealed[21:]}
    aws.raw.put_item(TableName=TABLE, Item=item)
    with pytest.raises(ErasedContentError, match="does not open"):
        store.get_memory(GONE, mine)
    # The other person's sealed content copied onto this person's item does not open either
    item["content"] = _memory_item(aws.items_of(KEPT), theirs)["content"]
    aws.raw.put_item(TableName=TABLE, Item=item)
    with pytest.raises(ErasedContentError, match="does not open"):
        store.get_memory(GONE, mine)
    assert store.get_memory(KEPT, theirs).content == "Loves toast"


# helpers


def _now() -> datetime:
    return datetime(2026, 1, 1, tzinfo=UTC)


def _item_scope(scope: Scope) -> ItemScope:
    return ItemScope.of_user(scope)


def _memory(store: DynamoDbMemoryStore, scope: Scope, content: str) -> str:
    memory = Memory(
        id=f"01JTEST{abs(hash(content)) % 10**19:019d}",
        tenant_id=scope.tenant_id,
        user_id=scope.user_id,
        domain=Domain.USER,
        type="preference",
        content=content,
        created_at=_now(),
        updated_at=_now(),
        last_reinforced_at=_now(),
    )
    store.put_memory(memory)
    return memory.id


def _memory_item(items: list[dict[str, Any]], memory_id: str) -> dict[str, Any]:
    return next(item for item in items if item[keys.SORT_KEY]["S"] == keys.memory_sort_key(memory_id))


def _holds_sealed(item: dict[str, Any]) -> bool:
    return any(
        str(value.get("S", "")).startswith("enc:v1:") or bytes(value.get("B", b"")).startswith(SEALED_BYTES_PREFIX)
        for value in item.values()
    )


def _opened(keyring: Keyring, item: dict[str, Any]) -> dict[str, Any]:
    copy = json.loads(json.dumps(item, default=_bytes_as_latin1), object_hook=_bytes)
    open_wire_item(keyring, copy)
    return copy


def _bytes_as_latin1(value: Any) -> Any:
    return {"__bytes__": bytes(value).decode("latin-1")}


def _bytes(value: dict[str, Any]) -> Any:
    return value["__bytes__"].encode("latin-1") if set(value) == {"__bytes__"} else value
