"""`rapport jobs`: run a governance job by hand (as of `--now`) and undo a consolidation, against the configured
store (the local SQLite file, or the AWS table with RAPPORT_STORE=dynamodb)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

import typer

from rapport.cli_common import DataDir, Json, Progress, finish, settings_of
from rapport.domain.scope import Scope
from rapport.jobs.report import JobName, JobReport
from rapport.settings import PlanTier, Settings

app = typer.Typer(help="memory governance jobs", no_args_is_help=True)

# Choices for typer, from the domain's own enums so the two never drift.
Job = StrEnum("Job", {job.value: job.value for job in JobName})  # type: ignore[misc]
Plan = StrEnum("Plan", {tier.value: tier.value for tier in PlanTier})  # type: ignore[misc]


def _moment(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        message = f"{text!r} is not an ISO-8601 time (e.g. 2026-02-01T03:00:00Z)"
        raise typer.BadParameter(message, param_hint="--now") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _services(settings: Settings, now: datetime | None) -> Any:
    from rapport.clock import FixedClock, SystemClock
    from rapport.composition.services import build_services

    return build_services(settings, clock=FixedClock(now) if now else SystemClock())


def _counts(report: JobReport) -> dict[str, int]:
    summary = report.summary().items()
    return {k: v for k, v in summary if isinstance(v, int) and v and k not in {"users", "examined"}}


def _print_user(tenant: str, user: str, report: JobReport) -> None:
    if report.failed_users:
        print(f"{tenant}/{user}: FAILED (see the log); the other users still ran", file=sys.stderr)
    if not report.changed:
        return
    print(f"{tenant}/{user}: " + ", ".join(f"{name} {value}" for name, value in _counts(report).items()))
    for change in report.changes:
        print(f"  {change.action} {change.target} {change.detail}".rstrip())


def _user_row(tenant: str, user: str, report: JobReport) -> dict[str, Any]:
    return {
        "tenant": tenant,
        "user": user,
        "failed": bool(report.failed_users),
        "counts": _counts(report),
        "changes": [{"action": c.action, "target": c.target, "detail": c.detail} for c in report.changes],
    }


@app.command("run", help="run one job over every end user (or one tenant's) and print what changed")
def run(
    job: Annotated[Job, typer.Argument()],
    tenant: Annotated[str | None, typer.Option(help="only this tenant's end users (default: every tenant)")] = None,
    now: Annotated[str | None, typer.Option(help="run as of this ISO-8601 time (default: now)")] = None,
    json_output: Json = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress bar")] = False,
    data_dir: DataDir = None,
) -> int:
    from rapport.jobs.fanout import run_in_process

    as_of_given = _moment(now)
    settings = settings_of(data_dir)
    services = _services(settings, as_of_given)
    as_of = as_of_given or services.clock.now()
    users: list[dict[str, Any]] = []

    with Progress(f"jobs run {job.value}", None, enabled=not quiet) as progress:

        def on_user(tenant_id: str, user: str, report: JobReport) -> None:
            progress.advance()
            if json_output:
                if report.changed or report.failed_users:
                    users.append(_user_row(tenant_id, user, report))
            else:
                _print_user(tenant_id, user, report)

        total = run_in_process(
            services.store,
            services.governance,
            JobName(job.value),
            as_of,
            tenant_id=tenant,
            page_size=settings.governance.fanout_page_size,
            on_user=on_user,
        )
    if json_output:
        print(json.dumps({"job": job.value, "as_of": as_of.isoformat(), "summary": total.summary(), "users": users}))
    else:
        print(json.dumps(total.summary()))
        if not total.changed:
            print("nothing to change")
    return finish(1 if total.failed_users else 0)


@app.command("undo-consolidation", help="restore a consolidation's originals, archive the merged one")
def undo_consolidation(
    consolidation_id: Annotated[str, typer.Argument(help="the consolidated memory's id")],
    tenant: Annotated[str, typer.Option()],
    user: Annotated[str, typer.Option()],
    json_output: Json = False,
    data_dir: DataDir = None,
) -> None:
    services = _services(settings_of(data_dir), None)
    derivation, restored = services.governance.undo_consolidation(Scope(tenant, user), consolidation_id)
    if json_output:
        members = [{"memory_id": m, "restored": m in restored} for m in derivation.member_ids]
        print(json.dumps({"consolidation_id": derivation.id, "state": derivation.state.value, "originals": members}))
        return
    print(f"consolidation {derivation.id} is {derivation.state.value}; restored {len(restored)} of its originals:")
    for memory_id in derivation.member_ids:
        print(f"  {memory_id}{'' if memory_id in restored else ' (was not archived)'}")


@app.command("set-plan", help="put a tenant on a plan tier (its retention cap)")
def set_plan(
    plan: Annotated[Plan, typer.Argument()],
    tenant: Annotated[str, typer.Option()],
    json_output: Json = False,
    data_dir: DataDir = None,
) -> None:
    services = _services(settings_of(data_dir), None)
    tier = PlanTier(plan.value)
    services.governance.plans.set_tenant_plan(tenant, tier, services.clock.now())
    cap = services.settings.governance.max_messages(tier)
    if json_output:
        print(json.dumps({"tenant": tenant, "plan": tier.value, "max_messages_per_user": cap}))
        return
    print(f"tenant {tenant} is on the {tier.value} plan: {cap or 'unlimited'} messages per end user")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="jobs")
