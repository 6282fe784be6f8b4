"""Fan-out of a job run: tenants page by page, each tenant's users page by page, one unit of work per end user.

In AWS every step is an SQS message: the scheduled producer enqueues only the first page, and each page a worker
reads enqueues its users and the next page. No invocation's work grows with the number of users, and a failing
user is one message retried on its own. Every message carries the run's `as_of`, so a retried or duplicated
message recomputes the same result (the jobs are idempotent for a given `as_of`). Locally, `run_in_process` walks
the same pages in one process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from pydantic import BaseModel

from rapport.domain.scope import Scope
from rapport.errors import RapportError
from rapport.ids import new_id
from rapport.jobs.report import JobName, JobReport

if TYPE_CHECKING:
    # The producer only starts a run: the jobs themselves (and the use cases under them) load in the worker.
    from rapport.jobs.governance import GovernanceJobs
    from rapport.ports.store import MemoryStore
    from rapport.ports.work_queue import WorkQueue

logger = logging.getLogger(__name__)


class WorkKind(StrEnum):
    TENANTS = "tenants"  # a page of tenants to fan out
    USERS = "users"  # a page of one tenant's users to fan out
    USER = "user"  # the job for one end user


class WorkItem(BaseModel):
    kind: WorkKind
    job: JobName
    as_of: datetime
    run_id: str
    tenant_id: str | None = None
    user_id: str | None = None
    cursor: str | None = None


class ScheduledRun(BaseModel):
    """A schedule's constant input: which job; `tenant_id` and `now` let an operator start a narrower run by hand."""

    job: JobName
    tenant_id: str | None = None
    now: datetime | None = None


def start_run(queue: WorkQueue, job: JobName, as_of: datetime, tenant_id: str | None = None) -> WorkItem:
    """What the scheduled producer does: one message that starts the walk (of one tenant, or of all)."""
    first = WorkItem(
        kind=WorkKind.USERS if tenant_id else WorkKind.TENANTS,
        job=job,
        as_of=as_of,
        run_id=new_id(as_of),
        tenant_id=tenant_id,
    )
    queue.send([first.model_dump_json()])
    return first


class FanOut:
    def __init__(self, store: MemoryStore, jobs: GovernanceJobs, queue: WorkQueue, *, page_size: int) -> None:
        self._store = store
        self._jobs = jobs
        self._queue = queue
        self._page_size = page_size

    def handle(self, item: WorkItem) -> JobReport:
        """What a worker does with one message. Pages only enqueue; a user message runs the job."""
        if item.kind is WorkKind.USER:
            if not item.tenant_id or not item.user_id:
                raise ValueError("a user work item names its tenant and user")
            return self._jobs.run(item.job, Scope(item.tenant_id, item.user_id), item.as_of, run_id=item.run_id)
        following: list[WorkItem] = []
        if item.kind is WorkKind.TENANTS:
            page = self._store.list_tenants(limit=self._page_size, cursor=item.cursor)
            following = [
                item.model_copy(update={"kind": WorkKind.USERS, "tenant_id": tenant, "cursor": None})
                for tenant in page.items
            ]
        else:
            if not item.tenant_id:
                raise ValueError("a users work item names its tenant")
            users = self._store.list_users(item.tenant_id, limit=self._page_size, cursor=item.cursor)
            following = [
                item.model_copy(update={"kind": WorkKind.USER, "user_id": user, "cursor": None}) for user in users.items
            ]
            page = users
        if page.next_cursor is not None:
            following.append(item.model_copy(update={"cursor": page.next_cursor}))
        # Enqueued before the message is acknowledged: a failure redelivers the page, and duplicates are harmless.
        self._queue.send([w.model_dump_json() for w in following])
        return JobReport(job=item.job, as_of=item.as_of)


def pages(fetch: Callable[[str | None], tuple[list[str], str | None]]) -> Iterator[str]:
    cursor: str | None = None
    while True:
        items, cursor = fetch(cursor)
        yield from items
        if cursor is None:
            return


def run_in_process(
    store: MemoryStore,
    jobs: GovernanceJobs,
    job: JobName,
    as_of: datetime,
    *,
    tenant_id: str | None = None,
    page_size: int = 100,
    on_user: Callable[[str, str, JobReport], None] | None = None,
) -> JobReport:
    """The same walk in one process (the CLI, the local server): a failing user is reported, the rest still run."""

    def tenants(cursor: str | None) -> tuple[list[str], str | None]:
        page = store.list_tenants(limit=page_size, cursor=cursor)
        return page.items, page.next_cursor

    total = JobReport(job=job, as_of=as_of)
    run_id = new_id(as_of)
    for tenant in [tenant_id] if tenant_id else pages(tenants):

        def users(cursor: str | None, tenant: str = tenant) -> tuple[list[str], str | None]:
            page = store.list_users(tenant, limit=page_size, cursor=cursor)
            return page.items, page.next_cursor

        for user in pages(users):
            try:
                report = jobs.run(job, Scope(tenant, user), as_of, run_id=run_id)
            except RapportError as exc:
                logger.warning("governance job %s failed for %s/%s: %s", job.value, tenant, user, exc)
                report = JobReport(job=job, as_of=as_of, failed_users=[f"{tenant}/{user}"])
            if on_user is not None:
                on_user(tenant, user, report)
            # The total keeps counts only: each user's changes were handed to `on_user`, and carrying every one
            # along would make a large run's report grow without bound.
            total = total.merge(report.model_copy(update={"changes": []}))
    return total
