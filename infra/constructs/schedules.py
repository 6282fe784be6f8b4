"""Schedules: EventBridge Scheduler runs the governance jobs (decay, compression, retention…) it is given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as scheduler_targets
from constructs import Construct

from infra.constructs.queues import dead_letter_queue

# A job that has not started within this long is stale: the next run does its work instead.
MAX_EVENT_AGE = cdk.Duration.hours(1)
RETRY_ATTEMPTS = 2


@dataclass(frozen=True)
class ScheduledJob:
    """One job: a function, when it runs (`ScheduleExpression.cron(...)` / `.rate(...)`), and its input."""

    name: str
    function: lambda_.IFunction
    schedule: scheduler.ScheduleExpression
    description: str
    payload: Mapping[str, Any] = field(default_factory=dict)


class Schedules(Construct):
    """A schedule group, one schedule per job, and a dead-letter queue for invocations that could not be made.

    Composed with the jobs the stack passes (the governance jobs); `add_job` takes more.
    """

    def __init__(self, scope: Construct, construct_id: str, *, jobs: Sequence[ScheduledJob] = ()) -> None:
        super().__init__(scope, construct_id)
        self.group = scheduler.ScheduleGroup(self, "Group")
        self.dead_letter_queue = dead_letter_queue(self, "DeadLetterQueue", receives="the schedules")
        # One role for every schedule (rather than CDK's implicit one per target), so the acknowledgement below
        # sits on a construct of this concern.
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("scheduler.amazonaws.com"),
            description="EventBridge Scheduler invokes the Rapport governance jobs",
        )
        self.schedules: dict[str, scheduler.Schedule] = {}
        for job in jobs:
            self.add_job(job)

    def add_job(self, job: ScheduledJob) -> scheduler.Schedule:
        if job.name in self.schedules:
            raise ValueError(f"a job called {job.name!r} is already scheduled")
        target = scheduler_targets.LambdaInvoke(
            job.function,
            input=scheduler.ScheduleTargetInput.from_object({"job": job.name, **job.payload}),
            dead_letter_queue=self.dead_letter_queue,
            retry_attempts=RETRY_ATTEMPTS,
            max_event_age=MAX_EVENT_AGE,
            role=self.role,
        )
        function_resource = job.function.node.default_child
        if isinstance(function_resource, cdk.CfnElement):
            cdk.Validations.of(self.role).acknowledge(
                cdk.Acknowledgment(
                    id=f"AwsSolutions-IAM5[Resource::<{cdk.Stack.of(self).get_logical_id(function_resource)}.Arn>:*]",
                    reason="`:*` under this one function's ARN: its versions and aliases, which the scheduler may "
                    "invoke; the grant names no other function.",
                )
            )
        schedule = scheduler.Schedule(
            self,
            job.name,
            schedule=job.schedule,
            target=target,
            schedule_group=self.group,
            description=job.description,
        )
        self.schedules[job.name] = schedule
        return schedule
