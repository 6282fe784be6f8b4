"""Whose data a call is about: one end user of one tenant. The tenant comes from the caller's API key, the user id from
the client, checked here because it becomes part of storage keys."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from rapport.errors import InvalidInputError

# No '#': it separates the parts of a DynamoDB key, so allowing it would let one id pose as another.
USER_ID_PATTERN = r"^[A-Za-z0-9._@:+\-]{1,128}$"
_USER_ID = re.compile(USER_ID_PATTERN)


def check_user_id(user_id: str) -> str:
    if not _USER_ID.fullmatch(user_id):
        raise InvalidInputError(
            "user_id must be 1-128 characters of letters, digits and . _ @ : + - (no spaces or '#')"
        )
    return user_id


@dataclass(frozen=True)
class Scope:
    """One end user of one tenant; built from a checked user id (`Scope.of`) wherever a request names one."""

    tenant_id: str
    user_id: str

    @classmethod
    def of(cls, tenant_id: str, user_id: str) -> Scope:
        return cls(tenant_id=tenant_id, user_id=check_user_id(user_id))

    @property
    def user_hash(self) -> str:
        """How records that outlive the person (the audit trail) name them: a tenant that knows the id can find its
        events (the same hash), nothing kept spells it out."""
        digest = hashlib.sha256(f"{self.tenant_id}\x1f{self.user_id}".encode()).hexdigest()
        return f"sha256:{digest[:32]}"
