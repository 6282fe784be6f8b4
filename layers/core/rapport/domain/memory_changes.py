"""A change to one memory as the index needs to see it: its new state, or its removal."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, model_validator

from rapport.domain.models import Memory


class MemoryRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    tenant_id: str
    user_id: str
    memory_id: str


class MemoryChange(BaseModel):
    """One change to one memory: its new state (`memory`), or its removal (`removed`). `previous` lets a change
    that touches nothing the index holds (a reinforced strength) skip the index write."""

    memory: Memory | None = None
    previous: Memory | None = None
    removed: MemoryRef | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> MemoryChange:
        if (self.memory is None) == (self.removed is None):
            raise ValueError("a memory change is either an upsert (memory) or a removal (removed)")
        return self
