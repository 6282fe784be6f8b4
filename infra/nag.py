"""The cdk-nag packs that gate every synth (`cdk synth` and the infrastructure tests alike)."""

from __future__ import annotations

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from constructs import Construct, IConstruct

# The rule-id prefixes of the packs below: an acknowledgement names its rule as `<pack>-<rule>[[finding]]`.
PACKS = ("AwsSolutions", "Serverless")


def add_nag_packs(app: Construct) -> None:
    """AwsSolutions (security) and Serverless (failure handling, tracing, sizing): a finding of either, error or
    warning, without an acknowledgement fails the synth."""
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))


def acknowledge_no_dead_letter_queue(function: IConstruct, *, invoked_by: str) -> None:
    """For a function nothing invokes asynchronously: Lambda hands only asynchronous invocations to a dead-letter
    queue. `invoked_by` says who waits for the function and where its failures go instead."""
    cdk.Validations.of(function).acknowledge(
        cdk.Acknowledgment(
            id="Serverless-LambdaDLQ",
            reason=f"{invoked_by}. A dead-letter queue receives asynchronous invocations only: it would stay empty.",
        )
    )


def acknowledge_last_queue(queue: IConstruct, *, receives: str) -> None:
    """For a queue that is itself the end of a failure path: its depth alarms (Monitoring) rather than redrives."""
    cdk.Validations.of(queue).acknowledge(
        cdk.Acknowledgment(
            id="Serverless-SQSRedrivePolicy",
            reason=(
                f"This queue is itself the dead-letter queue of {receives}: its letters wait here for a person, "
                "and any message in it raises its depth alarm; a redrive policy would only move them further away."
            ),
        )
    )
