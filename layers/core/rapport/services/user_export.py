"""Export one end user: everything the service keeps about them, as `rapport-export` lines, a bounded page at a time.

A page is bounded in lines and bytes because an answer is (Lambda's 6 MB response, the local gateway's memory), so
a person with years of history is exported over several requests, each resuming where the last stopped. The cursor
names the section (kind) and that section's own store cursor; each section is read with the listing it already has
(no scan), in the order `LineKind` gives.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rapport.clock import Clock
from rapport.domain.models import Domain
from rapport.domain.relations import SYMMETRIC, Edge
from rapport.domain.scope import DEFAULT_AGENT, Scope
from rapport.errors import InvalidInputError
from rapport.ports.items import ItemQuery, ItemScope, ItemStore
from rapport.ports.store import MemoryStore
from rapport.services.edges import ADJACENCY_KIND
from rapport.services.export_format import OMITTED_MEMORY_FIELDS, LineKind, header, record
from rapport.services.filter_decisions import FILTER_KIND
from rapport.services.people import PERSON_KIND
from rapport.services.profiles import PROFILE_KEY, PROFILE_KIND
from rapport.services.relational_state import state_ref

# A page stops once past either bound; the bytes bound leaves room for the last batch read (an interaction may be
# large, so interactions are read 10 at a time) under Lambda's 6 MB answer.
PAGE_LINES = 1000
PAGE_BYTES = 2 * 1024 * 1024
_BATCH = 100
_INTERACTION_BATCH = 10
_ORDER = list(LineKind)
_ANY_NAMED = "named"  # any named assistant: its state's kind is every named assistant's


@dataclass(frozen=True)
class ExportPage:
    lines: list[dict[str, Any]]  # the header first
    next_cursor: str | None

    def ndjson(self) -> str:
        return "".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in self.lines)


@dataclass(frozen=True)
class _Position:
    section: int
    cursor: str | None  # the section's store cursor; None: from its start

    def encode(self) -> str:
        raw = json.dumps({"s": self.section, "c": self.cursor}, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, cursor: str | None) -> _Position:
        if not cursor:
            return cls(0, None)
        try:
            raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
            section, inner = raw["s"], raw["c"]
        except (binascii.Error, ValueError, TypeError, KeyError) as exc:
            raise InvalidInputError("cursor is not one this export gave: pass next_cursor from the last page") from exc
        if not isinstance(section, int) or not 0 <= section < len(_ORDER) or not isinstance(inner, str | None):
            raise InvalidInputError("cursor is not one this export gave: pass next_cursor from the last page")
        return cls(section, inner)


Batch = tuple[list[dict[str, Any]], str | None]  # lines, and the section's cursor for more (None: section done)


class UserExport:
    def __init__(self, store: MemoryStore, items: ItemStore, clock: Clock) -> None:
        self._store = store
        self._items = items
        self._clock = clock

    def page(self, scope: Scope, cursor: str | None = None) -> ExportPage:
        """The next page: a header, then lines until a bound is passed or the export ends."""
        position = _Position.decode(cursor)
        readers: dict[LineKind, Callable[[Scope, str | None], Batch]] = {
            LineKind.PROFILE: self._profile,
            LineKind.STATE: self._state,
            LineKind.MEMORY: self._memories,
            LineKind.EDGE: self._edges,
            LineKind.PERSON: self._people,
            LineKind.INTERACTION: self._interactions,
            LineKind.FILTER_DECISION: self._filter_decisions,
        }
        lines: list[dict[str, Any]] = []
        size = 0
        next_position: _Position | None = position
        while next_position is not None and len(lines) < PAGE_LINES and size < PAGE_BYTES:
            batch, more = readers[_ORDER[next_position.section]](scope, next_position.cursor)
            lines.extend(batch)
            size += sum(len(json.dumps(line)) for line in batch)
            if more is not None:
                next_position = _Position(next_position.section, more)
            elif next_position.section + 1 < len(_ORDER):
                next_position = _Position(next_position.section + 1, None)
            else:
                next_position = None
        next_cursor = next_position.encode() if next_position is not None else None
        first = header(scope.user_id, self._clock.now(), next_cursor=next_cursor)
        return ExportPage(lines=[first, *lines], next_cursor=next_cursor)

    # one reader per section, each one store request

    def _profile(self, scope: Scope, cursor: str | None) -> Batch:
        item = self._items.get_item(ItemScope.of_user(scope), PROFILE_KIND, PROFILE_KEY)
        return ([record(LineKind.PROFILE, item.body)] if item else []), None

    def _state(self, scope: Scope, cursor: str | None) -> Batch:
        """Every assistant's state with the person, each line naming its assistant: the default one's first, then
        the named ones' (one listing)."""
        lines: list[dict[str, Any]] = []
        if cursor is None:
            item = self._items.get_item(ItemScope.of_user(scope), *state_ref(DEFAULT_AGENT))
            if item is not None:
                lines.append(record(LineKind.STATE, {**item.body, "agent_id": DEFAULT_AGENT}))
        kind, _ = state_ref(_ANY_NAMED)
        page = self._items.list_items(ItemScope.of_user(scope), ItemQuery(kind=kind, limit=_BATCH, cursor=cursor))
        lines += [record(LineKind.STATE, {**item.body, "agent_id": item.key}) for item in page.items]
        return lines, page.next_cursor

    def _memories(self, scope: Scope, cursor: str | None) -> Batch:
        # The person's whole export: every assistant's relational memories, each line naming its assistant.
        page = self._store.list_memories(
            scope, domains=(Domain.USER, Domain.RELATIONAL), limit=_BATCH, cursor=cursor, every_assistant=True
        )
        lines = [record(LineKind.MEMORY, m.model_dump(mode="json"), OMITTED_MEMORY_FIELDS) for m in page.items]
        return lines, page.next_cursor

    def _edges(self, scope: Scope, cursor: str | None) -> Batch:
        page = self._items.list_items(
            ItemScope.of_user(scope), ItemQuery(kind=ADJACENCY_KIND, limit=_BATCH, cursor=cursor)
        )
        lines = []
        for item in page.items:
            # Each edge is in the adjacency items of both its ends: its outgoing copy is the one written, and a
            # symmetric edge (kept both ways) once, from its smaller end, as importing it writes both ways again.
            for name in sorted(item.body):
                if not name.startswith("out|"):
                    continue
                edge = Edge.model_validate(item.body[name])
                if edge.type in SYMMETRIC and edge.source_id > edge.target_id:
                    continue
                lines.append(record(LineKind.EDGE, edge.model_dump(mode="json")))
        return lines, page.next_cursor

    def _people(self, scope: Scope, cursor: str | None) -> Batch:
        return self._kind_items(scope, PERSON_KIND, LineKind.PERSON, cursor)

    def _filter_decisions(self, scope: Scope, cursor: str | None) -> Batch:
        return self._kind_items(scope, FILTER_KIND, LineKind.FILTER_DECISION, cursor)

    def _kind_items(self, scope: Scope, kind: str, line_kind: LineKind, cursor: str | None) -> Batch:
        page = self._items.list_items(ItemScope.of_user(scope), ItemQuery(kind=kind, limit=_BATCH, cursor=cursor))
        return [record(line_kind, item.body) for item in page.items], page.next_cursor

    def _interactions(self, scope: Scope, cursor: str | None) -> Batch:
        page = self._store.list_interactions(scope, limit=_INTERACTION_BATCH, cursor=cursor, oldest_first=True)
        return [record(LineKind.INTERACTION, i.model_dump(mode="json")) for i in page.items], page.next_cursor
