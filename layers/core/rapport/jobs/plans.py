"""Plan tiers as stored: on the tenant (a tenant-scoped item) and on each end user's profile."""

from __future__ import annotations

from datetime import datetime

from rapport.domain.lifecycle.retention import effective_plan, parse_plan
from rapport.domain.scope import Scope
from rapport.ports.items import ItemScope, ItemStore
from rapport.services.profiles import ProfileRepository
from rapport.settings import GovernanceSettings, PlanTier

PLAN_KIND = "PLAN"  # the tenant's item: sk `PLAN` in the `TENANT#{t}` partition
PLAN_KEY = ""  # one plan per tenant


class PlanDirectory:
    """The tenant's plan (its `PLAN` item, `{"tier": …}`) and the end user's (their profile's `plan_tier`)."""

    def __init__(self, items: ItemStore, settings: GovernanceSettings) -> None:
        self._items = items
        self._profiles = ProfileRepository(items)
        self._settings = settings

    def tenant_plan(self, tenant_id: str) -> PlanTier | None:
        item = self._items.get_item(ItemScope(tenant_id=tenant_id), PLAN_KIND, PLAN_KEY)
        return parse_plan(item.body.get("tier")) if item else None

    def set_tenant_plan(self, tenant_id: str, plan: PlanTier, now: datetime) -> None:
        self._items.put_item(ItemScope(tenant_id=tenant_id), PLAN_KIND, PLAN_KEY, {"tier": plan.value}, now=now)

    def user_plan(self, scope: Scope) -> PlanTier | None:
        profile = self._profiles.get(scope)
        return parse_plan(profile.plan_tier) if profile else None

    def plan_of(self, scope: Scope) -> PlanTier:
        return effective_plan(self.tenant_plan(scope.tenant_id), self.user_plan(scope), self._settings.default_plan)

    def smallest_cap(self) -> int | None:
        """The lowest message cap of any plan (None when no plan has one): a count at or below it needs no plan."""
        caps = [cap for plan in PlanTier if (cap := self._settings.max_messages(plan)) is not None]
        return min(caps, default=None)

    def max_messages(self, scope: Scope) -> int | None:
        return self._settings.max_messages(self.plan_of(scope))
