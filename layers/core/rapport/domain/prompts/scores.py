"""Field helpers shared by the response models: scores a model may overshoot are clamped, not rejected."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator


def _clamp(value: object) -> object:
    # 1.2 from a model means "very": clamping keeps the answer; rejecting it would cost a retry for nothing.
    if isinstance(value, int | float) and not isinstance(value, bool):
        return min(max(float(value), 0.0), 1.0)
    return value


Score = Annotated[float, BeforeValidator(_clamp)]
