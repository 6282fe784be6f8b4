"""EventBridge adapter of the `EventBus` port: one `PutEvents` entry per event on the stack's custom bus."""

from __future__ import annotations

import json
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from rapport.errors import InvalidInputError, UpstreamError
from rapport.ports.event_bus import BusEvent

# PutEvents refuses an entry above 256 KB (source, detail-type and detail counted); checked here so the caller gets
# a message naming the limit instead of an opaque failed entry.
MAX_ENTRY_BYTES = 256 * 1024
_CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 5})


class EventBridgeBus:
    """Publishes to one custom bus. The client is built on first use, so wiring it at cold start costs nothing."""

    def __init__(self, bus_name: str, *, events_client: Any = None, region_name: str | None = None) -> None:
        if not bus_name:
            raise ValueError("an EventBridge bus name is required")
        self._bus_name = bus_name
        self._client = events_client
        self._region_name = region_name

    @property
    def bus_name(self) -> str:
        return self._bus_name

    def _events(self) -> Any:
        if self._client is None:
            self._client = boto3.client("events", region_name=self._region_name, config=_CLIENT_CONFIG)
        return self._client

    def publish(self, event: BusEvent) -> None:
        detail = json.dumps(event.detail, separators=(",", ":"), ensure_ascii=False)
        size = len(event.source.encode()) + len(event.detail_type.encode()) + len(detail.encode())
        if size > MAX_ENTRY_BYTES:
            raise InvalidInputError(
                f"the event is {size // 1024} KB; EventBridge carries at most {MAX_ENTRY_BYTES // 1024} KB per event"
            )
        entry = {
            "Source": event.source,
            "DetailType": event.detail_type,
            "Detail": detail,
            "EventBusName": self._bus_name,
        }
        try:
            response = self._events().put_events(Entries=[entry])
        except (ClientError, BotoCoreError) as exc:
            raise UpstreamError(f"EventBridge PutEvents failed: {type(exc).__name__}") from exc
        if response.get("FailedEntryCount", 0):
            # A failed entry is not an exception in boto3: without this check the event would be lost silently.
            failed = response["Entries"][0]
            raise UpstreamError(
                f"EventBridge refused the event: {failed.get('ErrorCode')} {failed.get('ErrorMessage')}"
            )
