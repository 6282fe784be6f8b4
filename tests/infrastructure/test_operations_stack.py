"""Operations in the template: every alarm points at its runbook, the alarms the review asked for, the table's
backup plan, and the OpenAI secret created without a value."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Template

from infra.constructs.monitoring import RUNBOOKS
from tests.infrastructure.conftest import (
    PROJECT_ROOT,
    Synthesized,
    function_by_service,
    memory_table,
    only,
    resources,
    synthesize,
)

pytestmark = pytest.mark.infrastructure

OPERATIONS_DOC = PROJECT_ROOT / "docs" / "operations.md"


def anchors_of(markdown: Path) -> set[str]:
    """GitHub's heading anchors: lowercase, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#{1,6} (.+)$", markdown.read_text(), flags=re.MULTILINE)
    return {re.sub(r"[^a-z0-9 -]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def alarms(template: Template) -> dict[str, dict[str, Any]]:
    return {logical_id: a["Properties"] for logical_id, a in resources(template, "AWS::CloudWatch::Alarm").items()}


def alarm_named(template: Template, construct_id: str) -> dict[str, Any]:
    found = [
        props for logical_id, props in alarms(template).items() if logical_id.startswith(f"Monitoring{construct_id}")
    ]
    assert len(found) == 1, (construct_id, sorted(alarms(template)))
    return found[0]


def metric_names(alarm: dict[str, Any]) -> set[str]:
    """The metric an alarm watches, or every metric of its math expression."""
    if "MetricName" in alarm:
        return {alarm["MetricName"]}
    return {m["MetricStat"]["Metric"]["MetricName"] for m in alarm.get("Metrics", []) if "MetricStat" in m}


@pytest.mark.parametrize("which", ["default", "variant"])
def test_every_alarm_links_a_runbook_section_that_exists(which: str, request: pytest.FixtureRequest) -> None:
    synthesized: Synthesized = request.getfixturevalue(which)
    documented = anchors_of(OPERATIONS_DOC)
    # Every runbook the monitoring construct can name has its section...
    assert set(RUNBOOKS) <= documented, set(RUNBOOKS) - documented
    # ...and every alarm of the stack ends its description with one of them
    for logical_id, alarm in alarms(synthesized.template).items():
        match = re.search(r"Runbook: docs/operations\.md#([a-z0-9-]+)$", alarm["AlarmDescription"])
        assert match, (logical_id, alarm["AlarmDescription"])
        assert match.group(1) in documented, (logical_id, match.group(1))


def test_the_runbook_url_comes_from_context(tmp_path: Path) -> None:
    url = "https://git.example/rapport/blob/main/docs/operations.md"
    template = synthesize(tmp_path, profile="dev", runbookUrl=url).template
    assert f"Runbook: {url}#stream-iterator-age" in alarm_named(template, "IndexerIteratorAge")["AlarmDescription"]


def test_the_indexer_alarms_an_hour_behind_the_stream_long_before_records_expire(template: Template) -> None:
    alarm = alarm_named(template, "IndexerIteratorAge")
    indexer_id, _ = function_by_service(template, "rapport-indexer")
    assert alarm["MetricName"] == "IteratorAge" and alarm["Statistic"] == "Maximum"
    assert {"Name": "FunctionName", "Value": {"Ref": indexer_id}} in alarm["Dimensions"]
    assert alarm["Threshold"] == 3_600_000  # ms: a day's stream retention leaves 23 hours to act


def test_the_domain_alarms_on_k_nn_errors_and_blocked_writes(template: Template) -> None:
    domain_name = only(template, "AWS::OpenSearchService::Domain")[0]
    knn = alarm_named(template, "SearchKnnErrors")
    assert metric_names(knn) == {"KNNGraphQueryErrors", "KNNGraphIndexErrors"}
    # A period where one of the two has no data still counts the other
    (expression,) = [m["Expression"] for m in knn["Metrics"] if "Expression" in m]
    assert expression.count("FILL(") == 2
    blocked = alarm_named(template, "SearchWritesBlocked")
    assert blocked["MetricName"] == "ClusterIndexWritesBlocked" and blocked["Threshold"] == 1
    assert domain_name in json.dumps(blocked["Dimensions"])


def test_the_pipeline_alarms_on_model_fallbacks_and_parked_starts(template: Template) -> None:
    fallbacks = alarm_named(template, "ModelFallbacks")
    services = {
        d["Value"] for m in fallbacks["Metrics"] if "MetricStat" in m for d in m["MetricStat"]["Metric"]["Dimensions"]
    }
    assert services == {"rapport-pipeline-extract-user", "rapport-pipeline-extract-relational"}
    assert metric_names(fallbacks) == {"ModelFallbacks"}
    parked = alarm_named(template, "PipelineStartFailures")
    assert parked["MetricName"] == "PipelineStartsParked" and parked["Namespace"] == "Rapport"
    # The dimension is the one the starter's handler names its metrics with, not the function's service name
    handler = (PROJECT_ROOT / "functions" / "pipeline_starter" / "handler.py").read_text()
    (service,) = re.findall(r'^SERVICE = "([^"]+)"', handler, flags=re.MULTILINE)
    assert 'Metrics(namespace="Rapport", service=SERVICE)' in handler
    assert parked["Dimensions"] == [{"Name": "service", "Value": service}]


def test_the_table_is_backed_up_daily_and_monthly_into_its_own_encrypted_vault(template: Template) -> None:
    table_id, _ = memory_table(template)
    vault_id, vault = only(template, "AWS::Backup::BackupVault")
    assert "EncryptionKeyArn" in vault["Properties"]
    assert vault["DeletionPolicy"] == "Retain"
    _, plan = only(template, "AWS::Backup::BackupPlan")
    rules = {rule["RuleName"]: rule for rule in plan["Properties"]["BackupPlan"]["BackupPlanRule"]}
    assert set(rules) == {"Daily", "Monthly"}
    assert rules["Daily"]["Lifecycle"]["DeleteAfterDays"] == 35
    assert rules["Monthly"]["Lifecycle"]["DeleteAfterDays"] == 365
    assert all(rule["TargetBackupVault"] == {"Fn::GetAtt": [vault_id, "BackupVaultName"]} for rule in rules.values())
    _, selection = only(template, "AWS::Backup::BackupSelection")
    assert selection["Properties"]["BackupSelection"]["Resources"] == [{"Fn::GetAtt": [table_id, "Arn"]}]


def test_a_dev_stack_backup_vault_goes_with_the_stack(variant: Synthesized) -> None:
    _, vault = only(variant.template, "AWS::Backup::BackupVault")
    assert vault["DeletionPolicy"] == "Delete"


def test_the_openai_secret_is_created_empty_for_the_operator_to_fill(template: Template) -> None:
    _, secret = only(template, "AWS::SecretsManager::Secret")
    # No generated value: a random string would be sent to OpenAI as if it were a key
    assert "GenerateSecretString" not in secret["Properties"]
    assert "SecretString" not in secret["Properties"]


def test_both_readers_of_the_table_stream_alarm_on_their_lag(template: Template) -> None:
    watched = {
        json.dumps(d["Value"])
        for alarm in alarms(template).values()
        if alarm.get("MetricName") == "IteratorAge"
        for d in alarm["Dimensions"]
    }
    readers = {
        json.dumps(mapping["Properties"]["FunctionName"])
        for mapping in resources(template, "AWS::Lambda::EventSourceMapping").values()
        if "dynamodb" in json.dumps(mapping["Properties"].get("EventSourceArn", "")).lower()
        or "StreamArn" in json.dumps(mapping["Properties"].get("EventSourceArn", ""))
    }
    assert len(readers) == 2 and readers <= watched, (readers, watched)
