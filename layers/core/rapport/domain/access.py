"""What an API key may do: its scopes, and the rule that grants a route's scopes to the scopes a key holds."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from rapport.errors import InvalidInputError


class ApiScope(StrEnum):
    MEMORIES_READ = "memories:read"
    MEMORIES_WRITE = "memories:write"
    KNOWLEDGE_WRITE = "knowledge:write"
    PRIVACY_ERASE = "privacy:erase"
    ADMIN = "admin"


# A key with no scopes recorded (issued before keys had scopes, or created without `--scope`) could do everything,
# so it still can: a deployment that upgrades must not break its clients. Least privilege is asked for, not imposed.
LEGACY_SCOPES: frozenset[ApiScope] = frozenset({ApiScope.ADMIN})


def parse_scopes(names: Iterable[str]) -> frozenset[ApiScope]:
    """The scopes named, refusing an unknown name with the list of known ones (a typo must not mint a weaker key
    silently, nor a stronger one)."""
    scopes: set[ApiScope] = set()
    for name in names:
        try:
            scopes.add(ApiScope(name.strip()))
        except ValueError as exc:
            known = ", ".join(scope.value for scope in ApiScope)
            raise InvalidInputError(f"unknown scope {name!r}: the scopes are {known}") from exc
    return frozenset(scopes)


def scopes_text(scopes: Iterable[ApiScope]) -> str:
    """Space separated, sorted: how the authorizer's context carries them (its values must be strings)."""
    return " ".join(sorted(scope.value for scope in scopes))


def scopes_from_text(text: str) -> frozenset[ApiScope]:
    """The inverse of `scopes_text`; a name this version does not know grants nothing."""
    return frozenset(ApiScope(name) for name in text.split() if name in ApiScope._value2member_map_)


def missing_scopes(held: Iterable[ApiScope], needed: Iterable[ApiScope]) -> list[ApiScope]:
    """The scopes of `needed` the key lacks, in the order needed: `admin` holds every scope, any other only itself."""
    held = frozenset(held)
    if ApiScope.ADMIN in held:
        return []
    return [scope for scope in needed if scope not in held]
