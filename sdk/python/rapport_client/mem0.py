"""Mem0's export as `rapport-export` memory lines: each Mem0 memory becomes one user memory of provenance
`imported`, under an id made from Mem0's, so importing the same export again stores nothing twice."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
# Mem0 memories are facts and preferences about a person; a Mem0 category naming one of ours keeps it.
_TYPES = {"preference": "preference", "preferences": "preference", "goal": "goal", "goals": "goal", "event": "event"}


class Mem0FormatError(ValueError):
    """The document is not a Mem0 export: what was expected, for a person."""


def mem0_memories(document: Any) -> list[Mapping[str, Any]]:
    """The memories of a Mem0 export: `{"memories": [...]}` (or `{"results": [...]}`, what `get_all` answers), or
    a JSON list of them."""
    if isinstance(document, Mapping):
        for name in ("memories", "results"):
            if isinstance(document.get(name), list):
                document = document[name]
                break
        else:
            raise Mem0FormatError('a Mem0 export is {"memories": [...]} or a JSON list of memories')
    if not isinstance(document, list):
        raise Mem0FormatError('a Mem0 export is {"memories": [...]} or a JSON list of memories')
    return [m for m in document if isinstance(m, Mapping)]


def to_lines(document: Any, *, source_user: str | None = None) -> Iterator[dict[str, Any] | str]:
    """`rapport-export` lines for the memories of `source_user` (Mem0's `user_id`; None: every memory). A memory
    that cannot be read (no text) is passed on as a line the server reports, so the answer names it."""
    for memory in mem0_memories(document):
        if source_user is not None and memory.get("user_id") not in (None, source_user):
            continue
        yield to_line(memory)


def to_line(memory: Mapping[str, Any]) -> dict[str, Any]:
    text = memory.get("memory")
    if text is None:
        text = memory.get("text")
    mem0_id = str(
        memory.get("id") or hashlib.sha256(json.dumps(memory, sort_keys=True, default=str).encode()).hexdigest()
    )
    created = _time(memory.get("created_at")) or datetime.now(UTC)
    updated = _time(memory.get("updated_at")) or created
    raw_metadata, raw_categories = memory.get("metadata"), memory.get("categories")
    metadata: dict[str, Any] = dict(raw_metadata) if isinstance(raw_metadata, Mapping) else {}
    categories: list[Any] = list(raw_categories) if isinstance(raw_categories, list) else []
    given = {"id": mem0_id, "user_id": memory.get("user_id"), "categories": categories, "metadata": metadata}
    kept = {k: v for k, v in given.items() if v}  # Mem0's own fields, kept beside ours
    return {
        "kind": "memory",
        "id": ulid_for(mem0_id, created),
        "domain": "user",
        "type": _type_of(categories, metadata),
        "content": text if isinstance(text, str) else "",
        "source": {"kind": "imported", "channel": "mem0"},
        "trust": "imported",
        "metadata": {"mem0": kept},
        "created_at": created.isoformat(),
        "updated_at": updated.isoformat(),
        "last_reinforced_at": updated.isoformat(),
    }


def ulid_for(source_id: str, at: datetime) -> str:
    """A ULID from the memory's time (so it lists where it belongs) and a hash of Mem0's id (so it is the same on
    every import)."""
    millis = max(0, int(at.timestamp() * 1000)) & ((1 << 48) - 1)
    value = (millis << 80) | int.from_bytes(hashlib.sha256(source_id.encode()).digest()[:10], "big")
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def _type_of(categories: list[Any], metadata: Mapping[str, Any]) -> str:
    for name in [*categories, metadata.get("category"), metadata.get("type")]:
        if isinstance(name, str) and name.lower() in _TYPES:
            return _TYPES[name.lower()]
    return "fact"


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
