"""`make bench`: measures on this machine and writes docs/BENCHMARKS.md (with the latest LoCoMo results beside)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import cost_model, measure, scale, vector_compression
from bench.locomo_ablation import markdown as ablation_markdown
from bench.locomo_expansion import section as expansion_section
from bench.request_counts import OperationCounts, measure_operation_counts
from bench.server_load import LoadRow, server_load
from bench.server_load import markdown as load_markdown
from rapport.adapters.local.hashing_embedder import HashingEmbedder
from rapport.adapters.local.minilm import MiniLmEmbedder
from rapport.evaluation.governance_writes import GovernanceWrites, measure_governance_writes
from rapport.evaluation.report import markdown_table
from rapport.evaluation.splits import TUNING_IDS

RESULTS = measure.ROOT / "bench" / "results"
MEASUREMENTS = RESULTS / "bench-measurements.json"
GOAL_R5, GOAL_R10 = 0.70, 0.80
PATTERNS_ALONE, SEMANTIC = "MiniLM, patterns alone", "MiniLM + semantic layer"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _machine() -> str:
    cpu = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if "model name" in line]
        cpu = names[0] if names else cpu
    return f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, {platform.system()}"


def _locomo_section() -> list[str]:
    out = ["## Retrieval: LoCoMo (development split: a tuning set and a check set)", ""]
    main = RESULTS / "locomo.json"
    if not main.exists():
        return [*out, "No result yet: run `make eval` (writes bench/results/locomo.json), then `make bench`.", ""]
    result: dict[str, Any] = json.loads(main.read_text())
    stamp = _measured_on(main, result)
    out += [
        "How it is measured (`rapport eval locomo --data PATH`, code in `rapport/evaluation/`):",
        "",
        "- Each conversation is a fresh end user of the local product (SQLite, embedded index, MiniLM, the rule-based "
        "extraction pipeline; no LLM anywhere). Each session is one `POST /interactions`-equivalent call "
        "(`InteractionService.record`) at the session's date (`occurred_at`, and the clock set to it), one message "
        "per turn with the speaker's name as `name`. Both speakers are people, so both are sent as role `user` (the "
        "product gives assistant messages lower importance, which would bias against one speaker). A shared "
        "image's BLIP caption is appended as `[shares a photo: …]`, as a client would send alt text; the dataset's "
        "`query` and `img_url` fields are not used, nor its observations or summaries.",
        "- Questions are asked the day after the conversation's last session through `Recall.recall` "
        "(limit 10, default settings). A hit counts for the turns behind it: an episode for its own turn (its id is "
        "mapped to the dia_id at ingestion), an extracted memory for the turn its provenance names. Retention caps "
        "are lifted for these users (a conversation holds 400–700 messages, past the community plan's 500).",
        "- recall@k = |evidence ∩ turns behind the top k| / |evidence|, averaged; all@10 = every evidence turn in "
        "the top 10; MRR = 1/rank of the first hit holding an evidence turn, 0 past 10. Overall = categories 1–4; "
        "category 5 (adversarial) is reported on its own.",
        '- Evidence repairs: `"D8:6; D9:17"` is split into two ids; `"D:11:26"` and `"D30:05"` are read '
        "as `D11:26` and `D30:5`; ids that name no turn of the conversation are dropped; a question left with no "
        "evidence (two here) is not scored.",
        '- Baselines run in the same process over the same turns, rendered `[date] Speaker said, "text"` with the '
        "caption: BM25 (Okapi, k1 1.5, b 0.75, lower-cased words), MiniLM cosine, and their reciprocal-rank fusion "
        "(k 60). The issue's reference for that hybrid without captions is R@5 0.538 / R@10 0.630.",
        f"- Two sets, fixed by sample id (`rapport.evaluation.splits`): the tuning set "
        f"({', '.join(result.get('tuning_ids', TUNING_IDS))}), where rules and weights may be chosen, and the check "
        f"set (every other conversation{_check_ids(result)}), which only confirms them. Every table reports "
        "both and all conversations together. A file of conversations held back, with other sample ids, is all "
        "check set; `--tuning-ids` names another tuning set.",
        "- Speed, not a shortcut: MiniLM loads once per run, each conversation's questions are embedded in one "
        "batch, and every vector the model gives is kept in a file keyed by the model's identity (name, "
        "dimensions, the versions of its weights and of torch) and the text's SHA-256 "
        "(`~/.cache/rapport/embeddings.sqlite3`, `--no-embedding-cache` to keep none). The product still runs "
        "its whole path (pipeline, store, index, enrichment, recall) and makes every embedding call; the cache "
        "answers those calls with the vectors the model returned the first time.",
        "",
        f"`make eval` ({stamp}, {result.get('embedder', 'MiniLM')}; {_seconds(result)}):",
        "",
        markdown_table(result),
        "",
        f"Evidence repairs: {json.dumps(result['dataset']['evidence_defects'])}.",
        "",
    ]
    overall = result["overall"]
    met = overall["recall@5"] >= GOAL_R5 and overall["recall@10"] >= GOAL_R10
    out += [
        f"The recall goal (categories 1–4, local stack, no LLM at query time): R@5 ≥ {GOAL_R5} and R@10 ≥ {GOAL_R10}"
        f" — {'met' if met else 'not met'} with the default settings (R@5 {overall['recall@5']:.3f}, R@10 "
        f"{overall['recall@10']:.3f}).",
        "",
    ]
    ablation = RESULTS / "locomo-ablation.json"
    if ablation.exists():
        rows = json.loads(ablation.read_text())
        out += [
            "### What each recall change bought",
            "",
            "`make eval-ablation`: the same questions with the changes added one at a time, episodes only (no "
            "extraction pipeline, so each row runs in a minute or two); categories as R@5 / R@10, for the tuning "
            "set, the check set and all conversations.",
            "",
            ablation_markdown(rows),
            "",
            "Reading it: each issue-6 rule adds on its own (stemming, third-person rendering, answers, sittings, "
            "speakers, keyword scores read past the pool, replies read after what they answer, neighbours); none is "
            "fitted to a question, and the weights are round numbers chosen on this split. The last two rows are not "
            "changes of this issue: they show what other score components cost on this data. With enrichment's "
            "automatic links ignored by the relation score, the relation weight no longer matters here; "
            f"recency and strength favour the latest sessions, which a question about the whole history does not, "
            f"for {_priors_cost(rows)}. Both are settings (`RAPPORT_WEIGHT_RECENCY`, `RAPPORT_WEIGHT_STRENGTH`), left "
            "at the foundation's defaults (the brief names the components, not their weights): for an assistant, "
            "recent is usually right.",
            "",
        ]
    # The same evaluation with and without graph expansion (bench/locomo_expansion.py)
    expansion = [RESULTS / f"locomo-expansion-{side}.json" for side in ("off", "on")]
    if all(path.exists() for path in expansion):
        off, on = (json.loads(path.read_text()) for path in expansion)
        out += [*expansion_section(off, on, stamp=_measured_on(expansion[1], on)), ""]
    return out


def _measured_on(path: Path, result: dict[str, Any]) -> str:
    """The day a result was measured, as its run wrote it; the file's modification time only for a result written
    before runs wrote their day (a clone's files all carry the day of the checkout)."""
    found = result.get("measured_on")
    return str(found) if found else datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%d")


def _check_ids(result: dict[str, Any]) -> str:
    ids = result.get("sets", {}).get("check", {}).get("conversations", [])
    return f": {', '.join(ids)}" if ids else ""


def _seconds(result: dict[str, Any]) -> str:
    """How long the run took and where, and how much of the embedding the cache spared."""
    seconds = result.get("seconds", {})
    parts = [f"{name} {seconds[name]} s" for name in ("total", "ingest", "recall", "baselines") if name in seconds]
    cache = result.get("embedding_cache")
    if cache:
        parts.append(f"{cache['texts_embedded']} texts embedded, {cache['texts_from_cache']} from the cache")
    return ", ".join(parts) or "no timings"


def _scale_section() -> list[str]:
    """Rapport beside Mem0 (bench/scale.py), from the latest `make bench-scale`."""
    found = json.loads(scale.RESULT.read_text()) if scale.RESULT.exists() else None
    lines = scale.markdown(found)
    if found is not None:
        stamp = _measured_on(scale.RESULT, found)
        lines.insert(2, f"`make bench-scale` ({stamp}, {found['elapsed_s'] / 60:.0f} minutes):")
        lines.insert(3, "")
    return lines


def _priors_cost(ablation: dict[str, Any]) -> str:
    """What the recency and strength priors cost on LoCoMo: the defaults row against the row without them."""
    rows = ablation["rows"]
    defaults = next(r for r in rows if r["label"].endswith("defaults"))["overall"]
    without = rows[-1]["overall"]
    return (
        f"{without['recall@5'] - defaults['recall@5']:.3f} R@5 and "
        f"{without['recall@10'] - defaults['recall@10']:.3f} R@10"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=measure.ROOT / "docs" / "BENCHMARKS.md")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-minilm", action="store_true", help="skip the MiniLM rows (no model on this machine)")
    parser.add_argument(
        "--from-results",
        action="store_true",
        help=f"measure nothing: rewrite the page from {MEASUREMENTS.name} (after a new `make eval`, say)",
    )
    parser.add_argument(
        "--only",
        default="",
        help="measure these sections alone (comma-separated: imports, layer, compression) and keep the rest of "
        f"{MEASUREMENTS.name} as it was",
    )
    parser.add_argument(
        "--locomo",
        type=Path,
        default=None,
        help="the LoCoMo JSON file (locomo-dev.json) the compression section embeds; without it the section is left",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if args.from_results:
        data = json.loads(MEASUREMENTS.read_text())
    elif args.only:
        data = {**json.loads(MEASUREMENTS.read_text()), **_measure_only(set(args.only.split(",")), args.locomo)}
        MEASUREMENTS.write_text(json.dumps(data, indent=1) + "\n")
    else:
        data = _measure(args)
        MEASUREMENTS.parent.mkdir(parents=True, exist_ok=True)
        MEASUREMENTS.write_text(json.dumps(data, indent=1) + "\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(_page(data))
    _log(f"wrote {args.out}")


def _measure(args: argparse.Namespace) -> dict[str, Any]:
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.perf_counter()
    minilm = None if args.no_minilm else MiniLmEmbedder()
    with measure.workspace() as work:
        _log("recall latency")
        latency, latency_dir = measure.recall_latency(sizes, work, minilm, args.queries, args.runs, _log)
        _log("server memory")
        server = measure.server_memory(latency_dir, "user-latency", max(sizes), queries=20)
        _log("server under simultaneous clients")
        load = server_load(work / "load")
        _log("ingestion")
        embedders: list[tuple[str, Any]] = [("hashing", HashingEmbedder(measure.DIMENSIONS))]
        if minilm is not None:
            embedders += [(PATTERNS_ALONE, minilm), (SEMANTIC, minilm)]
        ingestion = measure.ingestion(
            work,
            embedders,
            count=30,
            runs=3,
            overrides={PATTERNS_ALONE: {"semantic_layer": False}, SEMANTIC: {"semantic_layer": True}},
        )
        concurrency = None
        if minilm is not None:
            _log("recall with MiniLM from simultaneous clients")
            concurrency = _concurrent_recall(work, minilm)
        _log("extraction on the labelled set")
        extraction = _extraction(minilm is not None)
        _log("handler imports")
        imports = measure.handler_imports(runs=5)
        _log("layer size")
        layer_label, layer_bytes, package_bytes = measure.layer_size(work, _log)
        _log("request counts (moto)")
        counts = measure_operation_counts(work / "counts")
        _log("governance jobs' writes (moto, a simulated month)")
        governance = measure_governance_writes(work / "governance")
    compression = None
    if minilm is not None and args.locomo is not None:
        _log("vector compression (LoCoMo, MiniLM)")
        compression = vector_compression.measure(args.locomo, minilm.embed)
    return {
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "elapsed_s": time.perf_counter() - started,
        "machine": _machine(),
        "runs": args.runs,
        "queries": args.queries,
        "latency": [asdict(row) for row in latency],
        "server": asdict(server) if server is not None else None,
        "server_load": [asdict(row) for row in load] if load is not None else None,
        "ingestion": [asdict(row) for row in ingestion],
        "concurrent_recall": concurrency,
        "imports": [asdict(row) for row in imports],
        "functions": measure.function_sizes(),
        "layer": {"label": layer_label, "bytes": layer_bytes, "package_bytes": package_bytes},
        "counts": asdict(counts),
        "governance": governance.as_dict(),
        "extraction": extraction,
        "vector_compression": compression,
    }


def _measure_only(sections: set[str], locomo: Path | None = None) -> dict[str, Any]:
    """The cold-start sections or the vector compression, re-measured without the minutes the rest takes (after a
    change to the handlers, the lock or the index mapping); the page's other figures keep their date."""
    unknown = sections - {"imports", "layer", "compression", "extraction", "ingestion", "concurrency"}
    if unknown:
        raise SystemExit(
            "--only knows imports, layer, compression, extraction, ingestion and concurrency, not "
            + ", ".join(sorted(unknown))
        )
    found: dict[str, Any] = {}
    if "extraction" in sections:
        _log("extraction on the labelled set")
        found["extraction"] = _extraction(True)
        found["extraction_generated"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    if "ingestion" in sections:
        _log("ingestion")
        minilm = MiniLmEmbedder()
        embedders: list[tuple[str, Any]] = [
            ("hashing", HashingEmbedder(measure.DIMENSIONS)),
            (PATTERNS_ALONE, minilm),
            (SEMANTIC, minilm),
        ]
        with measure.workspace() as work:
            rows = measure.ingestion(
                work,
                embedders,
                count=30,
                runs=3,
                overrides={PATTERNS_ALONE: {"semantic_layer": False}, SEMANTIC: {"semantic_layer": True}},
            )
        found["ingestion"] = [asdict(row) for row in rows]
        found["ingestion_generated"] = f"{datetime.now(UTC):%Y-%m-%d %H:%M UTC}, load average {os.getloadavg()[0]:.1f}"
    if "concurrency" in sections:
        _log("recall with MiniLM from simultaneous clients")
        with measure.workspace() as work:
            found["concurrent_recall"] = _concurrent_recall(work, MiniLmEmbedder())
    if "compression" in sections:
        if locomo is None or not locomo.is_file():
            raise SystemExit("--only compression needs --locomo PATH/locomo-dev.json")
        _log("vector compression (LoCoMo, MiniLM)")
        found["vector_compression"] = vector_compression.measure(locomo, MiniLmEmbedder().embed)
    if sections & {"imports", "layer"}:
        found["cold_start_generated"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    if "imports" in sections:
        _log("handler imports")
        found["imports"] = [asdict(row) for row in measure.handler_imports(runs=5)]
        found["functions"] = measure.function_sizes()
    if "layer" in sections:
        _log("layer size")
        with measure.workspace() as work:
            label, size, package = measure.layer_size(work, _log)
        found["layer"] = {"label": label, "bytes": size, "package_bytes": package}
    return found


def _concurrent_recall(work: Path, minilm: MiniLmEmbedder) -> dict[str, Any]:
    rows = measure.concurrent_recall(work, minilm, memories=1_000, clients=(1, 2, 4), recalls=160, runs=3)
    generated = f"{datetime.now(UTC):%Y-%m-%d %H:%M UTC}, load average {os.getloadavg()[0]:.1f}"
    return {"rows": [asdict(row) for row in rows], "generated": generated}


def _concurrent_section(data: dict[str, Any] | None) -> list[str]:
    if not data:
        return []
    lines = [
        "## Recall with MiniLM from simultaneous clients",
        "",
        f"`Recall.recall` with the query embedded by all-MiniLM-L6-v2, 160 recalls a run over 1,000 memories of one "
        f"end user, from 1, 2 or 4 threads of one process at once (a server's handler threads share its GIL and "
        f"its cores; {data['generated']}). The model's forward pass is one TorchScript call that holds the GIL only "
        "to start and to return (`adapters/local/minilm_scripted.py`), so one client's pass and another's scoring "
        "share the cores instead of taking turns at each of the pass's two hundred operations.",
        "",
        "| clients | recalls/s | p50 ms | p95 ms |",
        "|---:|---:|---:|---:|",
    ]
    for row in data["rows"]:
        lines.append(
            f"| {row['clients']} | {_spread(row['per_second']).plain(0)} | {_spread(row['p50']).ms()} "
            f"| {_spread(row['p95']).ms()} |"
        )
    return [*lines, ""]


def _extraction(minilm: bool) -> dict[str, Any]:
    """`rapport eval extraction` with the semantic layer (when MiniLM is here) and with the patterns alone."""
    from rapport.evaluation.extraction import DATA, evaluate_halves
    from rapport.settings import Settings

    runs = {"patterns": evaluate_halves(DATA, Settings(), minilm=False)}
    if minilm:
        runs["semantic"] = evaluate_halves(DATA, Settings(), minilm=True)
    return {name: {k: v for k, v in run.items() if k != "dev_misses"} for name, run in runs.items()}


# `rapport eval extraction --calibrate --out bench/results/extraction-cv.json`: the dev half's cross-validated
# figures, which take the calibration's minutes and so are not re-run by the bench.
EXTRACTION_CV = measure.ROOT / "bench" / "results" / "extraction-cv.json"


def _bars(calibrations: dict[str, dict[str, Any]]) -> str:
    return "; ".join(
        f"{name} {bars['threshold']} / {bars['margin']}"
        + (f" ({', '.join(f'{k} {v}' for k, v in bars['by_label'].items())})" if bars.get("by_label") else "")
        for name, bars in calibrations.items()
    )


def _extraction_section(data: dict[str, Any] | None, generated: str | None = None) -> list[str]:
    from rapport.evaluation.extraction_report import markdown

    out = ["## Extraction and filtering without a language model (labelled set)", ""]
    if not data:
        return [*out, "Not measured in this run.", ""]
    out += [
        "`make eval-extraction` (`rapport eval extraction`): the rule-based model, as the local pipeline runs it, "
        "over the labelled set in `rapport/evaluation/extraction_set/` (written for the brief's scenarios and split "
        "by conversation id before any rule or prototype was written; a second batch, 240 records in wordings of "
        "three writers who saw neither the set nor the code, split odd ids to dev, even to test, before any rule was "
        'written from it: docs/pipeline.md, "A second batch"; and a third, 88 filter candidates in dev alone, '
        'written before the filter rules they led to: "A third batch"; the bars are calibrated on `dev` only). A '
        "memory counts when its type is one the label accepts and the label's key words are in it; the filter is "
        "judged on candidate memories as an extractor would propose them. docs/pipeline.md explains the layer."
        + (f" Measured on {generated}." if generated else ""),
        "",
        "Read the dev columns as fitted: the prototypes, cues and bars were written and searched with the dev half "
        "in view. What predicts unseen conversations is the cross-validated dev figure below (bars searched on four "
        "fifths of dev, measured on the fifth) and, above all, the test half, which no rule, prototype or bar was "
        "tuned on.",
        "",
    ]
    if EXTRACTION_CV.is_file():
        checked = json.loads(EXTRACTION_CV.read_text())
        from rapport.domain.semantics.matcher import CALIBRATIONS, MINILM

        in_force = {
            name: {"threshold": c.threshold, "margin": c.margin, "by_label": dict(c.by_label)}
            for name, c in CALIBRATIONS[MINILM].items()
        }
        found = {
            name: {"threshold": b["threshold"], "margin": b["margin"], "by_label": dict(b.get("by_label") or {})}
            for name, b in checked["calibration"].items()
            if isinstance(b, dict)
        }
        measured = checked["halves"][0]["conversations"]
        halves = data.get("semantic", {}).get("halves", [])
        dev_now = next((h["conversations"] for h in halves if h["half"] == "dev"), 0)
        out += [
            "### The dev half, cross-validated (`rapport eval extraction --calibrate`)",
            "",
            (
                f"Cross-validated on an earlier dev half ({measured} conversations; dev now holds {dev_now}): not "
                "re-run since (the better part of an hour on this machine), and the bars in force were calibrated "
                "on it. "
                if dev_now and measured != dev_now
                else ""
            )
            + f"{checked['model']}; the bars in force: {_bars(in_force)} (threshold / margin)"
            + (
                "."
                if found == in_force
                else f"; the search on all of dev proposed {_bars(found)} (docs/pipeline.md says why they differ)."
            ),
            "",
            markdown(checked),
            "",
        ]
    for name, title in (("semantic", "Patterns + the semantic layer (MiniLM)"), ("patterns", "Patterns alone")):
        if name in data:
            out += [f"### {title}", "", markdown(data[name]), ""]
    return out


def _spread(value: dict[str, float]) -> measure.Spread:
    return measure.Spread(**value)


def _page(data: dict[str, Any]) -> str:
    """The page from the measurements (plain JSON) and the latest LoCoMo results."""
    latency = [
        measure.LatencyRow(r["memories"], r["embedder"], _spread(r["p50"]), _spread(r["p95"]), _spread(r["floor_p50"]))
        for r in data["latency"]
    ]
    server = measure.ServerMemory(**data["server"]) if data["server"] else None
    ingestion = [
        measure.IngestRow(r["embedder"], _spread(r["per_second"]), r["interactions"]) for r in data["ingestion"]
    ]
    imports = [
        measure.ImportRow(r["handler"], _spread(r["cumulative"]), _spread(r["process"])) for r in data["imports"]
    ]
    functions: dict[str, int] = data["functions"]
    layer_label, layer_bytes, package_bytes = (data["layer"][k] for k in ("label", "bytes", "package_bytes"))
    counts = OperationCounts(**data["counts"])
    governance = GovernanceWrites.from_dict(data["governance"]) if data.get("governance") else None
    elapsed = float(data["elapsed_s"])
    lines = [
        "# Benchmarks",
        "",
        f"Generated by `make bench` on {data['generated']}, in {elapsed / 60:.1f} minutes, on {data['machine']}. "
        f"The machine is shared and noisy: each figure is the median of {data['runs']} runs "
        "with the min–max beside it, all from this one run. The LoCoMo section comes from the latest `make eval`.",
        "",
        *_locomo_section(),
        "## Recall latency (one end user, local stack)",
        "",
        f"SQLite store + embedded index, {data['queries']} synthetic queries a run, limit 10. `hashing`: the hashing "
        "embedder, so the model is out of the figure; `MiniLM`: the query embedded by all-MiniLM-L6-v2 on CPU over "
        f"the same store ({measure.DIMENSIONS} dimensions). The floor is one float32 matrix product and a top-50 "
        "over the same vectors: the least any exact search can spend. Memories were loaded straight into the store "
        "and index (no write-time graph enrichment), so a user without graph edges is measured; edges add their "
        "reads to recall (see the request counts below).",
        "",
        "| memories | query embedder | p50 ms | p95 ms | exact floor p50 ms |",
        "|---:|---|---:|---:|---:|",
    ]
    for row in latency:
        lines.append(f"| {row.memories:,} | {row.embedder} | {row.p50.ms()} | {row.p95.ms()} | {row.floor_p50.ms(2)} |")
    lines += [
        "",
        "## Ingestion throughput (local pipeline)",
        "",
        "`InteractionService.record` of a two-message interaction (user + assistant) with the local pipeline: history, "
        "episodes, rule-based extraction and filter, store, graph enrichment — everything `POST /interactions` does "
        "in `rapport serve`. One end user per run. With MiniLM, the rule-based model runs with its semantic layer "
        "(the default: the user's sentences embedded in the episodes' call, candidates in one batch, every prototype "
        "in one call per process; docs/pipeline.md says why it is on) or, `RAPPORT_SEMANTIC_LAYER=false`, with the "
        "patterns alone."
        + (f" Re-measured on {data['ingestion_generated']}." if data.get("ingestion_generated") else ""),
        "",
        "| embedder | interactions/s | interactions a run |",
        "|---|---:|---:|",
    ]
    for ingest in ingestion:
        lines.append(f"| {ingest.embedder} | {ingest.per_second.plain(1)} | {ingest.interactions} |")
    lines += ["", *_concurrent_section(data.get("concurrent_recall"))]
    lines += [
        "## Lambda cold-start proxy",
        "",
        "`python -X importtime` on each handler module (cumulative import of `handler`, no event handled), and the "
        "whole interpreter start with it, on this machine's CPython — a proxy for the init phase, not a Lambda "
        "measurement. Tracing is off (`POWERTOOLS_TRACE_DISABLED`): with it on, the X-Ray SDK loads at init too. "
        "What a function builds on its first event is not in the figure: its settings, its adapters and the SDKs "
        "under them (boto3, opensearch-py, openai), and for the API its routers."
        + (f" Re-measured on {data['cold_start_generated']}." if data.get("cold_start_generated") else ""),
        "",
        "| function | import ms | interpreter + import ms | folder bytes |",
        "|---|---:|---:|---:|",
    ]
    imported = {imported_row.handler: imported_row for imported_row in imports}
    for name, size in functions.items():
        found = imported.get(name)
        if found is None:
            lines.append(f"| {name} | import failed here | – | {size:,} |")
        else:
            lines.append(f"| {name} | {found.cumulative.ms()} | {found.process.ms()} | {size:,} |")
    layer = f"{layer_bytes / 1e6:.1f} MB" if layer_bytes is not None else "not measured"
    lines += [
        "",
        f"Layer: the `rapport` package {package_bytes / 1e6:.2f} MB; {layer_label}: {layer} unpacked "
        "(Lambda's limit is 250 MB unpacked for a function and its layers).",
        "",
        "## Memory of the local server",
        "",
    ]
    if server is None:
        lines.append("`rapport serve` did not come up within five minutes; not measured.")
    else:
        lines.append(
            f"`rapport serve` (hashing embedder, so no model in memory) over {server.memories:,} memories of one end "
            f"user, after 20 recalls over HTTP: RSS {server.rss_mb:.0f} MB, peak {server.peak_mb:.0f} MB; recall "
            f"over HTTP p50 {server.recall_ms:.0f} ms. MiniLM adds the model and torch (several hundred MB)."
        )
    load = data.get("server_load")
    lines += ["", *load_markdown([LoadRow(**row) for row in load] if load else None)]
    lines += _scale_section()
    lines += _extraction_section(data.get("extraction"), data.get("extraction_generated"))
    lines += vector_compression.markdown(data.get("vector_compression"))
    lines += ["## Cost model", "", cost_model.markdown(counts, governance), ""]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
