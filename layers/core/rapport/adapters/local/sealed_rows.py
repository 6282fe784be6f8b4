"""The SQLite store's rows as they are written and read: an end user's content fields sealed with their data key
(`rapport.sealing`), ids, times, scores and statuses left in clear for the queries. Without a keyring, rows are
written plain; either way a row written before sealing existed reads as it is."""

from __future__ import annotations

import json
from typing import Any

from rapport.domain.models import Interaction, Memory
from rapport.errors import ErasedContentError
from rapport.sealing import SEALED_TEXT_PREFIX, Keyring, PersonSeal, is_sealed_bytes, is_sealed_text

# What a memory's body seals: its words, what came before them, its free-form metadata, the time phrases it quotes
# (with their dates), and who said them.
# `agent_id`, `domain`, `type`, `status`, the scores and the times stay readable: queries and jobs read them.
MEMORY_FIELDS = ("content", "in_reply_to", "metadata", "mentioned_dates")
SOURCE_FIELDS = ("speaker",)
INTERACTION_FIELDS = ("messages", "metadata")
EMBEDDING_FIELD = "embedding"


class SealedRows:
    def __init__(self, keyring: Keyring | None) -> None:
        self._keyring = keyring

    @property
    def keyring(self) -> Keyring | None:
        return self._keyring

    # memories

    def memory_body(self, memory: Memory) -> str:
        if self._keyring is None:
            return memory.model_dump_json(exclude={"embedding"})
        seal = self._keyring.for_writing(memory.tenant_id, memory.user_id)
        body = memory.model_dump(mode="json", exclude={"embedding"})
        _seal_fields(seal, body, MEMORY_FIELDS, "memory")
        source = body.get("source")
        if isinstance(source, dict):
            _seal_fields(seal, source, SOURCE_FIELDS, "memory.source")
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))

    def embedding_blob(self, memory: Memory, blob: bytes | None) -> bytes | None:
        if blob is None or self._keyring is None:
            return blob
        return self._keyring.for_writing(memory.tenant_id, memory.user_id).seal_bytes(blob, EMBEDDING_FIELD)

    def memory(self, body: str, blob: bytes | None) -> tuple[Memory, bytes | None]:
        """The memory of a row and its plain vector blob."""
        if SEALED_TEXT_PREFIX not in body and not is_sealed_bytes(blob):
            return Memory.model_validate_json(body), blob  # a plain row: no parse beyond pydantic's own
        fields = json.loads(body)
        seal = self._reading(str(fields["tenant_id"]), str(fields["user_id"]))
        _open_fields(seal, fields, MEMORY_FIELDS, "memory")
        source = fields.get("source")
        if isinstance(source, dict):
            _open_fields(seal, source, SOURCE_FIELDS, "memory.source")
        if is_sealed_bytes(blob):
            assert blob is not None
            blob = seal.open_bytes(blob, EMBEDDING_FIELD)
        return Memory.model_validate(fields), blob

    # interactions

    def interaction_body(self, interaction: Interaction) -> str:
        if self._keyring is None:
            return interaction.model_dump_json()
        seal = self._keyring.for_writing(interaction.tenant_id, interaction.user_id)
        body = interaction.model_dump(mode="json")
        _seal_fields(seal, body, INTERACTION_FIELDS, "interaction")
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))

    def interaction(self, body: str) -> Interaction:
        if SEALED_TEXT_PREFIX not in body:
            return Interaction.model_validate_json(body)
        fields = json.loads(body)
        _open_fields(
            self._reading(str(fields["tenant_id"]), str(fields["user_id"])), fields, INTERACTION_FIELDS, "interaction"
        )
        return Interaction.model_validate(fields)

    # generic items: an end user's whole body is sealed (nothing queries inside it); a tenant's stays plain

    def item_body(self, tenant_id: str, user_id: str, kind: str, key: str, body: dict[str, Any]) -> str:
        text = json.dumps(body)
        if self._keyring is None or not user_id:
            return text
        return self._keyring.for_writing(tenant_id, user_id).seal_text(text, _item_field(kind, key))

    def item(self, tenant_id: str, user_id: str, kind: str, key: str, body: str) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.item_text(tenant_id, user_id, kind, key, body))
        return loaded

    def item_text(self, tenant_id: str, user_id: str, kind: str, key: str, body: str) -> str:
        """The item's body as plain JSON text."""
        if user_id and is_sealed_text(body):
            return self._reading(tenant_id, user_id).open_text(body, _item_field(kind, key))
        return body

    def _reading(self, tenant_id: str, user_id: str) -> PersonSeal:
        if self._keyring is None:
            raise ErasedContentError("this row is sealed, and the store was opened without the person keys")
        return self._keyring.for_reading(tenant_id, user_id)


def _item_field(kind: str, key: str) -> str:
    # The item's identity is the associated data: a body copied onto another item of the person does not open.
    return f"item:{kind}#{key}"


def _seal_fields(seal: PersonSeal, fields: dict[str, Any], names: tuple[str, ...], where: str) -> None:
    for name in names:
        if name in fields and fields[name] is not None:
            fields[name] = seal.seal_text(json.dumps(fields[name], ensure_ascii=False), f"{where}.{name}")


def _open_fields(seal: PersonSeal, fields: dict[str, Any], names: tuple[str, ...], where: str) -> None:
    for name in names:
        if is_sealed_text(fields.get(name)):
            fields[name] = json.loads(seal.open_text(fields[name], f"{where}.{name}"))
