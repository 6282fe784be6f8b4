"""Port `EventBus`: hands an event to whatever consumes it (EventBridge in AWS, an in-process dispatcher locally)."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field


class BusEvent(BaseModel):
    """One event in EventBridge's terms: who sent it (`source`), what it is (`detail_type`), and its JSON body."""

    model_config = ConfigDict(frozen=True)

    source: str = Field(min_length=1, max_length=256)
    detail_type: str = Field(min_length=1, max_length=128)
    detail: dict[str, Any]


class EventBus(Protocol):
    def publish(self, event: BusEvent) -> None:
        """Deliver the event or raise (UpstreamError): a caller that got no exception may acknowledge its sender."""
