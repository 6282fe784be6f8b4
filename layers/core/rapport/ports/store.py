"""Port `MemoryStore`: the source of truth for memories, history, API keys and audit events."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
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
from rapport.ports.items import ItemWrite


class MemoryStore(Protocol):
    """Every call carries the tenant; an id of another tenant or end user behaves as if it did not exist."""

    # memories
    def put_memory(self, memory: Memory, *, if_reinforced_at: datetime | None = None) -> None:
        """Insert or replace one memory (embedding included). With `if_reinforced_at`, replace it only while its
        stored `last_reinforced_at` is still that instant (ConflictError otherwise, and NotFoundError if it is
        gone): a reinforcement computed from a read does not overwrite one made since."""

    def update_memory(self, memory: Memory, *, if_reinforced_at: datetime | None = None) -> None:
        """Write every field of an existing memory but its embedding, which stays as stored (the memory's own
        `embedding` is not written): what a change of status, strength, tier or metadata costs is the memory's
        small fields, not its vector. NotFoundError when it is gone; `if_reinforced_at` as for `put_memory`."""

    def get_memory(self, scope: Scope, memory_id: str) -> Memory:
        """The memory, or NotFoundError."""

    def get_memories(
        self, scope: Scope, memory_ids: Iterable[str], *, vectors: Collection[str] | None = None
    ) -> list[Memory]:
        """The memories that exist among the ids, in no particular order; missing ids are skipped. `vectors`: the
        ids whose embedding the caller needs (None: every one); the others come without theirs, which is not read."""

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
        every_assistant: bool = False,
    ) -> Page[Memory]:
        """Memories newest first, one page at a time, without their embeddings (read them by id): the user memories
        and the relational memories of the scope's assistant, or (`every_assistant`, for the governance jobs) of
        every assistant. Reads by id (`get_memory`, `get_memories`) are the person's whatever the assistant: an id
        names one memory of the person; a use case answering a client checks `Memory.visible_to`."""

    def count_memories(self, scope: Scope) -> int:
        """How many memories this end user has, in every domain and status."""

    def iter_all_memories(self, tenant_id: str | None = None) -> Iterable[Memory]:
        """Every memory (of one tenant, or all): for rebuilding the index."""

    # interactions
    def put_interaction(
        self,
        interaction: Interaction,
        episodes: Sequence[Memory] = (),
        *,
        with_items: Sequence[ItemWrite] = (),
        known_user: bool = False,
    ) -> None:
        """Store the history item, the episodes it lists, the end user's registration (`register_user`) and
        `with_items` (writes of the end user's items, dated the interaction's `created_at`) in one atomic write: a
        crash or a failed request leaves all of it or none (DynamoDB: the history item, the registration and the
        item writes in one transaction, episodes beyond what it holds in transactions before it; see
        docs/data-model.md). A put or delete whose `expected_version` no longer holds is ConflictError, and nothing
        is stored. `known_user`: the caller knows the end user has been registered before, so the tenant's entry
        in the registry the jobs walk is not written again."""

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

    def list_api_keys(self, tenant_id: str) -> list[ApiKeyRecord]:
        """Every key of the tenant, revoked and expired ones included (they are listed, never accepted)."""

    def register_user(self, scope: Scope) -> None:
        """Note that the tenant has this end user (idempotent), so jobs can walk users without a scan."""

    def list_users(self, tenant_id: str, *, limit: int, cursor: str | None = None) -> Page[str]: ...

    def list_tenants(self, *, limit: int, cursor: str | None = None) -> Page[str]:
        """Tenants in id order, every one with a registered end user among them (a tenant whose end users were all
        erased may still be listed): where the scheduled jobs start walking."""

    # privacy
    def erase_user(self, scope: Scope) -> ErasureCounts:
        """Remove every item of the end user, every assistant's relationship with them included; counts of what
        went, in total and per assistant."""

    def put_audit_event(self, event: AuditEvent) -> None: ...

    def list_audit_events(
        self,
        tenant_id: str,
        *,
        limit: int,
        cursor: str | None = None,
        user_hash: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Page[AuditEvent]:
        """Audit events newest first; of one end user only (`user_hash`, as `Scope.user_hash`), and only those at
        or after `since` and before `until`, each bound read from the store's keys, not filtered after reading."""
