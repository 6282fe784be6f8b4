"""The tenant's assistants: each named one noted once in the tenant's registry, listed with what it holds."""

from __future__ import annotations

import contextlib
import threading
from datetime import datetime

from pydantic import BaseModel

from rapport.clock import Clock
from rapport.domain.scope import DEFAULT_AGENT, Scope
from rapport.errors import ConflictError
from rapport.ports.items import ItemQuery, ItemScope, ItemStore
from rapport.ports.vector_index import RelationshipTally, VectorIndex

AGENT_KIND = "AGENT"  # tenant item, key = the assistant's id
_NOTED_KEPT = 10_000  # (tenant, assistant) pairs a process remembers having registered
_PAGE = 100


class RegisteredAgent(BaseModel):
    agent_id: str
    first_seen: datetime


class AssistantSummary(BaseModel):
    """One assistant as the tenant's listing shows it."""

    agent_id: str
    default: bool
    first_seen: datetime | None = None  # None for the default assistant, which is never registered
    people: int = 0
    relational_memories: int = 0


class AssistantDirectory:
    """The registry item (`AGENT#{a}` in the tenant's partition) is written the first time a process sees a named
    assistant write, and never again by that process: a conditional put that loses to an earlier one is the same
    answer. The default assistant writes nothing, so clients that never name one pay no request for it. Counts are
    not kept here: they come from one aggregation over the vector index when the tenant lists its assistants."""

    def __init__(self, items: ItemStore, index: VectorIndex, clock: Clock) -> None:
        self._items = items
        self._index = index
        self._clock = clock
        self._noted: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def note(self, scope: Scope) -> None:
        """Register the scope's assistant with its tenant, once per process; the default assistant needs none."""
        if scope.is_default_agent:
            return
        pair = (scope.tenant_id, scope.agent_id)
        with self._lock:
            if pair in self._noted:
                return
        now = self._clock.now()
        body = RegisteredAgent(agent_id=scope.agent_id, first_seen=now).model_dump(mode="json")
        with contextlib.suppress(ConflictError):  # registered before, by this process or another
            self._items.put_item(
                ItemScope(tenant_id=scope.tenant_id), AGENT_KIND, scope.agent_id, body, now=now, expected_version=0
            )
        with self._lock:
            if len(self._noted) >= _NOTED_KEPT:
                self._noted.clear()
            self._noted.add(pair)

    def list(self, tenant_id: str) -> list[AssistantSummary]:
        """The default assistant first, then the named ones in id order, each with its relationships' tallies."""
        tallies = self._index.relationship_tallies(tenant_id)
        registered: dict[str, datetime] = {}
        cursor: str | None = None
        while True:
            page = self._items.list_items(
                ItemScope(tenant_id=tenant_id), ItemQuery(kind=AGENT_KIND, limit=_PAGE, cursor=cursor)
            )
            for item in page.items:
                agent = RegisteredAgent.model_validate(item.body)
                registered[agent.agent_id] = agent.first_seen
            cursor = page.next_cursor
            if cursor is None:
                break
        # An assistant whose registration a failed write left out still shows, from what the index holds of it.
        named = sorted((set(registered) | set(tallies)) - {DEFAULT_AGENT})
        return [self._summary(DEFAULT_AGENT, None, tallies)] + [
            self._summary(agent, registered.get(agent), tallies) for agent in named
        ]

    @staticmethod
    def _summary(agent: str, first_seen: datetime | None, tallies: dict[str, RelationshipTally]) -> AssistantSummary:
        tally = tallies.get(agent, RelationshipTally())
        return AssistantSummary(
            agent_id=agent,
            default=agent == DEFAULT_AGENT,
            first_seen=first_seen,
            people=tally.people,
            relational_memories=tally.relational_memories,
        )
