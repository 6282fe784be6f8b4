"""Port `PersonKeys`: where each end user's data key lives, wrapped under a key the deployment holds (KMS in AWS, a
key file locally), apart from the data it encrypts, so that destroying it leaves every copy of their content
unreadable (docs/security.md, "Per-person keys")."""

from __future__ import annotations

from typing import Protocol


class PersonKeys(Protocol):
    def load(self, tenant_id: str, user_id: str) -> bytes | None:
        """The person's 32-byte data key in plaintext, or None when they have none (never written, or erased)."""

    def create(self, tenant_id: str, user_id: str) -> bytes:
        """A new data key for the person, stored wrapped; when another writer created one first, that one (two
        writers of one person never seal with different keys)."""

    def destroy(self, tenant_id: str, user_id: str) -> bool:
        """Delete the person's wrapped key for good; True when there was one."""
