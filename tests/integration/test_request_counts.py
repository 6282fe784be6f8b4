"""The requests one API call makes (DynamoDB under moto, index, embeddings, LLM): the inputs of the cost model."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cost_model import agentcore_lines, lines
from bench.request_counts import dynamodb_requests, measure_operation_counts

pytestmark = pytest.mark.integration


def test_each_call_makes_the_requests_the_cost_model_prices(tmp_path: Path) -> None:
    counts = measure_operation_counts(tmp_path)

    # remember: one embedding, one memory written to the store and the index
    assert counts.remember["embed:texts"] == 1
    assert counts.remember["index:upsert"] == 1
    assert counts.remember.get("dynamodb:PutItem", 0) >= 1
    # an interaction: its two messages as episodes plus what the pipeline kept, three model calls
    # (extract user, extract relational, filter), and the history written with its episodes, the registration and
    # the followers' items in one transaction
    assert counts.interaction["index:upsert"] >= 2
    assert counts.interaction["llm:structured"] == 3
    assert counts.interaction.get("dynamodb:TransactWriteItems", 0) >= 1
    # a recall: one query embedding, one k-NN and one keyword search; the candidates read in one batch and their
    # edges in another; no writes
    assert counts.recall["embed:texts"] == 1
    # The k-NN and the keyword search of a recall are one request to the index (`_msearch`).
    assert counts.recall["index:hybrid_search"] == 1
    assert "index:knn_search" not in counts.recall and "index:keyword_search" not in counts.recall
    assert counts.recall == counts.recall | {"dynamodb:BatchGetItem": 2} and "dynamodb:Query" not in counts.recall
    assert not any(k in counts.recall for k in ("dynamodb:PutItem", "dynamodb:UpdateItem", "index:upsert"))
    assert counts.prompt_chars_per_interaction > 0
    # enrichment runs off the write path, as the stack deploys it: one Memories Stored event per batch of memories
    # stored (the episodes, then what the pipeline kept; one for a remembered memory), none for a recall
    assert counts.interaction["events:put"] == 2 and counts.remember["events:put"] == 1
    assert "events:put" not in counts.recall

    # DynamoDB requests per call, every operation together (deterministic under moto; the ceilings in
    # docs/data-model.md): edges in adjacency items written in one request, reads batched and read once per step.
    # Each Memories Stored event's enrichment searches with the vectors of its memories, which no listing carries:
    # it reads them from the index, one request per event, and not from the table.
    assert counts.remember["index:vectors"] == counts.remember["events:put"] == 1
    assert counts.interaction["index:vectors"] == counts.interaction["events:put"] == 2
    assert "index:vectors" not in counts.recall
    assert "dynamodb:BatchGetItem" not in counts.remember  # the memory just stored is on the page enrichment lists
    # Each write the API answers adds its audit event, one PutItem (4 + 1 and 15 + 1); a recall is not audited.
    assert dynamodb_requests(counts.remember) <= 5
    assert dynamodb_requests(counts.recall) <= 2
    # The interaction is recorded without an Idempotency-Key: a keyed request adds its idempotency record's reads
    # and writes (docs/data-model.md).
    assert dynamodb_requests(counts.interaction) <= 16
    assert counts.remember["dynamodb:PutItem"] >= 2 and counts.interaction["dynamodb:PutItem"] >= 1
    # Per-person keys: in steady state the person's data key is cached, so no call above reads or makes one (no KMS
    # request, no request beyond the ceilings). The first call for a person the process has not served costs one
    # GetItem of the keys table (a miss), one KMS GenerateDataKey and one conditional PutItem of the new key; a
    # person who has a key and a cold process: one GetItem and one KMS Decrypt instead.
    assert not any(name.startswith("kms:") for c in (counts.remember, counts.interaction, counts.recall) for name in c)
    first = counts.first_remember
    assert first["kms:GenerateDataKey"] == 1 and "kms:Decrypt" not in first
    assert dynamodb_requests(first) == dynamodb_requests(counts.remember) + 2
    # every edge an enrichment run or the pipeline's store step makes goes out in one write
    assert "dynamodb:UpdateItem" not in counts.remember and counts.remember["dynamodb:TransactWriteItems"] == 1

    # The model turns the counts into money: every line is finite and not negative, recalls cost no LLM.
    priced = lines(counts) + agentcore_lines(counts)
    assert all(line.interactions >= 0 and line.recalls >= 0 for line in priced)
    llm = next(line for line in priced if line.item.startswith("OpenAI extraction"))
    assert llm.interactions > 0 and llm.recalls == 0
    signals = next(line for line in priced if line.item.startswith("OpenAI signal detection"))
    assert signals.interactions == pytest.approx(1e6 * (500 * 0.15e-6 + 50 * 0.60e-6)) and signals.recalls == 0
