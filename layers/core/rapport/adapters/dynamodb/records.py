"""Persistence records of the DynamoDB table: explicit conversion between domain models and table items."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import Binary

from rapport.adapters.dynamodb import keys as keys
from rapport.domain.access import LEGACY_SCOPES, scopes_from_text
from rapport.domain.models import (
    ApiKeyRecord,
    AuditAction,
    AuditEvent,
    DateSpan,
    Domain,
    Interaction,
    Memory,
    MemoryStatus,
    Message,
    MessageRole,
    PrecedingMessage,
    Provenance,
    SourceKind,
    Tier,
    Trust,
    trust_of,
)
from rapport.domain.scope import DEFAULT_AGENT, Scope
from rapport.errors import InvalidInputError, StorageError

Item = dict[str, Any]

# DynamoDB refuses an item above 400 KB (names and values counted). Checking before the call turns an opaque
# ValidationException into a message that says which record is too large.
MAX_ITEM_BYTES = 400 * 1024

# DynamoDB numbers stop at 1E-130; a strength that decays below this is zero for every purpose.
_SMALLEST_NUMBER = 1e-100


# values


def to_number(value: float) -> Decimal:
    """A float as the Decimal boto3 insists on; repr() is the shortest string that round-trips the float exactly."""
    if not math.isfinite(value):
        raise InvalidInputError(f"numbers must be finite (got {value!r})")
    if abs(value) < _SMALLEST_NUMBER:
        return Decimal(0)
    return Decimal(repr(float(value)))


def from_number(value: Any) -> float:
    return float(value)


def pack_embedding(embedding: list[float]) -> bytes:
    """float32, little-endian: 4 bytes a dimension (6 KB for 1536 dims) instead of a list of number attributes."""
    try:
        return struct.pack(f"<{len(embedding)}f", *embedding)
    except (struct.error, OverflowError) as exc:
        raise InvalidInputError(f"embedding values must fit in float32: {exc}") from exc


def unpack_embedding(value: Any) -> list[float]:
    raw = _raw_bytes(value)
    if len(raw) % 4:
        raise StorageError(f"stored embedding has {len(raw)} bytes, not a whole number of float32 values")
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def _raw_bytes(value: Any) -> bytes:
    # Reads hand back boto3's Binary wrapper; bytes() unwraps it (typed Any: the stubs give its __bytes__ as str).
    return bytes(value)


def dump_json(value: Mapping[str, Any], what: str) -> str:
    # Free-form metadata is kept as one JSON string: it round-trips exactly (1.0 stays a float, nesting keeps its
    # types), needs no Decimal conversion, and nothing queries inside it.
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{what} must be JSON-serialisable: {exc}") from exc


def load_json(value: Any) -> dict[str, Any]:
    loaded = json.loads(value) if value else {}
    return loaded if isinstance(loaded, dict) else {}


def approximate_item_bytes(item: Mapping[str, Any]) -> int:
    """DynamoDB's item size rule, rounded up: names plus values, numbers at their 21-byte maximum."""
    return sum(len(name.encode()) + _value_bytes(value) for name, value in item.items())


def _value_bytes(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, bytes | bytearray | Binary):
        return len(_raw_bytes(value))
    if isinstance(value, Mapping):
        return 3 + sum(1 + len(str(k).encode()) + _value_bytes(v) for k, v in value.items())
    if isinstance(value, list | tuple | set):
        return 3 + sum(1 + _value_bytes(v) for v in value)
    return 21  # numbers, booleans, null


def check_item_size(item: Mapping[str, Any], what: str) -> None:
    size = approximate_item_bytes(item)
    if size > MAX_ITEM_BYTES:
        raise InvalidInputError(
            f"{what} is about {size // 1024} KB stored; the store holds at most {MAX_ITEM_BYTES // 1024} KB per item."
            " Shorten the content, messages or metadata."
        )


# memory


def memory_to_item(memory: Memory) -> Item:
    pk = keys.user_partition(memory.tenant_id, memory.user_id)
    sk = keys.memory_sort_key(memory.id)
    item: Item = {
        keys.PARTITION_KEY: pk,
        keys.SORT_KEY: sk,
        "gsi1pk": keys.domain_partition(memory.tenant_id, memory.user_id, memory.domain, memory.agent_id),
        "gsi1sk": sk,
        "gsi2pk": keys.type_partition(memory.tenant_id, memory.user_id, memory.type, memory.relationship),
        "gsi2sk": sk,
        "entity": "memory",
        "id": memory.id,
        "tenant_id": memory.tenant_id,
        "user_id": memory.user_id,
        "domain": memory.domain.value,
        "type": memory.type,
        "content": memory.content,
        "strength": to_number(memory.strength),
        "importance": to_number(memory.importance),
        "confidence": to_number(memory.confidence),
        "tier": memory.tier.value,
        "status": memory.status.value,
        "associations": list(memory.associations),
        # Trust rides in the source map, which both memory indexes project: a new attribute of its own would have
        # to join their projection, and DynamoDB cannot change the projection of an existing index.
        # So does the assistant it was made with, and only for a named one: the default assistant's memories keep
        # the items they always had.
        # The resolved dates ride there too, and only when there are some.
        "source": {
            **_provenance_to_map(memory.source),
            "trust": memory.trust.value,
            **_agent_field(memory.agent_id),
            **_dates_field(memory.mentioned_dates),
        },
        "metadata": dump_json(memory.metadata, "memory metadata"),
        "created_at": keys.format_time(memory.created_at),
        "updated_at": keys.format_time(memory.updated_at),
        "last_reinforced_at": keys.format_time(memory.last_reinforced_at),
    }
    if memory.occurred_at is not None:
        item["occurred_at"] = keys.format_time(memory.occurred_at)
    if memory.decayed_at is not None:
        item["decayed_at"] = keys.format_time(memory.decayed_at)
    if memory.in_reply_to is not None:
        item["in_reply_to"] = {"speaker": memory.in_reply_to.speaker, "content": memory.in_reply_to.content}
    return item


# Where an item of the old layout holds its vector, inline: read when present, never written.
INLINE_EMBEDDING = "embedding"
# Every attribute a memory item may carry besides its keys, so an update can remove those a memory no longer has.
OPTIONAL_MEMORY_ATTRIBUTES = ("occurred_at", "decayed_at", "in_reply_to")


def embedding_item(memory: Memory) -> Item | None:
    """The memory's vector as an item of its own (`EMB#{id}` beside `MEM#{id}`), or None without one. It carries
    nothing but the vector and what names it: no GSI key, so no index ever copies it."""
    if memory.embedding is None:
        return None
    return {
        keys.PARTITION_KEY: keys.user_partition(memory.tenant_id, memory.user_id),
        keys.SORT_KEY: keys.embedding_sort_key(memory.id),
        "entity": "embedding",
        "memory_id": memory.id,
        "embedding": pack_embedding(memory.embedding),
    }


def memory_items(memory: Memory) -> list[Item]:
    """What a full write of the memory puts: its item, then its vector's when it has one."""
    vector = embedding_item(memory)
    return [memory_to_item(memory), *([vector] if vector is not None else [])]


def embedding_key(memory_key: Mapping[str, Any]) -> Item:
    """The key of the vector item beside a memory item's key."""
    memory_id = str(memory_key[keys.SORT_KEY]).removeprefix(keys.MEMORY_PREFIX)
    return {keys.PARTITION_KEY: memory_key[keys.PARTITION_KEY], keys.SORT_KEY: keys.embedding_sort_key(memory_id)}


def memory_from_item(item: Mapping[str, Any], vector: Mapping[str, Any] | None = None) -> Memory:
    """The memory of a `MEM#` item, with the embedding of its `EMB#` item when given (or the old layout's inline
    one); without either, no embedding."""
    occurred_at = item.get("occurred_at")
    decayed_at = item.get("decayed_at")
    embedding = vector.get("embedding") if vector is not None else item.get(INLINE_EMBEDDING)
    in_reply_to = item.get("in_reply_to")
    return Memory(
        id=item["id"],
        tenant_id=item["tenant_id"],
        user_id=item["user_id"],
        domain=Domain(item["domain"]),
        type=item["type"],
        content=item["content"],
        strength=from_number(item["strength"]),
        importance=from_number(item["importance"]),
        confidence=from_number(item["confidence"]),
        tier=Tier(item["tier"]),
        status=MemoryStatus(item["status"]),
        associations=list(item.get("associations", [])),
        source=_provenance_from_map(item.get("source", {})),
        trust=_trust_from_map(item.get("source", {})),
        in_reply_to=PrecedingMessage(**in_reply_to) if in_reply_to else None,
        mentioned_dates=[DateSpan.model_validate(span) for span in item.get("source", {}).get(DATES_ATTRIBUTE, [])],
        metadata=load_json(item.get("metadata")),
        created_at=keys.parse_time(item["created_at"]),
        updated_at=keys.parse_time(item["updated_at"]),
        occurred_at=keys.parse_time(occurred_at) if occurred_at else None,
        last_reinforced_at=keys.parse_time(item["last_reinforced_at"]),
        decayed_at=keys.parse_time(decayed_at) if decayed_at else None,
        agent_id=item.get("source", {}).get(AGENT_ATTRIBUTE, DEFAULT_AGENT),
        embedding=unpack_embedding(embedding) if embedding is not None else None,
    )


# The attribute naming a named assistant: inside a memory's `source` map, on an interaction item itself. Absent means
# the default assistant, which is how every item written before assistants had names reads.
AGENT_ATTRIBUTE = "agent_id"
# Inside `source` too: the memory's time phrases resolved to dates (sealed with the speaker: they quote its words).
DATES_ATTRIBUTE = "mentioned_dates"


def _agent_field(agent_id: str) -> Item:
    return {} if agent_id == DEFAULT_AGENT else {AGENT_ATTRIBUTE: agent_id}


def _provenance_to_map(source: Provenance) -> Item:
    # None fields are left out: absent and null mean the same here, and the item stays smaller.
    fields: Item = {
        "kind": source.kind.value,
        "interaction_id": source.interaction_id,
        "message_index": source.message_index,
        "session_id": source.session_id,
        "channel": source.channel,
        "speaker": source.speaker,
    }
    return {name: value for name, value in fields.items() if value is not None}


def _dates_field(spans: list[DateSpan]) -> Item:
    return {DATES_ATTRIBUTE: [span.model_dump(mode="json") for span in spans]} if spans else {}


def _trust_from_map(source: Mapping[str, Any]) -> Trust:
    # An item written before trust was recorded has none: the memory takes what its source implies.
    trust = source.get("trust")
    return Trust(trust) if trust else trust_of(_provenance_from_map(source))


def _provenance_from_map(value: Mapping[str, Any]) -> Provenance:
    message_index = value.get("message_index")
    return Provenance(
        kind=SourceKind(value.get("kind", SourceKind.API.value)),
        interaction_id=value.get("interaction_id"),
        message_index=int(message_index) if message_index is not None else None,
        session_id=value.get("session_id"),
        channel=value.get("channel"),
        speaker=value.get("speaker"),
    )


# interaction


def interaction_to_item(interaction: Interaction) -> Item:
    item: Item = {
        keys.PARTITION_KEY: keys.user_partition(interaction.tenant_id, interaction.user_id),
        keys.SORT_KEY: keys.interaction_sort_key(interaction.id),
        "entity": "interaction",
        "id": interaction.id,
        "tenant_id": interaction.tenant_id,
        "user_id": interaction.user_id,
        "messages": [_message_to_map(message) for message in interaction.messages],
        "occurred_at": keys.format_time(interaction.occurred_at),
        "created_at": keys.format_time(interaction.created_at),
        "metadata": dump_json(interaction.metadata, "interaction metadata"),
        "memory_ids": list(interaction.memory_ids),
        **_agent_field(interaction.agent_id),
    }
    if interaction.channel is not None:
        item["channel"] = interaction.channel
    if interaction.session_id is not None:
        item["session_id"] = interaction.session_id
    return item


def interaction_from_item(item: Mapping[str, Any]) -> Interaction:
    return Interaction(
        id=item["id"],
        tenant_id=item["tenant_id"],
        user_id=item["user_id"],
        messages=[_message_from_map(message) for message in item.get("messages", [])],
        channel=item.get("channel"),
        session_id=item.get("session_id"),
        occurred_at=keys.parse_time(item["occurred_at"]),
        created_at=keys.parse_time(item["created_at"]),
        metadata=load_json(item.get("metadata")),
        memory_ids=list(item.get("memory_ids", [])),
        agent_id=item.get(AGENT_ATTRIBUTE, DEFAULT_AGENT),
    )


def _message_to_map(message: Message) -> Item:
    fields: Item = {"role": message.role.value, "content": message.content}
    if message.name is not None:
        fields["name"] = message.name
    return fields


def _message_from_map(value: Mapping[str, Any]) -> Message:
    return Message(role=MessageRole(value["role"]), content=value["content"], name=value.get("name"))


# tenancy


def user_registration_item(tenant_id: str, user_id: str) -> Item:
    return {
        keys.PARTITION_KEY: keys.tenant_partition(tenant_id),
        keys.SORT_KEY: keys.user_sort_key(user_id),
        "entity": "user",
        "tenant_id": tenant_id,
        "user_id": user_id,
    }


def tenant_registration_item(tenant_id: str) -> Item:
    return {
        keys.PARTITION_KEY: keys.TENANT_REGISTRY_PARTITION,
        keys.SORT_KEY: keys.tenant_registry_sort_key(tenant_id),
        "entity": "tenant",
        "tenant_id": tenant_id,
    }


def api_key_to_item(record: ApiKeyRecord) -> Item:
    return {
        keys.PARTITION_KEY: keys.tenant_partition(record.tenant_id),
        keys.SORT_KEY: keys.api_key_sort_key(record.key_hash),
        "gsi3pk": keys.api_key_lookup_partition(record.key_hash),
        "gsi3sk": keys.tenant_partition(record.tenant_id),
        "entity": "api_key",
        "tenant_id": record.tenant_id,
        "key_hash": record.key_hash,
        "name": record.name,
        "created_at": keys.format_time(record.created_at),
        "scopes": sorted(scope.value for scope in record.scopes),
        **{
            field: keys.format_time(value)
            for field, value in (
                ("expires_at", record.expires_at),
                ("revoked_at", record.revoked_at),
                ("last_used_at", record.last_used_at),
            )
            if value is not None
        },
    }


def api_key_from_item(item: Mapping[str, Any]) -> ApiKeyRecord:
    return ApiKeyRecord(
        tenant_id=item["tenant_id"],
        key_hash=item["key_hash"],
        name=item.get("name", "default"),
        created_at=keys.parse_time(item["created_at"]),
        expires_at=keys.parse_time(item["expires_at"]) if item.get("expires_at") else None,
        revoked_at=keys.parse_time(item["revoked_at"]) if item.get("revoked_at") else None,
        last_used_at=keys.parse_time(item["last_used_at"]) if item.get("last_used_at") else None,
        # A key stored before keys had scopes has none recorded: it keeps what it could do (LEGACY_SCOPES).
        scopes=scopes_from_text(" ".join(item["scopes"])) if "scopes" in item else LEGACY_SCOPES,
    )


# audit


def audit_event_to_item(event: AuditEvent) -> Item:
    return {
        keys.PARTITION_KEY: keys.audit_partition(event.tenant_id),
        keys.SORT_KEY: keys.audit_sort_key(event.at, event.id),
        "entity": "audit_event",
        "id": event.id,
        "tenant_id": event.tenant_id,
        "action": event.action.value,
        "actor": event.actor,
        "at": keys.format_time(event.at),
        "counts": {name: int(count) for name, count in event.counts.items()},
        **({"operation": event.operation} if event.operation else {}),
        **({"status": event.status} if event.status is not None else {}),
        **(
            {
                "target_user_hash": event.target_user_hash,
                keys.GSI_KEYS[keys.GSI_AUDIT_BY_USER][0]: keys.audit_user_partition(
                    event.tenant_id, event.target_user_hash
                ),
                keys.GSI_KEYS[keys.GSI_AUDIT_BY_USER][1]: keys.audit_sort_key(event.at, event.id),
            }
            if event.target_user_hash
            else {}
        ),
        **({"agents": event.agents} if event.agents else {}),
    }


def audit_event_from_item(item: Mapping[str, Any]) -> AuditEvent:
    return AuditEvent(
        id=item["id"],
        tenant_id=item["tenant_id"],
        action=AuditAction(item["action"]),
        actor=item["actor"],
        # Events written before the audit trail kept hashes named the user; they are read as the hash would be.
        target_user_hash=item.get("target_user_hash")
        or (Scope(item["tenant_id"], item["target_user_id"]).user_hash if item.get("target_user_id") else None),
        operation=item.get("operation"),
        status=int(item["status"]) if item.get("status") is not None else None,
        at=keys.parse_time(item["at"]),
        counts={name: int(count) for name, count in item.get("counts", {}).items()},
        agents={
            agent: {name: int(count) for name, count in counts.items()}
            for agent, counts in item.get("agents", {}).items()
        },
    )
