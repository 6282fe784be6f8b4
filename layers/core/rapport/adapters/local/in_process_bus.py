"""In-process adapter of the `EventBus` port: the local server's stand-in for EventBridge and its rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rapport.ports.event_bus import BusEvent

Subscriber = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class _Rule:
    source_prefix: str
    detail_type: str
    subscriber: Subscriber


class InProcessBus:
    """Dispatches each event, synchronously, to the subscribers whose rule matches (like an EventBridge rule on
    `source` prefix and `detail-type`). An exception in a subscriber reaches the publisher."""

    def __init__(self) -> None:
        self._rules: list[_Rule] = []

    def subscribe(self, *, source_prefix: str, detail_type: str, subscriber: Subscriber) -> None:
        self._rules.append(_Rule(source_prefix, detail_type, subscriber))

    def publish(self, event: BusEvent) -> None:
        matching = [
            rule
            for rule in self._rules
            if event.source.startswith(rule.source_prefix) and event.detail_type == rule.detail_type
        ]
        if not matching:
            # EventBridge would drop it; the stack routes such events to a DLQ instead, and locally that is a
            # wiring bug worth failing on rather than losing the event.
            raise LookupError(f"no subscriber for {event.source} / {event.detail_type}")
        for rule in matching:
            rule.subscriber(event.detail)
