"""Port `TenantSecrets`: each tenant's shared secrets for signed ingestion (Slack signing secret, webhook secret)."""

from __future__ import annotations

import re
from typing import Protocol

from pydantic import SecretStr

from rapport.errors import InvalidInputError

# Secrets Manager names allow letters, digits and /_+=.@- ; a tenant id or secret name outside that set (or a '/',
# which would let one tenant's name reach into another's path) is refused before it becomes part of a name.
_NAME_PART = re.compile(r"^[A-Za-z0-9_+=.@-]{1,64}$")


def check_secret_name_part(what: str, value: str) -> str:
    if not _NAME_PART.fullmatch(value):
        raise InvalidInputError(f"{what} must be 1-64 characters of letters, digits and _+=.@- (got {value!r})")
    return value


class TenantSecrets(Protocol):
    def get(self, tenant_id: str, name: str) -> SecretStr | None:
        """The tenant's secret called `name`, or None when the tenant has not set one."""

    def put(self, tenant_id: str, name: str, value: SecretStr) -> None:
        """Create or replace the tenant's secret called `name`."""
