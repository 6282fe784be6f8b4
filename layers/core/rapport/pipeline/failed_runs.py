"""The local `DeadLetters`: a run that could not start or finish, kept as a `PIPELINE_FAILED` item of its tenant.

What SQS is in AWS: durable (the SQLite file), replayed by `rapport dlq replay`, and the same letter format. One
item per interaction, so a run failing twice is one letter (its latest failure), and a replay deletes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from rapport.clock import Clock
from rapport.domain.models import Page
from rapport.ports.dead_letters import DeadLetter, ReceivedLetter
from rapport.ports.items import ItemQuery, ItemScope, ItemStore

FAILED_RUN_KIND = "PIPELINE_FAILED"
_SEPARATOR = "\x1f"
TenantsPage = Callable[..., Page[str]]  # MemoryStore.list_tenants


class FailedRuns:
    def __init__(self, items: ItemStore, tenants: TenantsPage, clock: Clock) -> None:
        self._items = items
        self._tenants = tenants
        self._clock = clock

    def send(self, letter: DeadLetter) -> None:
        request = letter.request
        self._items.put_item(
            ItemScope(tenant_id=request.tenant_id),
            FAILED_RUN_KIND,
            f"{request.user_id}#{request.interaction_id}",
            letter.model_dump(mode="json", by_alias=True),
            now=self._clock.now(),
        )

    def receive(self, limit: int) -> list[ReceivedLetter]:
        received: list[ReceivedLetter] = []
        for tenant in self._all_tenants():
            cursor: str | None = None
            while len(received) < limit:
                page = self._items.list_items(
                    ItemScope(tenant_id=tenant), ItemQuery(kind=FAILED_RUN_KIND, limit=limit, cursor=cursor)
                )
                received += [
                    ReceivedLetter(letter=DeadLetter.model_validate(i.body), receipt=f"{tenant}{_SEPARATOR}{i.key}")
                    for i in page.items[: limit - len(received)]
                ]
                cursor = page.next_cursor
                if cursor is None:
                    break
            if len(received) >= limit:
                break
        return received

    def delete(self, receipt: str) -> None:
        tenant, _, key = receipt.partition(_SEPARATOR)
        self._items.delete_item(ItemScope(tenant_id=tenant), FAILED_RUN_KIND, key)

    def _all_tenants(self) -> Iterator[str]:
        cursor: str | None = None
        while True:
            page: Page[Any] = self._tenants(limit=100, cursor=cursor)
            yield from page.items
            cursor = page.next_cursor
            if cursor is None:
                return
