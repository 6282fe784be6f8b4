"""Cost of one million interactions and one million recalls on AWS, from the requests the code really makes,
beside Amazon Bedrock AgentCore Memory's list prices for the same work. `python -m bench.cost_model`.

Prices are assumptions written down, not fetched (no network here): us-east-1 list prices as known in 2025.
Check them before quoting a figure outside the team."""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.request_counts import OperationCounts, dynamodb_requests, measure_operation_counts
from rapport.evaluation.governance_writes import GovernanceWrites, Writes, measure_governance_writes

# DynamoDB requests per call before edges were kept in adjacency items and writes grouped (docs/data-model.md):
# the same measurement, for the comparison in docs/BENCHMARKS.md.
REQUESTS_BEFORE = {"interaction": 104, "recall": 20, "memory": 15}

# The governance jobs' month before decay was read instead of written daily and before the embedding left the memory
# item (docs/governance.md): the same simulation (`measure_governance_writes`, 30 interactions, 30 days) run on the
# code as it was, measured by the same meter. Per interaction-month: DynamoDB write requests and write units.
GOVERNANCE_BEFORE = {
    "write_path": {"requests": 11.0, "units": 243.93},
    "decay": {"requests": 20.3, "units": 175.57},
    "compress": {"requests": 2.73, "units": 6.77},
    "consolidate": {"requests": 0.27, "units": 0.27},
    "retention": {"requests": 4.2, "units": 21.83},
}

PRICES_AS_OF = "2025 (us-east-1 list prices, from memory of the AWS and OpenAI pricing pages; not fetched)"
PRICE = {
    "lambda_arm_gb_second": 0.0000133334,
    "lambda_request": 0.20 / 1e6,
    "apigw_rest_request": 3.50 / 1e6,  # first 333 million a month
    "sfn_express_request": 1.00 / 1e6,
    "sfn_express_gb_second": 0.00001667,  # billed in 64 MB steps
    "eventbridge_event": 1.00 / 1e6,  # custom events
    "ddb_write_unit": 0.625 / 1e6,  # on-demand, after the November 2024 price cut
    "ddb_read_unit": 0.125 / 1e6,
    "opensearch_instance_hour": 0.167,  # r6g.large.search
    "opensearch_gp3_gb_month": 0.122,
    "openai_embedding_token": 0.02 / 1e6,  # text-embedding-3-small
    "openai_input_token": 0.15 / 1e6,  # gpt-4o-mini
    "openai_output_token": 0.60 / 1e6,
    # Amazon Bedrock AgentCore Memory
    "agentcore_event": 0.25 / 1e3,  # short-term memory: per new event
    "agentcore_record_month": 0.75 / 1e3,  # long-term memory, built-in strategies: per record stored per month
    "agentcore_retrieval": 0.50 / 1e3,  # long-term memory retrieval
}


@dataclass(frozen=True)
class Assumptions:
    """What the request counts cannot tell: durations, sizes, tokens. Each is a stated guess, not a measurement."""

    lambda_memory_gb: float = 1.0
    api_ms: float = 250.0  # one API Lambda invocation (DynamoDB round trips + one embedding call)
    pipeline_ms: tuple[float, ...] = (200.0, 2_500.0, 2_500.0, 1_500.0, 800.0)  # record, extract ×2, filter, store
    sfn_seconds: float = 6.0  # the Express execution's wall time (extractions run in parallel)
    events_per_interaction: int = 1  # the pipeline's start event on the bus
    enrichment_ms: float = 300.0  # one enrichment invocation (a k-NN query, a few keyword queries, edge writes)
    memory_item_kb: float = 7.0  # 1536 float32 dimensions (6 KB) + content and attributes
    small_item_kb: float = 1.0  # edges, state, profile, runs
    output_tokens_per_llm_call: int = 200
    # With a real model, signal detection (emotions, intent, mood) is one more call per interaction; the count runs
    # with the rule-based stand-in, whose signals come from VADER, so this call is assumed, not measured.
    signal_calls_per_interaction: int = 1
    signal_prompt_tokens: int = 500
    signal_output_tokens: int = 50
    chars_per_token: float = 4.0
    opensearch_instances: int = 2
    opensearch_gb: int = 2 * 20
    month_hours: float = 730.0


@dataclass(frozen=True)
class Line:
    item: str
    interactions: float  # USD per million interactions
    recalls: float  # USD per million recalls
    basis: str


def _units(kb: float, per: float) -> int:
    return max(1, math.ceil(kb / per))


def _dynamodb(counts: dict[str, int], a: Assumptions) -> tuple[float, float]:
    """(write units, read units) for one call: memory writes (one per index upsert) are memory-sized, other writes
    small; a batch read returns memory items (strongly consistent), a GetItem or Query one small item or page."""
    memory_writes = counts.get("index:upsert", 0)
    writes = counts.get("dynamodb:PutItem", 0) + counts.get("dynamodb:UpdateItem", 0)
    writes += counts.get("dynamodb:BatchWriteItem.items", 0) + counts.get("dynamodb:DeleteItem", 0)
    # A transactional write costs two write units per item (the history with its episodes, grouped item writes).
    writes += 2 * counts.get("dynamodb:TransactWriteItems.items", 0)
    small_writes = max(writes - memory_writes, 0)
    wru = memory_writes * _units(a.memory_item_kb, 1.0) + small_writes * _units(a.small_item_kb, 1.0)
    rru = counts.get("dynamodb:BatchGetItem.items", 0) * _units(a.memory_item_kb, 4.0)
    rru += (counts.get("dynamodb:GetItem", 0) + counts.get("dynamodb:Query", 0)) * _units(a.small_item_kb, 4.0)
    return wru, rru


def lines(
    counts: OperationCounts, a: Assumptions = Assumptions(), governance: GovernanceWrites | None = None
) -> list[Line]:
    m = 1e6
    p = PRICE
    gb_s = p["lambda_arm_gb_second"] * a.lambda_memory_gb
    i_wru, i_rru = _dynamodb(counts.interaction, a)
    r_wru, r_rru = _dynamodb(counts.recall, a)
    llm_calls = counts.interaction.get("llm:structured", 0)
    input_tokens = counts.prompt_chars_per_interaction / a.chars_per_token
    embed_tokens = counts.embedded_chars_per_interaction / a.chars_per_token
    recall_embed_tokens = 40 / a.chars_per_token  # a short query
    os_month = a.opensearch_instances * p["opensearch_instance_hour"] * a.month_hours
    os_month += a.opensearch_gb * p["opensearch_gp3_gb_month"]
    index_requests = sum(v for k, v in counts.interaction.items() if k.startswith("index:"))
    recall_index = sum(v for k, v in counts.recall.items() if k.startswith("index:"))
    pipeline_s = sum(a.pipeline_ms) / 1e3
    # Memories Stored events (measured): each is one EventBridge entry and one enrichment function invocation
    enrich_events = counts.interaction.get("events:put", 0)
    enrich_lambda = enrich_events * (p["lambda_request"] + a.enrichment_ms / 1e3 * gb_s)
    steps = "/".join(f"{x:.0f}" for x in a.pipeline_ms)
    return [
        Line("API Gateway (REST)", m * p["apigw_rest_request"], m * p["apigw_rest_request"], "one request each"),
        Line(
            "Lambda arm64 (API + pipeline steps + enrichment)",
            m * ((1 + len(a.pipeline_ms)) * p["lambda_request"] + (a.api_ms / 1e3 + pipeline_s) * gb_s + enrich_lambda),
            m * (p["lambda_request"] + a.api_ms / 1e3 * gb_s),
            f"{a.lambda_memory_gb:g} GB; API {a.api_ms:.0f} ms; pipeline steps {steps} ms; "
            f"{enrich_events} enrichment runs of {a.enrichment_ms:.0f} ms",
        ),
        Line(
            "Step Functions Express",
            m * (p["sfn_express_request"] + a.sfn_seconds * 0.0625 * p["sfn_express_gb_second"]),
            0.0,
            f"one execution per interaction, {a.sfn_seconds:.0f} s at 64 MB",
        ),
        Line(
            "EventBridge",
            m * (a.events_per_interaction + enrich_events) * p["eventbridge_event"],
            0.0,
            f"{a.events_per_interaction} pipeline event + {enrich_events} Memories Stored (measured) per interaction",
        ),
        Line(
            "DynamoDB on-demand",
            m * (i_wru * p["ddb_write_unit"] + i_rru * p["ddb_read_unit"]),
            m * (r_wru * p["ddb_write_unit"] + r_rru * p["ddb_read_unit"]),
            f"measured requests → {i_wru:.0f} WRU + {i_rru:.0f} RRU per interaction, {r_rru:.0f} RRU per recall",
        ),
        Line(
            "OpenAI embeddings (text-embedding-3-small)",
            m * embed_tokens * p["openai_embedding_token"],
            m * recall_embed_tokens * p["openai_embedding_token"],
            f"{counts.interaction.get('embed:texts', 0)} texts (~{embed_tokens:.0f} tokens) per interaction",
        ),
        Line(
            "OpenAI extraction + filter (gpt-4o-mini)",
            m
            * (
                input_tokens * p["openai_input_token"]
                + llm_calls * a.output_tokens_per_llm_call * p["openai_output_token"]
            ),
            0.0,
            f"{llm_calls} calls, ~{input_tokens:.0f} prompt tokens, {a.output_tokens_per_llm_call} out each",
        ),
        Line(
            "OpenAI signal detection (gpt-4o-mini)",
            m
            * a.signal_calls_per_interaction
            * (a.signal_prompt_tokens * p["openai_input_token"] + a.signal_output_tokens * p["openai_output_token"]),
            0.0,
            f"{a.signal_calls_per_interaction} call per interaction, ~{a.signal_prompt_tokens} prompt tokens, "
            f"{a.signal_output_tokens} out (assumed: the count runs with VADER in its place)",
        ),
        Line(
            "OpenSearch (2 × r6g.large, fixed per month)",
            os_month,
            0.0,
            f"${os_month:,.0f} a month whatever the volume; {index_requests} requests per interaction, "
            f"{recall_index} per recall",
        ),
        *([governance_line(governance)] if governance is not None else []),
    ]


def governance_line(governance: GovernanceWrites) -> Line:
    """The scheduled jobs' writes over a month, per interaction whose memories they govern (measured)."""
    per = governance.jobs_total.per(governance.interactions)
    return Line(
        "DynamoDB, governance jobs (a month)",
        1e6 * per["units"] * PRICE["ddb_write_unit"],
        0.0,
        f"measured: {per['requests']:.1f} writes, {per['units']:.1f} WRU per interaction over {governance.days} days "
        "of the four jobs (reads not priced: the jobs read each user's memories once a run)",
    )


def governance_markdown(governance: GovernanceWrites) -> str:
    """The jobs' month beside the write path's, per interaction, before and after (docs/governance.md)."""
    n = governance.interactions
    rows: list[tuple[str, Writes | None, dict[str, float]]] = [
        (
            "write path: recording the interaction (pipeline, enrichment)",
            governance.write_path,
            GOVERNANCE_BEFORE["write_path"],
        ),
        *(
            (f"job `{job}`, {governance.days} days", writes, GOVERNANCE_BEFORE[job])
            for job, writes in governance.jobs.items()
        ),
    ]
    out = [
        f"A synthetic end user records {n} interactions (their {governance.memories} memories: episodes and what the "
        f"rule-based pipeline extracts, 1,536-dimension vectors), then the four jobs run on their schedule for "
        f"{governance.days} days with a fixed clock (`rapport.evaluation.governance_writes`, DynamoDB under moto). "
        "Every write is measured: write units are DynamoDB's billing rules applied to each item as it is before and "
        "after the write, GSIs included (`rapport.evaluation.write_units`). Before: the same simulation on the code "
        "whose decay job rewrote every memory (vector included) daily.",
        "",
        "| per interaction | writes before | writes | WRU before | WRU | $ per 1M interactions |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, writes, before in rows:
        assert writes is not None
        per = writes.per(n)
        out.append(
            f"| {label} | {before['requests']:.1f} | {per['requests']:.1f} | {before['units']:.1f} | "
            f"{per['units']:.1f} | ${1e6 * per['units'] * PRICE['ddb_write_unit']:,.2f} |"
        )
    total = governance.jobs_total.per(n)
    before_total = {k: sum(GOVERNANCE_BEFORE[j][k] for j in governance.jobs) for k in ("requests", "units")}
    path = governance.write_path.per(n)
    out += [
        f"| **governance, all jobs** | **{before_total['requests']:.1f}** | **{total['requests']:.1f}** | "
        f"**{before_total['units']:.1f}** | **{total['units']:.1f}** | "
        f"**${1e6 * total['units'] * PRICE['ddb_write_unit']:,.2f}** |",
        "",
        "Where the write path's units go, by item kind: "
        + ", ".join(
            f"`{kind}` {units / n:.1f}"
            for kind, units in sorted(governance.write_path.by_kind.items(), key=lambda kv: -kv[1])[:4]
        )
        + " WRU per interaction (a write is billed by the whole item, so an item that grows costs more each time).",
        "",
        f"Governance writes {total['units'] / path['units']:.2f}× the write path's units "
        + (
            f"(before: {before_total['units'] / GOVERNANCE_BEFORE['write_path']['units']:.2f}×)."
            if GOVERNANCE_BEFORE["write_path"]["units"]
            else "."
        ),
    ]
    return "\n".join(out)


def agentcore_lines(counts: OperationCounts) -> list[Line]:
    """The same work on AgentCore Memory: one event per interaction, its extracted records stored for a month,
    one long-term retrieval per recall."""
    episodes = 2  # the two messages of each measured interaction
    records = max(counts.interaction.get("index:upsert", 0) - episodes, 0)
    m = 1e6
    return [
        Line(
            "AgentCore short-term memory (events)", m * PRICE["agentcore_event"], 0.0, "one CreateEvent per interaction"
        ),
        Line(
            "AgentCore long-term memory (records, one month)",
            m * records * PRICE["agentcore_record_month"],
            0.0,
            f"{records} extracted records per interaction (as Rapport's pipeline extracts), built-in strategy",
        ),
        Line("AgentCore retrieval", 0.0, m * PRICE["agentcore_retrieval"], "one RetrieveMemoryRecords per recall"),
    ]


def markdown(counts: OperationCounts, governance: GovernanceWrites | None = None) -> str:
    ours = lines(counts, governance=governance)
    theirs = agentcore_lines(counts)
    out = [
        f"Prices: {PRICES_AS_OF}. Request counts: measured (tests/integration/test_request_counts.py).",
        "",
        "| item | per 1M interactions | per 1M recalls | basis |",
        "|---|---:|---:|---|",
    ]
    for line in ours:
        out.append(f"| {line.item} | ${line.interactions:,.2f} | ${line.recalls:,.2f} | {line.basis} |")
    total_i = sum(x.interactions for x in ours)
    total_r = sum(x.recalls for x in ours)
    out.append(f"| **Rapport on AWS, total** | **${total_i:,.2f}** | **${total_r:,.2f}** | OpenSearch included once |")
    for line in theirs:
        out.append(f"| {line.item} | ${line.interactions:,.2f} | ${line.recalls:,.2f} | {line.basis} |")
    total_ai = sum(x.interactions for x in theirs)
    total_ar = sum(x.recalls for x in theirs)
    out.append(f"| **AgentCore Memory, total** | **${total_ai:,.2f}** | **${total_ar:,.2f}** | list prices |")
    out += [
        "",
        "Measured requests per call (steady state; DynamoDB under moto, the embedded index standing in for "
        "OpenSearch, the rule-based model standing in for OpenAI; a write's figure includes its audit event, one "
        "PutItem):",
        "",
        "| call | DynamoDB requests (before) | requests |",
        "|---|---:|---|",
        f"| POST /memories | {dynamodb_requests(counts.remember)} ({REQUESTS_BEFORE['memory']}) | "
        f"{_fmt(counts.remember)} |",
        f"| POST /interactions (with the pipeline) | {dynamodb_requests(counts.interaction)} "
        f"({REQUESTS_BEFORE['interaction']}) | {_fmt(counts.interaction)} |",
        f"| recall (limit 5) | {dynamodb_requests(counts.recall)} ({REQUESTS_BEFORE['recall']}) | "
        f"{_fmt(counts.recall)} |",
    ]
    if governance is not None:
        out += ["", "### Governance jobs beside the write path", "", governance_markdown(governance)]
    return "\n".join(out)


def _fmt(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        counts = measure_operation_counts(Path(tmp))
        print(markdown(counts, measure_governance_writes(Path(tmp) / "governance")))


if __name__ == "__main__":
    main()
