"""Key layout of the single DynamoDB table: the only module that spells `TENANT#…`, `MEM#…` and the GSI keys."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from rapport.domain.models import Domain
from rapport.domain.scope import DEFAULT_AGENT
from rapport.errors import InvalidInputError

PARTITION_KEY = "pk"
SORT_KEY = "sk"
TTL_ATTRIBUTE = "expires_at"

# Index name -> (partition attribute, sort attribute). The CDK stack declares exactly these.
GSI_BY_DOMAIN = "gsi1"
GSI_BY_TYPE = "gsi2"
GSI_BY_API_KEY = "gsi3"
# gsi3 also lists one end user's audit events (`AUDIT#{t}#USER#{hash}`): it projects ALL, which small audit items
# need, and an index of its own would cost a table change for one listing.
GSI_AUDIT_BY_USER = GSI_BY_API_KEY
GSI_KEYS: dict[str, tuple[str, str]] = {
    GSI_BY_DOMAIN: ("gsi1pk", "gsi1sk"),
    GSI_BY_TYPE: ("gsi2pk", "gsi2sk"),
    GSI_BY_API_KEY: ("gsi3pk", "gsi3sk"),
}

# What the memory indexes (gsi1, gsi2) carry besides the keys: everything a listed memory needs except its
# embedding, which would triple a memory write's units (table + two indexes) for a vector no listing returns.
# memory_from_item reads exactly these; a test checks a listed memory against the same memory read by key. The CDK
# table (infra/constructs/table.py) imports this module, so the stack declares the same keys and projection.
MEMORY_INDEX_ATTRIBUTES: tuple[str, ...] = (
    "entity",
    "id",
    "tenant_id",
    "user_id",
    "domain",
    "type",
    "content",
    "strength",
    "importance",
    "confidence",
    "tier",
    "status",
    "associations",
    "source",
    "in_reply_to",
    "metadata",
    "created_at",
    "updated_at",
    "occurred_at",
    "last_reinforced_at",
    "decayed_at",
)
PROJECTED_INDEXES = (GSI_BY_DOMAIN, GSI_BY_TYPE)  # gsi3 (API keys) projects ALL: small items, read whole

MEMORY_PREFIX = "MEM#"
# A memory's embedding is an item of its own beside the memory (`EMB#{id}`): most of a memory's bytes are its vector,
# and DynamoDB bills a write by the whole item, so a vector kept on the memory item would make every change of
# status, strength or tier cost the vector again. Outside `MEM#`, so listings and counts of memories never read it.
EMBEDDING_PREFIX = "EMB#"
INTERACTION_PREFIX = "INT#"
USER_PREFIX = "USER#"
API_KEY_PREFIX = "APIKEY#"
TENANT_PREFIX = "TENANT#"
AUDIT_PREFIX = "AUDIT#"
AGENT_SEGMENT = "AGENT#"  # a named assistant's part of a memory index key (`…#DOMAIN#relational#AGENT#{a}`)
# One partition lists every tenant, so scheduled jobs can start without a Scan. It is written only when a tenant gets
# its first end user or an API key, never per request, so it does not become a hot partition.
TENANT_REGISTRY_PARTITION = "TENANTS"

BAD_CURSOR = "cursor is not valid for this listing: pass the next_cursor of the previous page unchanged, or none"


def key_attributes(index_name: str | None) -> tuple[str, ...]:
    """The attributes of a LastEvaluatedKey on the table or on an index (a GSI key also carries the table key)."""
    if index_name is None:
        return (PARTITION_KEY, SORT_KEY)
    return (*GSI_KEYS[index_name], PARTITION_KEY, SORT_KEY)


def _component(name: str, value: str) -> str:
    # '#' separates key components: tenant "a#USER#b" with user "c" would share a partition with tenant "a" and
    # user "b#USER#c". Refusing it keeps every tenant and end user in a partition of its own.
    if not value or "#" in value:
        raise InvalidInputError(f"{name} must be non-empty and must not contain '#' (got {value!r})")
    return value


def user_partition(tenant_id: str, user_id: str) -> str:
    """Partition of everything one end user owns: memories, edges, interactions, state, profile, people, sessions."""
    return f"{TENANT_PREFIX}{_component('tenant_id', tenant_id)}#{USER_PREFIX}{_component('user_id', user_id)}"


def tenant_partition(tenant_id: str) -> str:
    """Partition of a tenant's own items: its end users and its API keys."""
    return f"{TENANT_PREFIX}{_component('tenant_id', tenant_id)}"


def tenant_registry_sort_key(tenant_id: str) -> str:
    return tenant_partition(tenant_id)


def audit_partition(tenant_id: str) -> str:
    return f"{AUDIT_PREFIX}{_component('tenant_id', tenant_id)}"


def audit_user_partition(tenant_id: str, user_hash: str) -> str:
    """gsi3 partition: the audit events of one end user, by the hash the audit trail names them with."""
    return f"{audit_partition(tenant_id)}#{USER_PREFIX}{_component('user_hash', user_hash)}"


def memory_sort_key(memory_id: str) -> str:
    return f"{MEMORY_PREFIX}{memory_id}"


def embedding_sort_key(memory_id: str) -> str:
    return f"{EMBEDDING_PREFIX}{memory_id}"


def interaction_sort_key(interaction_id: str) -> str:
    return f"{INTERACTION_PREFIX}{interaction_id}"


def user_sort_key(user_id: str) -> str:
    return f"{USER_PREFIX}{_component('user_id', user_id)}"


def api_key_sort_key(key_hash: str) -> str:
    return f"{API_KEY_PREFIX}{key_hash}"


def api_key_lookup_partition(key_hash: str) -> str:
    """gsi3 partition: the authorizer knows only the key's hash, not the tenant."""
    return f"{API_KEY_PREFIX}{key_hash}"


def _relationship(agent_id: str | None) -> str:
    # The default assistant's relational memories keep the index keys they had before assistants had names, so the
    # items already stored are read unchanged; a named assistant's get a partition of their own.
    if agent_id is None or agent_id == DEFAULT_AGENT:
        return ""
    return f"#{AGENT_SEGMENT}{_component('agent_id', agent_id)}"


def domain_partition(tenant_id: str, user_id: str, domain: Domain, agent_id: str | None = None) -> str:
    """gsi1 partition: one end user's memories of one domain, sorted by ULID; relational ones per assistant
    (`agent_id`; user memories are every assistant's)."""
    relationship = _relationship(agent_id) if domain is Domain.RELATIONAL else ""
    return f"{user_partition(tenant_id, user_id)}#DOMAIN#{domain.value}{relationship}"


def type_partition(tenant_id: str, user_id: str, memory_type: str, agent_id: str | None = None) -> str:
    """gsi2 partition: one end user's memories of one type, sorted by ULID; `agent_id` names the assistant whose
    relational memories they are (None for a user memory type)."""
    return f"{user_partition(tenant_id, user_id)}#TYPE#{memory_type}{_relationship(agent_id)}"


def audit_sort_key(at: datetime, event_id: str) -> str:
    """Time first so a query reads newest first; the ULID keeps two events of the same microsecond apart."""
    return f"{format_time(at)}#{event_id}"


def format_time(moment: datetime) -> str:
    """ISO-8601 in UTC with a fixed width (microseconds, +00:00), so the strings sort as the instants do."""
    if moment.tzinfo is None:
        # Naive datetimes in this code base mean UTC (the clocks hand out aware UTC times).
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def parse_time(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def encode_cursor(start_key: Mapping[str, Any]) -> str:
    """A start key as an opaque, URL-safe cursor (base64url of its JSON, padding dropped)."""
    text = json.dumps({name: str(value) for name, value in start_key.items()}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(text.encode()).decode("ascii").rstrip("=")


def decode_cursor(
    cursor: str, attributes: tuple[str, ...], pins: Mapping[str, str], prefixes: Mapping[str, str]
) -> dict[str, str]:
    """The start key inside a cursor, refused unless it points into the very partition and key range being listed.

    The cursor comes from the client: without these checks a crafted one could name another tenant's partition or
    another listing's key range. `pins` are attributes that must hold exactly this value, `prefixes` ones that must
    start with it.
    """
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        decoded = json.loads(base64.b64decode(padded.encode("ascii"), altchars=b"-_", validate=True))
    except (ValueError, UnicodeError, binascii.Error) as exc:
        raise InvalidInputError(BAD_CURSOR) from exc
    if (
        not isinstance(decoded, dict)
        or set(decoded) != set(attributes)
        or not all(isinstance(value, str) for value in decoded.values())
        or any(decoded[name] != value for name, value in pins.items())
        or any(not decoded[name].startswith(prefix) for name, prefix in prefixes.items())
    ):
        raise InvalidInputError(BAD_CURSOR)
    return decoded
