"""Port `MemoryStore`: the source of truth for memories, history, API keys and audit events."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Protocol

from rapport.domain.models import (
    ApiKeyRecord,
    AuditEvent,
    Domain,
    ErasureCounts,
    Interaction,
    Memory,
    Page,
)
from rapport.domain.scope import Scope


class MemoryStore(Protocol):
    """Every call carries the tenant; an id of another tenant or end user behaves as if it did not exist."""

    # memories
    def put_memory(self, memory: Memory, *, if_reinforced_at: datetime | None = None) -> None:
        """Insert or replace one memory (embedding included). With `if_reinforced_at`, replace it only while its
        stored `last_reinforced_at` is still that instant (ConflictError otherwise, and NotFoundError if it is
        gone): a reinforcement computed from a read does not overwrite one made since."""

    def get_memory(self, scope: Scope, memory_id: str) -> Memory:
        """The memory, or NotFoundError."""

    def get_memories(self, scope: Scope, memory_ids: Iterable[str]) -> list[Memory]:
        """The memories that exist among the ids, in no particular order; missing ids are skipped."""

    def delete_memory(self, scope: Scope, memory_id: str) -> None:
        """Remove one memory, or NotFoundError."""

    def list_memories(
        self,
        scope: Scope,
        *,
        domains: tuple[Domain, ...],
        memory_type: str | None = None,
        limit: int,
        cursor: str | None = None,
    ) -> Page[Memory]:
        """Memories newest first, one page at a time."""

    def count_memories(self, scope: Scope) -> int:
        """How many memories this end user has, in every domain and status."""

    def iter_all_memories(self, tenant_id: str | None = None) -> Iterable[Memory]:
        """Every memory (of one tenant, or all): for rebuilding the index."""

    # interactions
    def put_interaction(self, interaction: Interaction, episodes: Sequence[Memory] = ()) -> None:
        """Store the history item and the episodes it lists in one atomic write: a crash or a failed request leaves
        both or neither (DynamoDB: one transaction per 100 items, see docs/data-model.md)."""

    def remove_interaction(self, interaction: Interaction) -> None:
        """Undo `put_interaction`: the history item and the episodes it lists go together; missing ones are fine."""

    def get_interaction(self, scope: Scope, interaction_id: str) -> Interaction: ...

    def list_interactions(
        self, scope: Scope, *, limit: int, cursor: str | None = None, oldest_first: bool = False
    ) -> Page[Interaction]:
        """Interactions newest first (oldest first when asked: the retention cap trims from the oldest end)."""

    def delete_interaction(self, scope: Scope, interaction_id: str) -> None:
        """Remove one interaction from the history, or NotFoundError (so concurrent trims count each once)."""

    # tenancy
    def put_api_key(self, record: ApiKeyRecord) -> None: ...

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None: ...

    def register_user(self, scope: Scope) -> None:
        """Note that the tenant has this end user (idempotent), so jobs can walk users without a scan."""

    def list_users(self, tenant_id: str, *, limit: int, cursor: str | None = None) -> Page[str]: ...

    def list_tenants(self, *, limit: int, cursor: str | None = None) -> Page[str]:
        """Tenants in id order, every one with a registered end user among them (a tenant whose end users were all
        erased may still be listed): where the scheduled jobs start walking."""

    # privacy
    def erase_user(self, scope: Scope) -> ErasureCounts:
        """Remove every item of the end user; counts of what went."""

    def put_audit_event(self, event: AuditEvent) -> None: ...

    def list_audit_events(self, tenant_id: str, *, limit: int, cursor: str | None = None) -> Page[AuditEvent]:
        """Audit events newest first."""
