"""Signals of a conversation: detected in the user's messages and written on the interaction before it is stored."""

from __future__ import annotations

from typing import Any

from rapport.domain.models import Interaction, Message, MessageRole
from rapport.domain.signals import Signals, combine, to_metadata
from rapport.ports.signals import SignalDetector


class SignalService:
    def __init__(self, detector: SignalDetector) -> None:
        self._detector = detector

    @property
    def detector_name(self) -> str:
        return self._detector.name

    def detect(self, text: str) -> Signals:
        return self._detector.detect(text)

    def detect_messages(self, messages: list[Message]) -> Signals:
        """The signals of the user's messages taken together; the assistant's words are not the user's mood."""
        readings = [
            self._detector.detect(m.content) for m in messages if m.role is MessageRole.USER and m.content.strip()
        ]
        return combine(readings)

    def enrich(self, interaction: Interaction) -> dict[str, Any]:
        """The enricher hook of InteractionService: metadata to store with the interaction."""
        return to_metadata(self.detect_messages(interaction.messages))
