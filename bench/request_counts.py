"""The request counts of one API call, for the cost model and its test: the counting lives in the package
(`rapport.evaluation.request_counts`), where `rapport bench requests` runs the same code."""

from __future__ import annotations

from rapport.evaluation.request_counts import (
    CountingBus,
    CountingEmbedder,
    CountingIndex,
    CountingLanguageModel,
    OperationCounts,
    Tally,
    by_service,
    count_dynamodb,
    counting_bus,
    dynamodb_requests,
    measure_operation_counts,
)

__all__ = [
    "CountingBus",
    "CountingEmbedder",
    "CountingIndex",
    "CountingLanguageModel",
    "OperationCounts",
    "Tally",
    "by_service",
    "count_dynamodb",
    "counting_bus",
    "dynamodb_requests",
    "measure_operation_counts",
]
