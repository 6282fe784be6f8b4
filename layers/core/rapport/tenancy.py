"""Which tenant a unit of work acts for, below the application: what the stores' fences and the tenant-scoped
credentials are keyed on.

The binding is set once where the tenant is known from outside the application's own data (the authorizer's context
of an API request, a bus event's tenant, a pipeline task's input) and read by the adapters on every request they
send. A context variable, so each thread of the local server and each Lambda invocation has its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from rapport.errors import TenantFenceError

_BOUND: ContextVar[str | None] = ContextVar("rapport_bound_tenant", default=None)

# Session tags of the tenant access role (infra/constructs/tenant_access.py names the same keys in its policies).
TENANT_TAG = "tenant"
# Index and alias names must be lowercase and avoid a few characters a tenant id may hold, so the OpenSearch fence
# is keyed on a digest of the id: hex, fixed length, and two ids never share one (unlike a lowercased id).
TENANT_DIGEST_TAG = "tenant_digest"
_DIGEST_CHARS = 32


@contextmanager
def acting_for(tenant_id: str) -> Iterator[None]:
    """Everything inside acts for this tenant alone; nesting a different tenant inside is a bug and refused."""
    if not tenant_id:
        raise TenantFenceError("no tenant to act for")
    current = _BOUND.get()
    if current is not None and current != tenant_id:
        raise TenantFenceError(f"already acting for another tenant; refusing to act for {tenant_id!r} inside it")
    token = _BOUND.set(tenant_id)
    try:
        yield
    finally:
        _BOUND.reset(token)


def bound_tenant() -> str | None:
    """The tenant this unit of work acts for, or None outside any (the authorizer, operators' tools, jobs)."""
    return _BOUND.get()


def tenant_digest(tenant_id: str) -> str:
    return hashlib.sha256(tenant_id.encode()).hexdigest()[:_DIGEST_CHARS]


def session_tags(tenant_id: str) -> dict[str, str]:
    """The tags a tenant-scoped session carries: the policies fence on them (`${aws:PrincipalTag/…}`)."""
    return {TENANT_TAG: tenant_id, TENANT_DIGEST_TAG: tenant_digest(tenant_id)}
