"""Whose data a call is about: one end user of one tenant, as seen by one of the tenant's assistants. The tenant comes
from the caller's API key, the user id and the assistant id from the client, checked here because they become part of
storage keys."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from rapport.errors import InvalidInputError

# No '#': it separates the parts of a DynamoDB key, so allowing it would let one id pose as another.
USER_ID_PATTERN = r"^[A-Za-z0-9._@:+\-]{1,128}$"
_USER_ID = re.compile(USER_ID_PATTERN)


# A tenant-defined slug naming one of its assistants (a coding assistant, a support bot). Lowercase, so "Coach" and
# "coach" cannot become two relationships with one person; no '#', as for user ids.
AGENT_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
_AGENT_ID = re.compile(AGENT_ID_PATTERN)
# The assistant a client that never names one talks to: its items keep the key layout they had before assistants
# had names (docs/data-model.md, "Assistants").
DEFAULT_AGENT = "default"


def check_agent_id(agent_id: str) -> str:
    if not _AGENT_ID.fullmatch(agent_id):
        raise InvalidInputError(
            "agent_id must be 1-64 characters of lowercase letters, digits, _ and -, starting with a letter or digit"
            f" (got {agent_id!r})"
        )
    return agent_id


def check_user_id(user_id: str) -> str:
    if not _USER_ID.fullmatch(user_id):
        raise InvalidInputError(
            "user_id must be 1-128 characters of letters, digits and . _ @ : + - (no spaces or '#')"
        )
    return user_id


@dataclass(frozen=True)
class Scope:
    """One end user of one tenant, as one of its assistants sees them; built from a checked user id (`Scope.of`)
    wherever a request names one. What the person said is shared by the tenant's assistants; the relationship
    (relational memories and state, its sessions) is the assistant's own."""

    tenant_id: str
    user_id: str
    agent_id: str = DEFAULT_AGENT

    @classmethod
    def of(cls, tenant_id: str, user_id: str, agent_id: str | None = None) -> Scope:
        agent = DEFAULT_AGENT if agent_id is None else check_agent_id(agent_id)
        return cls(tenant_id=tenant_id, user_id=check_user_id(user_id), agent_id=agent)

    def for_agent(self, agent_id: str | None) -> Scope:
        """The same person as another assistant sees them (None: this scope's assistant)."""
        if agent_id is None or agent_id == self.agent_id:
            return self
        return Scope(self.tenant_id, self.user_id, check_agent_id(agent_id))

    @property
    def is_default_agent(self) -> bool:
        return self.agent_id == DEFAULT_AGENT

    @property
    def user_hash(self) -> str:
        """How records that outlive the person (the audit trail) name them: a tenant that knows the id can find its
        events (the same hash), nothing kept spells it out."""
        digest = hashlib.sha256(f"{self.tenant_id}\x1f{self.user_id}".encode()).hexdigest()
        return f"sha256:{digest[:32]}"
