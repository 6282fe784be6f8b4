"""Port `Embedder`: text to vectors. Vectors come back L2-normalised so a dot product is the cosine."""

from __future__ import annotations

from typing import Protocol


class Embedder(Protocol):
    @property
    def dimensions(self) -> int: ...

    @property
    def name(self) -> str:
        """Identifies the model, so vectors of different models are never mixed."""

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order."""
