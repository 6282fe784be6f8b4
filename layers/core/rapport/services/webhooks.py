"""Outbound webhook endpoints of a tenant: register (the secret shown once), list, read, delete, and the delivery
log of each, kept as tenant items of the store."""

from __future__ import annotations

import base64
import secrets
import threading
from collections.abc import Sequence
from datetime import datetime, timedelta

from rapport.clock import Clock
from rapport.domain.models import Page
from rapport.domain.webhooks import (
    DeliveryAttempt,
    OutboundEventType,
    WebhookEndpoint,
    check_endpoint_url,
    forbidden_address,
)
from rapport.errors import InvalidInputError, NotFoundError
from rapport.ids import new_id
from rapport.ports.items import ItemQuery, ItemScope, ItemStore
from rapport.ports.webhooks import AddressResolver
from rapport.settings import Settings

ENDPOINT_KIND = "WEBHOOK"
DELIVERY_KIND = "WEBHOOK_DELIVERY"
SECRET_PREFIX = "whsec_"  # noqa: S105 - the prefix of a secret, not one
_SECRET_BYTES = 32  # Standard Webhooks asks for 24 to 64 random bytes
_CACHED_TENANTS = 1024  # a process writing for more tenants than this reads their endpoints again


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(_SECRET_BYTES)).decode()


class WebhookRepository:
    """Endpoints and their delivery log in the tenant's partition (not an end user's: an erasure must not take the
    tenant's receivers with it, and the log names no user)."""

    def __init__(
        self,
        items: ItemStore,
        clock: Clock,
        *,
        log_kept_for: timedelta,
        cached_for: timedelta = timedelta(0),
        max_endpoints: int = 100,
    ) -> None:
        self._items = items
        self._clock = clock
        self._log_kept_for = log_kept_for
        self._cached_for = cached_for
        self._max_endpoints = max_endpoints
        self._cache: dict[str, tuple[datetime, list[WebhookEndpoint]]] = {}
        self._cache_lock = threading.Lock()

    def subscribed(self, tenant_id: str) -> list[WebhookEndpoint]:
        """The tenant's endpoints as every write announcing an event reads them: kept for `cached_for`, so a process
        writing many memories reads them once a while rather than once a write (what the write path's request
        count stays at). An endpoint registered in another process is heard of within that time; a deleted one is
        read again before each delivery, so it receives nothing once deleted."""
        now = self._clock.now()
        with self._cache_lock:
            cached = self._cache.get(tenant_id)
            if cached is not None and cached[0] > now:
                return cached[1]
        endpoints = self.list(tenant_id, limit=self._max_endpoints)
        with self._cache_lock:
            if len(self._cache) >= _CACHED_TENANTS:
                self._cache.clear()
            self._cache[tenant_id] = (now + self._cached_for, endpoints)
        return endpoints

    def _forget(self, tenant_id: str) -> None:
        with self._cache_lock:
            self._cache.pop(tenant_id, None)

    def put(self, endpoint: WebhookEndpoint) -> None:
        body = endpoint.model_dump(mode="json", exclude={"id", "tenant_id"})
        self._items.put_item(
            ItemScope(tenant_id=endpoint.tenant_id), ENDPOINT_KIND, endpoint.id, body, now=self._clock.now()
        )
        self._forget(endpoint.tenant_id)

    def get(self, tenant_id: str, endpoint_id: str) -> WebhookEndpoint | None:
        item = self._items.get_item(ItemScope(tenant_id=tenant_id), ENDPOINT_KIND, endpoint_id)
        if item is None:
            return None
        return WebhookEndpoint.model_validate({**item.body, "id": item.key, "tenant_id": tenant_id})

    def list(self, tenant_id: str, *, limit: int) -> list[WebhookEndpoint]:
        page = self._items.list_items(ItemScope(tenant_id=tenant_id), ItemQuery(kind=ENDPOINT_KIND, limit=limit))
        return [WebhookEndpoint.model_validate({**i.body, "id": i.key, "tenant_id": tenant_id}) for i in page.items]

    def delete(self, tenant_id: str, endpoint_id: str) -> bool:
        self._forget(tenant_id)
        return self._items.delete_item(ItemScope(tenant_id=tenant_id), ENDPOINT_KIND, endpoint_id)

    def log(self, tenant_id: str, endpoint_id: str, attempt: DeliveryAttempt) -> None:
        # The key sorts by time (a ULID of the moment), so the log reads newest first with one query.
        key = f"{endpoint_id}#{new_id(attempt.at)}"
        self._items.put_item(
            ItemScope(tenant_id=tenant_id),
            DELIVERY_KIND,
            key,
            attempt.model_dump(mode="json"),
            now=self._clock.now(),
            expires_at=attempt.at + self._log_kept_for,
        )

    def deliveries(self, tenant_id: str, endpoint_id: str, *, limit: int, cursor: str | None) -> Page[DeliveryAttempt]:
        now = self._clock.now()
        page = self._items.list_items(
            ItemScope(tenant_id=tenant_id),
            ItemQuery(kind=DELIVERY_KIND, key_prefix=f"{endpoint_id}#", limit=limit, cursor=cursor, descending=True),
        )
        return Page(
            items=[DeliveryAttempt.model_validate(i.body) for i in page.items if i.is_live(now)],
            next_cursor=page.next_cursor,
        )


def check_destination(url: str, resolver: AddressResolver, *, allow_local_http: bool) -> None:
    """InvalidInputError unless `url` is acceptable and every address its host resolves to now is public (or, where
    local http is allowed, this machine). Checked at registration and again before each delivery, since a name can
    be pointed elsewhere after it was registered."""
    host = check_endpoint_url(url, allow_local_http=allow_local_http)
    for address in resolver.addresses(host):
        reason = forbidden_address(address, allow_loopback=allow_local_http)
        if reason is not None:
            raise InvalidInputError(f"url: {host} is refused, {reason}: an endpoint must be on the public internet")


class WebhookEndpoints:
    """The `/v1/webhooks` use case: a tenant's endpoints and what was delivered to each."""

    def __init__(
        self, repository: WebhookRepository, resolver: AddressResolver, settings: Settings, clock: Clock
    ) -> None:
        self._repository = repository
        self._resolver = resolver
        self._settings = settings
        self._clock = clock

    def register(self, tenant_id: str, url: str, event_types: Sequence[OutboundEventType]) -> WebhookEndpoint:
        """The new endpoint, with its secret: the only time the secret is returned."""
        if not event_types:
            raise InvalidInputError(
                f"event_types: name at least one of {', '.join(t.value for t in OutboundEventType)}"
            )
        check_destination(url, self._resolver, allow_local_http=self._settings.webhook_allow_local_http)
        cap = self._settings.webhook_max_endpoints
        if len(self._repository.list(tenant_id, limit=cap)) >= cap:
            raise InvalidInputError(f"a tenant has at most {cap} webhook endpoints: delete one first")
        endpoint = WebhookEndpoint(
            id=f"whe_{new_id()}",
            tenant_id=tenant_id,
            url=url,
            event_types=sorted(set(event_types)),
            secret=new_secret(),
            created_at=self._clock.now(),
        )
        self._repository.put(endpoint)
        return endpoint

    def list(self, tenant_id: str) -> list[WebhookEndpoint]:
        return self._repository.list(tenant_id, limit=self._settings.webhook_max_endpoints)

    def get(self, tenant_id: str, endpoint_id: str) -> WebhookEndpoint:
        endpoint = self._repository.get(tenant_id, endpoint_id)
        if endpoint is None:
            raise NotFoundError(f"no webhook endpoint {endpoint_id!r}")
        return endpoint

    def delete(self, tenant_id: str, endpoint_id: str) -> None:
        """Deliveries still queued for it are dropped when their turn comes. Its log can no longer be read (the id
        answers 404) and expires with its TTL, rather than be deleted line by line inside this request: a busy
        endpoint's month of attempts would not fit in one."""
        if not self._repository.delete(tenant_id, endpoint_id):
            raise NotFoundError(f"no webhook endpoint {endpoint_id!r}")

    def deliveries(self, tenant_id: str, endpoint_id: str, *, limit: int, cursor: str | None) -> Page[DeliveryAttempt]:
        if not 1 <= limit <= self._settings.max_page_size:
            raise InvalidInputError(f"limit must be between 1 and {self._settings.max_page_size}; got {limit}")
        self.get(tenant_id, endpoint_id)
        return self._repository.deliveries(tenant_id, endpoint_id, limit=limit, cursor=cursor)
