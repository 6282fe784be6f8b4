"""Ports `SentimentScorer` and `SignalDetector`: how positive a text is, and every signal in a user's message."""

from __future__ import annotations

from typing import Protocol

from rapport.domain.signals import Signals


class SentimentScorer(Protocol):
    def polarity(self, text: str) -> float:
        """-1 (very negative) .. 1 (very positive); 0 for neutral or empty text."""


class SignalDetector(Protocol):
    @property
    def name(self) -> str:
        """Identifies the detector ('vader+rules', 'llm:…'), recorded with what it detected."""

    def detect(self, text: str) -> Signals:
        """Emotions, shouting, crisis language, intent and mood of one user message. Never raises for odd text."""
