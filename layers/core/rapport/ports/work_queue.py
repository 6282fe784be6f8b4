"""Port `WorkQueue`: per-user job work handed to workers (SQS in AWS), so a run fans out across end users."""

from __future__ import annotations

from typing import Protocol


class WorkQueue(Protocol):
    def send(self, bodies: list[str]) -> None:
        """Enqueue every body (JSON text), or raise StorageError: a message silently dropped is a user skipped."""
