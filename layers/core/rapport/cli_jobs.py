"""`rapport jobs`: run a governance job by hand (as of `--now`) and undo a consolidation, against the configured
store (the local SQLite file, or the AWS table with RAPPORT_STORE=dynamodb)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from rapport.domain.scope import Scope
from rapport.jobs.report import JobName, JobReport
from rapport.settings import PlanTier, Settings

SettingsOf = Callable[[argparse.Namespace], Settings]


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO-8601 time (e.g. 2026-02-01T03:00:00Z)") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _services(settings: Settings, now: datetime | None) -> Any:
    from rapport.clock import FixedClock, SystemClock
    from rapport.composition.services import build_services

    return build_services(settings, clock=FixedClock(now) if now else SystemClock())


def _print_user(tenant: str, user: str, report: JobReport) -> None:
    if report.failed_users:
        print(f"{tenant}/{user}: FAILED (see the log); the other users still ran", file=sys.stderr)
    if not report.changed:
        return
    counts = {k: v for k, v in report.summary().items() if isinstance(v, int) and v and k not in {"users", "examined"}}
    print(f"{tenant}/{user}: " + ", ".join(f"{name} {value}" for name, value in counts.items()))
    for change in report.changes:
        print(f"  {change.action} {change.target} {change.detail}".rstrip())


def _cmd_run(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    from rapport.jobs.fanout import run_in_process

    settings = settings_of(args)
    services = _services(settings, args.now)
    as_of = args.now or services.clock.now()
    total = run_in_process(
        services.store,
        services.governance,
        JobName(args.job),
        as_of,
        tenant_id=args.tenant,
        page_size=settings.governance.fanout_page_size,
        on_user=_print_user,
    )
    print(json.dumps(total.summary()))
    if not total.changed:
        print("nothing to change")
    return 1 if total.failed_users else 0


def _cmd_undo(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    services = _services(settings_of(args), None)
    derivation, restored = services.governance.undo_consolidation(Scope(args.tenant, args.user), args.consolidation_id)
    print(f"consolidation {derivation.id} is {derivation.state.value}; restored {len(restored)} of its originals:")
    for memory_id in derivation.member_ids:
        print(f"  {memory_id}{'' if memory_id in restored else ' (was not archived)'}")
    return 0


def _cmd_set_plan(args: argparse.Namespace, settings_of: SettingsOf) -> int:
    services = _services(settings_of(args), None)
    services.governance.plans.set_tenant_plan(args.tenant, PlanTier(args.plan), services.clock.now())
    cap = services.settings.governance.max_messages(PlanTier(args.plan))
    print(f"tenant {args.tenant} is on the {args.plan} plan: {cap or 'unlimited'} messages per end user")
    return 0


def add_jobs_commands(commands: Any, settings_of: SettingsOf) -> None:
    """Adds `rapport jobs …`; each reads the same settings (RAPPORT_* and --data-dir)."""

    def command(parser: argparse.ArgumentParser, run: Callable[[argparse.Namespace, SettingsOf], int]) -> None:
        parser.add_argument("--data-dir", help="local data directory (default .rapport, or RAPPORT_DATA_DIR)")
        parser.set_defaults(func=lambda args: run(args, settings_of))

    jobs = commands.add_parser("jobs", help="memory governance jobs").add_subparsers(dest="jobs_command", required=True)
    run = jobs.add_parser("run", help="run one job over every end user (or one tenant's) and print what changed")
    run.add_argument("job", choices=[job.value for job in JobName])
    run.add_argument("--tenant", help="only this tenant's end users (default: every tenant)")
    run.add_argument("--now", type=_moment, help="run as of this ISO-8601 time (default: now)")
    command(run, _cmd_run)

    undo = jobs.add_parser("undo-consolidation", help="restore a consolidation's originals, archive the merged one")
    undo.add_argument("consolidation_id", help="the consolidated memory's id")
    undo.add_argument("--tenant", required=True)
    undo.add_argument("--user", required=True)
    command(undo, _cmd_undo)

    plan = jobs.add_parser("set-plan", help="put a tenant on a plan tier (its retention cap)")
    plan.add_argument("plan", choices=[tier.value for tier in PlanTier])
    plan.add_argument("--tenant", required=True)
    command(plan, _cmd_set_plan)
