"""Local adapter of `TenantSecrets`: secrets as tenant items of the store (the local server's SQLite file only)."""

from __future__ import annotations

from pydantic import SecretStr

from rapport.clock import Clock
from rapport.ports.items import ItemScope, ItemStore
from rapport.ports.tenant_secrets import check_secret_name_part

SECRET_KIND = "INGEST_SECRET"  # noqa: S105 - an item kind, not a secret


class ItemStoreTenantSecrets:
    """In clear in the local data directory, which is a developer's own disk. The AWS deployment never uses this:
    it sets RAPPORT_INGEST_SECRET_BACKEND=secretsmanager."""

    def __init__(self, items: ItemStore, clock: Clock) -> None:
        self._items = items
        self._clock = clock

    def get(self, tenant_id: str, name: str) -> SecretStr | None:
        item = self._items.get_item(ItemScope(tenant_id=tenant_id), SECRET_KIND, check_secret_name_part("name", name))
        value = item.body.get("value") if item else None
        return SecretStr(value) if isinstance(value, str) and value else None

    def put(self, tenant_id: str, name: str, value: SecretStr) -> None:
        self._items.put_item(
            ItemScope(tenant_id=check_secret_name_part("tenant_id", tenant_id)),
            SECRET_KIND,
            check_secret_name_part("name", name),
            {"value": value.get_secret_value()},
            now=self._clock.now(),
        )
