"""Slots: for each single-valued user fact (where the user lives, works, what they are called), the memory that holds
its current value, so a new value can invalidate the old one."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from rapport.domain.scope import Scope
from rapport.ports.items import ItemScope, ItemStore

SLOT_KIND = "SLOT"


class SlotHolder(BaseModel):
    memory_id: str
    content: str


class SlotRepository:
    def __init__(self, items: ItemStore) -> None:
        self._items = items

    def holder(self, scope: Scope, slot: str) -> SlotHolder | None:
        item = self._items.get_item(ItemScope.of_user(scope), SLOT_KIND, slot)
        return SlotHolder.model_validate(item.body) if item else None

    def hold(self, scope: Scope, slot: str, holder: SlotHolder, *, now: datetime) -> None:
        self._items.put_item(ItemScope.of_user(scope), SLOT_KIND, slot, holder.model_dump(mode="json"), now=now)
