"""The jobs' wiring in Lambda, built once per cold start: the work queue (all the producer needs) and the fan-out
over this process's services (the workers)."""

from __future__ import annotations

import functools

from rapport.adapters.aws.sqs import SqsWorkQueue
from rapport.composition.services import services_from_environment
from rapport.jobs.fanout import FanOut
from rapport.settings import Settings


def _queue(settings: Settings) -> SqsWorkQueue:
    if not settings.governance.job_queue_url:
        raise ValueError("the jobs need RAPPORT_GOVERNANCE_JOB_QUEUE_URL: the SQS queue their per-user work goes to")
    return SqsWorkQueue(settings.governance.job_queue_url, region_name=settings.aws_region)


@functools.cache
def work_queue_from_environment() -> SqsWorkQueue:
    """The producer's only dependency: no store, index or model clients."""
    return _queue(Settings())


@functools.cache
def fan_out_from_environment() -> FanOut:
    services = services_from_environment()
    return FanOut(
        services.store,
        services.governance,
        _queue(services.settings),
        page_size=services.settings.governance.fanout_page_size,
    )
