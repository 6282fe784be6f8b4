"""Who may call each route, and the audit trail of what was called: one table, operation id → the scopes the key
needs and whether the call is audited, enforced by one middleware that runs before anything reads the request.

A route missing from the table needs `admin` (closed, not open), and `tests/integration/test_scoped_keys.py` fails
for any route without an entry. A call is audited when it writes (any method but GET) or is a privileged read (one
marked below: reads of the tenant's configuration, of its list of end users, of a whole end user at once, and of the
audit trail itself); the event names the key, the operation, the end user by hash, the time and the status answered
— never a body. Reads of memories are not audited: they are the hot path (a recall would cost a write), and a key's
use of them is in the access logs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.middlewares import NextMiddleware

from rapport.api.identity import Caller, CallerOf
from rapport.domain.access import ApiScope, missing_scopes
from rapport.domain.models import AuditAction
from rapport.domain.scope import Scope
from rapport.errors import ForbiddenError, InvalidInputError
from rapport.services.audit import AuditTrail
from rapport.tenancy import acting_for

READ = ApiScope.MEMORIES_READ
WRITE = ApiScope.MEMORIES_WRITE
KNOWLEDGE = ApiScope.KNOWLEDGE_WRITE
ERASE = ApiScope.PRIVACY_ERASE
ADMIN = ApiScope.ADMIN


@dataclass(frozen=True)
class Access:
    scopes: tuple[ApiScope, ...]
    privileged_read: bool = False
    # The use case writes its own, richer event when it succeeds (an erasure's counts): a second one here would say
    # it twice. A refused or failed call never reaches that point, so it is recorded here.
    audited_by_use_case: bool = False

    def audit_action(self, method: str, status: int) -> AuditAction | None:
        if self.audited_by_use_case:
            return AuditAction.WRITE if status >= 300 else None
        if method.upper() != "GET":
            return AuditAction.WRITE
        return AuditAction.PRIVILEGED_READ if self.privileged_read else None


ROUTE_ACCESS: Mapping[str, Access] = {
    # an end user's memories, history and what was derived from them
    "memories_list": Access((READ,)),
    "memories_get": Access((READ,)),
    "memories_add": Access((WRITE,)),
    "memories_add_many": Access((WRITE,)),
    "memories_update": Access((WRITE,)),
    "memories_delete": Access((WRITE,)),
    "memories_mark_used": Access((WRITE,)),
    "consolidations_undo": Access((WRITE,)),
    "interactions_record": Access((WRITE,)),
    "interactions_list": Access((READ,)),
    "interactions_get": Access((READ,)),
    "filter_decisions_list": Access((READ,)),
    "filter_decisions_get": Access((READ,)),
    "filter_decisions_restore": Access((WRITE,)),
    "associations_add": Access((WRITE,)),
    "associations_list": Access((READ,)),
    "associations_delete": Access((WRITE,)),
    "state_get": Access((READ,)),
    "events_report": Access((WRITE,)),
    "events_list": Access((READ,)),
    "people_list": Access((READ,)),
    "people_get": Access((READ,)),
    "sessions_context_get": Access((READ,)),
    # a turn reads the person's memories into its prompt and records what was said
    "process": Access((READ, WRITE)),
    "turns_reply": Access((WRITE,)),
    # the tenant's end users as a whole
    "users_list": Access((READ,), privileged_read=True),
    "agents_list": Access((READ,)),
    "users_export": Access((READ,), privileged_read=True),
    "users_import": Access((WRITE,)),
    "users_erase": Access((ERASE,), audited_by_use_case=True),
    # the knowledge graph every end user of the tenant shares
    "knowledge_query": Access((READ,)),
    "knowledge_nodes_get": Access((READ,)),
    "knowledge_add": Access((KNOWLEDGE,)),
    "knowledge_nodes_delete": Access((KNOWLEDGE,)),
    # the tenant's configuration and its audit trail
    "keys_list": Access((ADMIN,), privileged_read=True),
    "webhooks_create": Access((ADMIN,)),
    "webhooks_list": Access((ADMIN,), privileged_read=True),
    "webhooks_get": Access((ADMIN,), privileged_read=True),
    "webhooks_delete": Access((ADMIN,)),
    "webhooks_deliveries": Access((ADMIN,), privileged_read=True),
    "audit_list": Access((ADMIN,), privileged_read=True),
}
UNLISTED = Access((ADMIN,))


def required_scopes(operation_id: str) -> tuple[ApiScope, ...]:
    return ROUTE_ACCESS.get(operation_id, UNLISTED).scopes


def access_control(
    *,
    caller_of: CallerOf,
    audit: AuditTrail,
    is_public: Callable[[str], bool],
    errors: Callable[[Exception, Any], Any],
) -> Callable[[Any, NextMiddleware], Response]:
    """The middleware: a public route (`is_public(route path)`) passes; any other needs a caller whose key holds
    the route's scopes, or answers 403 naming the scope. An audited call is recorded with the status it answered,
    a refused one included. `errors` is the resolver's own exception handling, so the status recorded is the one
    sent."""

    def check_scopes_and_audit(app: Any, next_middleware: NextMiddleware) -> Response:
        route = app.context.get("_route")
        if route is None or is_public(route.path):
            return next_middleware(app)
        access = ROUTE_ACCESS.get(route.operation_id, UNLISTED)
        caller = caller_of(app.current_event)  # no tenant: 401, before anything is recorded
        try:
            missing = missing_scopes(caller.scopes, access.scopes)
            if missing:
                needed = " and ".join(scope.value for scope in missing)
                raise ForbiddenError(
                    f"{route.operation_id} requires scope {needed}; this key has "
                    f"{', '.join(sorted(s.value for s in caller.scopes)) or 'none'}",
                    details={
                        "operation": route.operation_id,
                        "required_scopes": [scope.value for scope in access.scopes],
                        "missing_scopes": [scope.value for scope in missing],
                    },
                )
            response: Response = next_middleware(app)
        except Exception as exc:
            handled = errors(exc, route)
            if handled is None:
                _record(audit, app, caller, access.audit_action(route.method, 500), route.operation_id, 500)
                raise
            response = handled.response
        status = response.status_code
        _record(audit, app, caller, access.audit_action(route.method, status), route.operation_id, status)
        return response

    return check_scopes_and_audit


def _record(
    audit: AuditTrail, app: Any, caller: Caller, action: AuditAction | None, operation: str, status: int
) -> None:
    if action is None:
        return
    # Outside the route's own middlewares, so the store is bound to the caller's tenant here again (in AWS its
    # credentials are that tenant's session, and a call bound to none is refused).
    with acting_for(caller.tenant_id):
        audit.record(
            caller.tenant_id,
            actor=caller.principal,
            action=action,
            operation=operation,
            user_hash=_user_hash(caller.tenant_id, app.context.get("_route_args") or {}),
            status=status,
        )


def _user_hash(tenant_id: str, route_args: Mapping[str, Any]) -> str | None:
    """The end user the call was about, by hash: the path's `user_id`, or a validated body's (the turn routes name
    the user there). None for a tenant-wide call, or an id too malformed to be anyone's."""
    user_id = route_args.get("user_id")
    if not isinstance(user_id, str):
        user_id = next(
            (v.user_id for v in route_args.values() if isinstance(getattr(v, "user_id", None), str)),
            None,
        )
    if user_id is None:
        return None
    try:
        return Scope.of(tenant_id, user_id).user_hash
    except InvalidInputError:
        return None


def undeclared(operation_ids: Collection[str]) -> list[str]:
    """The operations of an app with no entry in the table: what the route test looks for."""
    return sorted(op for op in operation_ids if op not in ROUTE_ACCESS)
