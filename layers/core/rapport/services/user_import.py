"""Import `rapport-export` lines into one end user: validated line by line, written under the ids they carry.

Read top to bottom: check the header → validate each line into its entity (a bad line is reported with its number
and skipped; the rest go on) → drop memories and interactions whose ids are already stored → embed the new memories
in one call and write them through `MemoryService` (store and index; not enrichment, as their edges are in the file)
→ write the keyed items (profile, state, people, decisions) and the edges → the interactions, without the pipeline
(the memories it made are in the file). Keeping ids is what makes a second import of the same file store
nothing twice: an id already there is skipped, a keyed item is written to the same key with the same body.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from rapport import strict_json
from rapport.clock import Clock
from rapport.domain.filtering import FilterDecision
from rapport.domain.models import TYPES_BY_DOMAIN, Interaction, Memory, MemoryStatus, Trust
from rapport.domain.people import Person
from rapport.domain.profile import Profile
from rapport.domain.quarantine import instructions_in
from rapport.domain.relational_state import RelationalState
from rapport.domain.relations import Edge
from rapport.domain.scope import DEFAULT_AGENT, Scope, check_agent_id
from rapport.errors import InvalidInputError, NotFoundError
from rapport.ids import is_valid_id
from rapport.ports.items import ItemPut, ItemScope, ItemStore, ItemWrite
from rapport.ports.store import MemoryStore
from rapport.services.edges import EdgeRepository
from rapport.services.export_format import FORMAT, HEADER, VERSION, LineKind
from rapport.services.filter_decisions import FILTER_KIND
from rapport.services.memories import MemoryService
from rapport.services.people import PERSON_KIND
from rapport.services.profiles import PROFILE_KEY, PROFILE_KIND
from rapport.services.relational_state import state_ref
from rapport.settings import Settings

# One request's lines: what a body under the local gateway's 1 MiB holds, and memories embedded in one call.
MAX_LINES = 1000
MEDIA_TYPE = "application/x-ndjson"


@dataclass
class LineError:
    line: int
    error: str
    message: str


@dataclass
class ImportResult:
    imported: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)  # already stored under the same id
    errors: list[LineError] = field(default_factory=list)


@dataclass
class _Parsed:
    memories: list[Memory] = field(default_factory=list)
    interactions: list[Interaction] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    items: list[tuple[str, ItemPut]] = field(default_factory=list)  # (line kind, the write)
    agents: set[str] = field(default_factory=set)  # the assistants the lines name, registered with the tenant


class _BadLineError(Exception):
    def __init__(self, error: str, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


class UserImport:
    def __init__(
        self, store: MemoryStore, items: ItemStore, memories: MemoryService, settings: Settings, clock: Clock
    ) -> None:
        self._store = store
        self._items = items
        self._memories = memories
        self._edges = EdgeRepository(items, clock)
        self._settings = settings
        self._clock = clock

    def import_text(self, scope: Scope, text: str) -> ImportResult:
        """`text`: the lines, a header first (a file sent in chunks repeats it atop each). A body that is not this
        format at all (no header, too many lines) is InvalidInputError; a bad line is reported, not fatal."""
        numbered = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
        if not numbered:
            raise InvalidInputError(f"the body is empty: send {FORMAT} lines, a header first")
        if len(numbered) > MAX_LINES:
            raise InvalidInputError(f"the body has {len(numbered)} lines; send at most {MAX_LINES} per request")
        _check_header(*numbered[0])
        result = ImportResult()
        parsed = _Parsed()
        for number, line in numbered[1:]:
            try:
                self._parse(scope, line, parsed)
            except _BadLineError as bad:
                result.errors.append(LineError(number, bad.error, bad.message))
        self._write(scope, parsed, result)
        return result

    # validation

    def _parse(self, scope: Scope, line: str, parsed: _Parsed) -> None:
        try:
            value = strict_json.loads(line)
        except json.JSONDecodeError as exc:
            raise _BadLineError("malformed_json", f"not a JSON object: {exc.msg}") from exc
        if not isinstance(value, dict):
            raise _BadLineError("malformed_json", "a line must be one JSON object")
        kind = value.pop("kind", None)
        if kind == HEADER:
            _check_header_value(value)
            return
        if kind == "end":
            return
        try:
            line_kind = LineKind(kind)
        except ValueError:
            valid = ", ".join(k.value for k in LineKind)
            raise _BadLineError("unknown_kind", f"kind {kind!r} is not one of: header, {valid}") from None
        try:
            self._parse_kind(scope, line_kind, value, parsed)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'line'}: {e['msg']}" for e in exc.errors())
            raise _BadLineError("invalid_line", f"not a valid {line_kind.value}: {problems}") from None

    def _parse_kind(self, scope: Scope, kind: LineKind, value: dict[str, Any], parsed: _Parsed) -> None:
        owner = {"tenant_id": scope.tenant_id, "user_id": scope.user_id}
        if kind is LineKind.MEMORY:
            memory = self._memory(Memory.model_validate({**value, **owner, "embedding": None}))
            parsed.agents.add(_agent_of(memory.agent_id))
            parsed.memories.append(memory)
        elif kind is LineKind.INTERACTION:
            interaction = Interaction.model_validate({**value, **owner})
            _check_id(interaction.id, "interaction")
            parsed.agents.add(_agent_of(interaction.agent_id))
            parsed.interactions.append(interaction)
        elif kind is LineKind.EDGE:
            parsed.edges.append(Edge.model_validate(value))
        elif kind is LineKind.PROFILE:
            body = Profile.model_validate(value).model_dump(mode="json")
            parsed.items.append((kind.value, ItemPut(kind=PROFILE_KIND, key=PROFILE_KEY, body=body)))
        elif kind is LineKind.STATE:
            # A file written before assistants had names holds the one state, the default assistant's.
            agent = _agent_of(value.pop("agent_id", DEFAULT_AGENT))
            body = RelationalState.model_validate(value).model_dump(mode="json")
            state_kind, state_key = state_ref(agent)
            parsed.agents.add(agent)
            parsed.items.append((kind.value, ItemPut(kind=state_kind, key=state_key, body=body)))
        elif kind is LineKind.PERSON:
            person = Person.model_validate(value)
            if not person.slug or "#" in person.slug:
                raise _BadLineError("invalid_line", f"person slug {person.slug!r} is empty or holds '#'")
            parsed.items.append(
                (kind.value, ItemPut(kind=PERSON_KIND, key=person.slug, body=person.model_dump(mode="json")))
            )
        else:
            decision = FilterDecision.model_validate({**value, **owner})
            _check_id(decision.id, "filter decision")
            parsed.agents.add(_agent_of(decision.agent_id))
            parsed.items.append(
                (kind.value, ItemPut(kind=FILTER_KIND, key=decision.id, body=decision.model_dump(mode="json")))
            )

    def _memory(self, memory: Memory) -> Memory:
        _check_id(memory.id, "memory")
        limit = self._settings.max_content_chars
        if not memory.content.strip() or len(memory.content) > limit:
            raise _BadLineError("invalid_line", f"memory content must hold 1 to {limit} characters")
        if memory.type not in TYPES_BY_DOMAIN[memory.domain]:
            valid = ", ".join(sorted(TYPES_BY_DOMAIN[memory.domain]))
            message = f"type {memory.type!r} is not a {memory.domain.value} type; valid: {valid}"
            raise _BadLineError("invalid_line", message)
        # Another system's memories were never screened here: one that reads as instructions to the assistant is
        # kept quarantined, as the interaction path keeps such a message, until the tenant restores it.
        if memory.trust is Trust.IMPORTED and memory.status is not MemoryStatus.QUARANTINED:
            finding = instructions_in(memory.content)
            if finding is not None:
                metadata = {**memory.metadata, "quarantine": finding.marker()}
                memory = memory.model_copy(update={"status": MemoryStatus.QUARANTINED, "metadata": metadata})
        return memory

    # writing

    def _write(self, scope: Scope, parsed: _Parsed, result: ImportResult) -> None:
        memories = {m.id: m for m in parsed.memories}  # the last line with an id wins, as a put would
        stored = {m.id for m in self._store.get_memories(scope, list(memories))}
        new = [m for memory_id, m in memories.items() if memory_id not in stored]
        result.skipped[LineKind.MEMORY.value] += len(parsed.memories) - len(new)
        self._memories.restore_many(scope, new)
        result.imported[LineKind.MEMORY.value] += len(new)
        for agent in sorted(parsed.agents):
            self._memories.note_assistant(scope.for_agent(agent))

        writes: list[ItemWrite] = []
        for kind, put in _unique_items(parsed.items):
            writes.append(put)
            result.imported[kind] += 1
        if writes:
            self._items.write_items(ItemScope.of_user(scope), writes, now=self._clock.now())
        if parsed.edges:
            self._edges.put_many(scope, parsed.edges)
            result.imported[LineKind.EDGE.value] += len(parsed.edges)

        known = False
        for interaction in parsed.interactions:
            if self._has_interaction(scope, interaction.id):
                result.skipped[LineKind.INTERACTION.value] += 1
                continue
            self._store.put_interaction(interaction, known_user=known)
            known = True
            result.imported[LineKind.INTERACTION.value] += 1
        if not new and not known and (writes or parsed.edges):
            # Keyed items alone still make the person one of the tenant's end users (GET /v1/users).
            self._store.register_user(scope)

    def _has_interaction(self, scope: Scope, interaction_id: str) -> bool:
        try:
            self._store.get_interaction(scope, interaction_id)
        except NotFoundError:
            return False
        return True


def _check_header(number: int, line: str) -> None:
    try:
        value = strict_json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"line {number} is not JSON ({exc.msg}); the first line must be the header") from exc
    if not isinstance(value, dict) or value.get("kind") != HEADER:
        raise InvalidInputError(
            f'the first line must be the header {{"kind": "header", "format": "{FORMAT}", "version": {VERSION}}}'
        )
    try:
        _check_header_value(value)
    except _BadLineError as bad:
        raise InvalidInputError(bad.message) from None


def _check_header_value(value: dict[str, Any]) -> None:
    if value.get("format") != FORMAT or value.get("version") != VERSION:
        raise _BadLineError(
            "unsupported_format",
            f"the header says format {value.get('format')!r} version {value.get('version')!r}; this server reads "
            f"{FORMAT} version {VERSION}",
        )


def _check_id(value: str, what: str) -> None:
    # Ids become storage keys: a ULID is what the service makes, and nothing else can pose as part of a key.
    if not is_valid_id(value):
        raise _BadLineError("invalid_line", f"{what} id {value!r} is not a ULID (26 characters of Crockford base32)")


def _agent_of(value: Any) -> str:
    """An assistant id a line names, checked as a request's would be (it becomes part of keys)."""
    if not isinstance(value, str):
        raise _BadLineError("invalid_line", "agent_id must be a string")
    try:
        return check_agent_id(value)
    except InvalidInputError as exc:
        raise _BadLineError("invalid_line", str(exc)) from None


def _unique_items(items: list[tuple[str, ItemPut]]) -> list[tuple[str, ItemPut]]:
    last: dict[tuple[str, str], tuple[str, ItemPut]] = {}
    for kind, put in items:
        last[(put.kind, put.key)] = (kind, put)
    return list(last.values())
