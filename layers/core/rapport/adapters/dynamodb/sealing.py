"""The DynamoDB adapter's one place where an end user's content is sealed and opened (`rapport.sealing`): a botocore
hook on each of the table's clients, beside the tenant fence, so the store, the item store, batches, transactions
and Powertools' idempotency records are all covered and no call site can forget it.

Writes are sealed after boto3 has turned Python values into the wire form (`before-parameter-build`, last); reads
are opened before boto3 turns them back (`after-call`, first). Only items of an end user's partition
(`TENANT#{t}#USER#{u}`) are sealed, with that person's key; the tenant's own items (keys, webhooks, the knowledge
graph, the audit trail) are nobody's content. Stream records are opened with `open_image` (the indexer).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from boto3.dynamodb.types import TypeDeserializer

from rapport.adapters.dynamodb import keys
from rapport.errors import StorageError
from rapport.sealing import Keyring, PersonSeal, is_sealed_bytes, is_sealed_text

_WRITE_HOOK = "rapport-seal-writes"
_READ_HOOK = "rapport-open-reads"
# The attributes of an end user's items that hold what they said or what was made of it: a memory's `content`,
# `in_reply_to` and `metadata`, an interaction's `messages` and `metadata`, an embedding item's vector, a generic
# item's `body` and its `f:` fields (edges, field-written items), an idempotency record's stored response (`data`).
# The rest (keys, ids, `domain`, `type`, `status`, scores, times, `source` but its speaker) stays readable: key
# conditions, filters, the indexes' projections and the jobs read them.
SEALED_ATTRIBUTES = frozenset({"content", "in_reply_to", "metadata", "messages", "embedding", "body", "data"})
FIELD_PREFIX = "f:"
# Inside `source`, which both memory indexes project and whose `agent_id` a filter reads: the speaker's name and the
# time phrases quoted from the memory's words with their dates.
SEALED_SOURCE_FIELDS = ("speaker", "mentioned_dates")
_SET_PAIR = re.compile(r"(#?[\w:]+)\s*=\s*(:\w+)")
_PERSON = re.compile(rf"^{keys.TENANT_PREFIX}([^#]+)#{keys.USER_PREFIX}([^#]+)$")
_deserialize = TypeDeserializer().deserialize


def install(client: Any, keyring: Keyring) -> None:
    """Seal and open on this client (idempotent: one pair of hooks per client)."""
    events = client.meta.events
    events.register_last("before-parameter-build.dynamodb", _Writes(keyring), unique_id=_WRITE_HOOK)
    events.register_first("after-call.dynamodb", _Reads(keyring), unique_id=_READ_HOOK)


def is_sealed_attribute(name: str) -> bool:
    return name in SEALED_ATTRIBUTES or name.startswith(FIELD_PREFIX)


def person_of(partition: object) -> tuple[str, str] | None:
    """(tenant, user) of an end user's partition key; None for any other partition."""
    if isinstance(partition, Mapping):
        partition = partition.get("S")
    if not isinstance(partition, str):
        return None
    found = _PERSON.match(partition)
    return (found.group(1), found.group(2)) if found else None


# writing


class _Writes:
    def __init__(self, keyring: Keyring) -> None:
        self._keyring = keyring

    def __call__(self, params: MutableMapping[str, Any], model: Any, **_: Any) -> None:
        operation = model.name
        if operation == "PutItem":
            self._seal_item(params.get("Item"))
        elif operation == "UpdateItem":
            self._seal_update(params)
        elif operation == "BatchWriteItem":
            for requests in params.get("RequestItems", {}).values():
                for request in requests:
                    self._seal_item(request.get("PutRequest", {}).get("Item"))
        elif operation == "TransactWriteItems":
            for action in params.get("TransactItems", []):
                if "Put" in action:
                    self._seal_item(action["Put"].get("Item"))
                if "Update" in action:
                    self._seal_update(action["Update"])

    def _seal(self, partition: object) -> PersonSeal | None:
        person = person_of(partition)
        return self._keyring.for_writing(*person) if person is not None else None

    def _seal_item(self, item: MutableMapping[str, Any] | None) -> None:
        if not item:
            return
        seal = self._seal(item.get(keys.PARTITION_KEY))
        if seal is None:
            return
        for name in list(item):
            item[name] = seal_value(seal, name, item[name])

    def _seal_update(self, request: MutableMapping[str, Any]) -> None:
        seal = self._seal(request.get("Key", {}).get(keys.PARTITION_KEY))
        if seal is None:
            return
        names: Mapping[str, str] = request.get("ExpressionAttributeNames", {})
        values: MutableMapping[str, Any] = request.get("ExpressionAttributeValues", {})
        condition = str(request.get("ConditionExpression", ""))
        done: set[str] = set()
        for name, placeholder in _SET_PAIR.findall(str(request.get("UpdateExpression", ""))):
            attribute = names.get(name, name)
            if placeholder in done or placeholder not in values:
                continue
            if (is_sealed_attribute(attribute) or attribute == "source") and placeholder in condition:
                # A sealed value is different every time it is sealed: a condition on it could never hold.
                raise StorageError(f"a condition compares the sealed attribute {attribute}; nothing was sent")
            values[placeholder] = seal_value(seal, attribute, values[placeholder])
            done.add(placeholder)


def seal_value(seal: PersonSeal, name: str, value: Any) -> Any:
    """One attribute's wire value as stored: sealed when the attribute is content, else as it is."""
    if name == "source" and isinstance(value, Mapping) and "M" in value:
        fields = dict(value["M"])
        for field in SEALED_SOURCE_FIELDS:
            if field in fields and not _is_sealed_wire(fields[field]):
                fields[field] = {"S": seal.seal_text(_wire_json(fields[field]), f"source.{field}")}
        return {"M": fields}
    if not is_sealed_attribute(name) or not isinstance(value, Mapping) or _is_sealed_wire(value):
        return value
    if "B" in value:
        return {"B": seal.seal_bytes(bytes(value["B"]), name)}
    return {"S": seal.seal_text(_wire_json(value), name)}


def _wire_json(value: Mapping[str, Any]) -> str:
    # The wire value itself is what is sealed, so any type (a string, a map of messages) opens to what it was.
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except TypeError as exc:
        raise StorageError("a binary value nested in a content attribute cannot be sealed") from exc


def _is_sealed_wire(value: Any) -> bool:
    return isinstance(value, Mapping) and (is_sealed_text(value.get("S")) or is_sealed_bytes(value.get("B")))


# reading


class _Reads:
    def __init__(self, keyring: Keyring) -> None:
        self._keyring = keyring

    def __call__(self, parsed: Any, **_: Any) -> None:
        if not isinstance(parsed, MutableMapping):
            return
        for item in _items_of(parsed):
            open_wire_item(self._keyring, item)


def _items_of(parsed: Mapping[str, Any]) -> Iterator[MutableMapping[str, Any]]:
    for field in ("Item", "Attributes"):
        if isinstance(parsed.get(field), MutableMapping):
            yield parsed[field]
    yield from parsed.get("Items") or []
    responses = parsed.get("Responses")
    if isinstance(responses, Mapping):  # BatchGetItem: per table
        for found in responses.values():
            yield from found
    elif isinstance(responses, list):  # TransactGetItems
        yield from (entry["Item"] for entry in responses if isinstance(entry.get("Item"), MutableMapping))


def open_wire_item(keyring: Keyring, item: MutableMapping[str, Any]) -> None:
    """Open, in place, every sealed attribute of one item in the wire form."""
    sealed = [name for name, value in item.items() if _is_sealed_wire(value) or _has_sealed_source(name, value)]
    if not sealed:
        return  # nothing sealed (a tenant's item, or one written before sealing): no key needed
    seal = _reading_seal(keyring, item.get(keys.PARTITION_KEY))
    for name in sealed:
        value = item[name]
        if name == "source":
            fields = dict(value["M"])
            for field in SEALED_SOURCE_FIELDS:
                if _is_sealed_wire(fields.get(field)):
                    fields[field] = json.loads(seal.open_text(fields[field]["S"], f"source.{field}"))
            item[name] = {"M": fields}
        elif "B" in value:
            item[name] = {"B": seal.open_bytes(bytes(value["B"]), name)}
        else:
            item[name] = json.loads(seal.open_text(value["S"], name))


def open_image(keyring: Keyring | None, image: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A stream record's image (already Python values, a binary attribute as bytes) with its sealed attributes
    opened: what the indexer reads. ErasedContentError when the person's key is gone."""
    if image is None:
        return None
    item = dict(image)
    sealed = [
        name
        for name, value in item.items()
        if is_sealed_text(value)
        or is_sealed_bytes(value)
        or (name == "source" and isinstance(value, Mapping) and any(is_sealed_text(v) for v in value.values()))
    ]
    if not sealed:
        return item
    if keyring is None:
        raise StorageError("a stream image holds sealed content, and no person keys are configured to open it")
    seal = _reading_seal(keyring, item.get(keys.PARTITION_KEY))
    for name in sealed:
        value = item[name]
        if name == "source":
            item[name] = {
                field: _deserialize(json.loads(seal.open_text(v, f"source.{field}"))) if is_sealed_text(v) else v
                for field, v in value.items()
            }
        elif isinstance(value, bytes | bytearray):
            item[name] = seal.open_bytes(bytes(value), name)
        else:
            item[name] = _deserialize(json.loads(seal.open_text(value, name)))
    return item


def _has_sealed_source(name: str, value: Any) -> bool:
    return (
        name == "source"
        and isinstance(value, Mapping)
        and isinstance(value.get("M"), Mapping)
        and any(_is_sealed_wire(v) for v in value["M"].values())
    )


def _reading_seal(keyring: Keyring, partition: object) -> PersonSeal:
    person = person_of(partition)
    if person is None:
        raise StorageError("an item holds sealed content outside an end user's partition (or without its key)")
    return keyring.for_reading(*person)
