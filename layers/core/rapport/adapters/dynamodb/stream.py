"""DynamoDB Streams records of the table, read back as memory changes (the key layout stays in the adapter)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from rapport.adapters.dynamodb import keys as keys
from rapport.adapters.dynamodb import records as records
from rapport.adapters.dynamodb.records import memory_from_item
from rapport.adapters.dynamodb.sealing import open_image
from rapport.domain.memory_changes import MemoryChange, MemoryRef
from rapport.domain.scope import DEFAULT_AGENT
from rapport.errors import ErasedContentError, InvalidInputError
from rapport.ports.pipeline import PipelineRequest
from rapport.sealing import Keyring

Image = Mapping[str, Any]


def is_memory_key(key: Image) -> bool:
    return str(key.get(keys.SORT_KEY, "")).startswith(keys.MEMORY_PREFIX)


def memory_ref_from_key(key: Image) -> MemoryRef:
    """`TENANT#{t}#USER#{u}` / `MEM#{id}` back into ids; unambiguous because '#' is refused inside each part."""
    partition, sort = str(key.get(keys.PARTITION_KEY, "")), str(key.get(keys.SORT_KEY, ""))
    tenant_part, sep, user_id = partition.partition(f"#{keys.USER_PREFIX}")
    if not sep or not tenant_part.startswith(keys.TENANT_PREFIX) or not sort.startswith(keys.MEMORY_PREFIX):
        raise InvalidInputError(f"not a memory key: {partition!r} / {sort!r}")
    return MemoryRef(
        tenant_id=tenant_part.removeprefix(keys.TENANT_PREFIX),
        user_id=user_id,
        memory_id=sort.removeprefix(keys.MEMORY_PREFIX),
    )


def interaction_recorded(event_name: str, key: Image, new_image: Image | None = None) -> PipelineRequest | None:
    """The pipeline request of a stream record that inserted a history item (`INT#{id}`); None for anything else
    (a rewrite of the item, its removal, any other item), which starts nothing. The assistant that took part is
    read from the new image (absent: the default assistant)."""
    sort = str(key.get(keys.SORT_KEY, ""))
    if event_name != "INSERT" or not sort.startswith(keys.INTERACTION_PREFIX):
        return None
    partition = str(key.get(keys.PARTITION_KEY, ""))
    tenant_part, sep, user_id = partition.partition(f"#{keys.USER_PREFIX}")
    if not sep or not tenant_part.startswith(keys.TENANT_PREFIX):
        raise InvalidInputError(f"not an interaction key: {partition!r} / {sort!r}")
    return PipelineRequest(
        tenant_id=tenant_part.removeprefix(keys.TENANT_PREFIX),
        user_id=user_id,
        interaction_id=sort.removeprefix(keys.INTERACTION_PREFIX),
        agent_id=str((new_image or {}).get(records.AGENT_ATTRIBUTE) or DEFAULT_AGENT),
    )


def memory_change(
    event_name: str, key: Image, new_image: Image | None, old_image: Image | None, keyring: Keyring | None = None
) -> MemoryChange:
    """One stream record (images already deserialised to Python values) as a change for `IndexSync`.

    REMOVE covers deletes, erasures and TTL expiry alike; INSERT and MODIFY carry the new image (the table streams
    NEW_AND_OLD_IMAGES). A malformed image raises, which the caller reports as that record's failure. Sealed
    content is opened with `keyring`; a record of a person erased since (their key is gone) is applied as the
    memory's removal, so the index never keeps what the table no longer can.
    """
    if event_name == "REMOVE":
        return MemoryChange(removed=memory_ref_from_key(key))
    if event_name not in ("INSERT", "MODIFY") or not new_image:
        raise InvalidInputError(f"a {event_name} stream record without a new image cannot be applied")
    try:
        memory = memory_from_item(open_image(keyring, _with_binary_decoded(new_image)) or {})
        previous = memory_from_item(open_image(keyring, _with_binary_decoded(old_image)) or {}) if old_image else None
    except ErasedContentError:
        return MemoryChange(removed=memory_ref_from_key(key))
    except (KeyError, ValueError, TypeError, binascii.Error) as exc:
        raise InvalidInputError(f"the stream image of {dict(key)} is not a memory: {type(exc).__name__}") from exc
    return MemoryChange(memory=memory, previous=previous)


def _with_binary_decoded(image: Image) -> dict[str, Any]:
    """A stream event is JSON, so a binary attribute arrives as base64 text (`{"B": "..."}`), and a generic
    deserialiser hands that text over as is. The embedding is the memory item's one binary attribute."""
    item = dict(image)
    embedding = item.get("embedding")
    if isinstance(embedding, str):
        item["embedding"] = base64.b64decode(embedding, validate=True)
    return item
