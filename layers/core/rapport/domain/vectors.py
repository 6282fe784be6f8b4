"""Vector arithmetic for embeddings, in plain Python: the Lambda layer carries no numpy."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence


def cosine(vector: Sequence[float], other: Sequence[float] | None) -> float:
    """The dot product of two unit vectors (0.0 when the other is missing or of another width)."""
    if not other or len(other) != len(vector):
        return 0.0
    # map(operator.mul) runs the products in C, a few times faster than a generator.
    return float(sum(map(operator.mul, vector, other)))


def blend(vector: Sequence[float], other: Sequence[float], weight: float) -> list[float]:
    """(1 - weight) x vector + weight x other, scaled back to unit length (so cosine stays a dot product)."""
    if len(vector) != len(other):
        raise ValueError(f"cannot blend vectors of {len(vector)} and {len(other)} dimensions")
    mixed = [(1.0 - weight) * a + weight * b for a, b in zip(vector, other, strict=True)]
    norm = math.sqrt(sum(x * x for x in mixed))
    if norm == 0.0:
        return list(vector)
    return [x / norm for x in mixed]
