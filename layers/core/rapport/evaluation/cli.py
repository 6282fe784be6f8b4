"""`rapport eval locomo`: the LoCoMo retrieval evaluation from the command line."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from argparse import Namespace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from rapport.cli_common import Json, Progress, finish, settings_of
from rapport.evaluation.splits import TUNING_IDS, parse_ids
from rapport.settings import Settings

eval_app = typer.Typer(help="retrieval evaluations", no_args_is_help=True)
bench_app = typer.Typer(help="measurements of the product", no_args_is_help=True)


class EmbedderChoice(StrEnum):
    minilm = "minilm"
    hashing = "hashing"


@eval_app.command(
    "locomo", help="turn-level evidence recall on LoCoMo through the local product, with BM25 and dense baselines"
)
def locomo(
    data: Annotated[Path, typer.Option(help="the LoCoMo JSON file (e.g. locomo-dev.json)")],
    out: Annotated[Path | None, typer.Option(help="write the result as JSON here")] = None,
    markdown: Annotated[Path | None, typer.Option(help="also write the markdown table here")] = None,
    limit_conversations: Annotated[
        int | None, typer.Option(help="only the first N conversations (a quick look)")
    ] = None,
    embedder: Annotated[
        EmbedderChoice,
        typer.Option(help="minilm (the local product; default) or hashing (a fast smoke run without the model)"),
    ] = EmbedderChoice.minilm,
    no_baselines: Annotated[
        bool, typer.Option("--no-baselines", help="skip the BM25 / dense / hybrid baselines")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress bar")] = False,
    expand_relations: Annotated[
        bool,
        typer.Option(
            "--expand-relations",
            help="recall with graph expansion: the top 10 are --expansion-seeds hits plus what the graph reached",
        ),
    ] = False,
    expansion_seeds: Annotated[int, typer.Option(help="hits found by the query (default 5 of 10)")] = 5,
    tuning_ids: Annotated[
        str,
        typer.Option(
            help="sample ids of the tuning set, comma-separated; every other conversation is in the check set",
        ),
    ] = ",".join(TUNING_IDS),
    embedding_cache: Annotated[
        Path | None,
        typer.Option(help="the file of MiniLM vectors kept across runs (default ~/.cache/rapport/embeddings.sqlite3)"),
    ] = None,
    no_embedding_cache: Annotated[
        bool, typer.Option("--no-embedding-cache", help="embed every text with the model, keep nothing on disk")
    ] = False,
) -> int:
    args = Namespace(
        data=data,
        out=out,
        markdown=markdown,
        limit_conversations=limit_conversations,
        embedder=embedder.value,
        no_baselines=no_baselines,
        quiet=quiet,
        expand_relations=expand_relations,
        expansion_seeds=expansion_seeds,
        tuning_ids=parse_ids(tuning_ids),
        embedding_cache=embedding_cache,
        no_embedding_cache=no_embedding_cache,
    )
    return finish(_cmd_locomo(args, settings_of(None)))


@eval_app.command(
    "extraction",
    help="the rule-based model over the labelled set: memories per type (precision, recall), the filter's verdicts, "
    "the signals",
)
def extraction(
    data: Annotated[Path | None, typer.Option(help="the folder with dev.jsonl and test.jsonl")] = None,
    embedder: Annotated[
        EmbedderChoice,
        typer.Option(help="minilm (the semantic layer beside the patterns; default) or hashing (the patterns alone)"),
    ] = EmbedderChoice.minilm,
    out: Annotated[Path | None, typer.Option(help="write the result as JSON here")] = None,
    markdown: Annotated[Path | None, typer.Option(help="also write the markdown tables here")] = None,
    calibrate: Annotated[
        bool,
        typer.Option(
            "--calibrate",
            help="the dev half alone: 5-fold cross-validation of the bars (calibrated on 4 folds, measured on the "
            "5th), "
            "then the bars calibrated on all of dev, printed as code",
        ),
    ] = False,
    misses: Annotated[bool, typer.Option("--misses", help="list what the dev half got wrong")] = False,
) -> int:
    args = Namespace(data=data, embedder=embedder.value, out=out, markdown=markdown, calibrate=calibrate, misses=misses)
    return finish(_cmd_extraction(args, settings_of(None)))


@bench_app.command(
    "requests", help="the DynamoDB (and index, model, bus) requests one interaction, recall and remembered memory make"
)
def requests(json_output: Json = False) -> None:
    _cmd_requests(Namespace(json=json_output))


def register(root: typer.Typer) -> None:
    root.add_typer(eval_app, name="eval")
    root.add_typer(bench_app, name="bench")


def _cmd_requests(args: Namespace) -> int:
    """Under moto in process (a dev dependency): nothing leaves the machine."""
    import tempfile

    from rapport.evaluation.request_counts import by_service, measure_operation_counts

    with tempfile.TemporaryDirectory() as tmp:
        counts = measure_operation_counts(Path(tmp))
    calls = {"interaction": counts.interaction, "recall": counts.recall, "memory": counts.remember}
    result = {name: by_service(tally) for name, tally in calls.items()}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for name, tally in result.items():
            detail = ", ".join(f"{k} {v}" for k, v in tally.items() if k.startswith("dynamodb:"))
            print(f"{name}: {tally['dynamodb']} DynamoDB requests ({detail})")
    return 0


def _cmd_locomo(args: Namespace, settings: Settings) -> int:
    from rapport.adapters.local.hashing_embedder import HashingEmbedder
    from rapport.adapters.local.minilm import MiniLmEmbedder
    from rapport.evaluation.embedding_cache import CachedEmbedder, cached_minilm, default_cache_path
    from rapport.evaluation.locomo import LocomoFormatError, load_locomo
    from rapport.evaluation.locomo_run import run_locomo
    from rapport.evaluation.report import markdown_table
    from rapport.ports.embedder import Embedder

    # The model's weights ship in a package; never reach for a model hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if not args.data.is_file():
        print(f"no LoCoMo file at {args.data}: pass --data PATH (e.g. .../locomo/locomo-dev.json)", file=sys.stderr)
        return 2
    try:
        conversations, defects = load_locomo(args.data)
    except LocomoFormatError as exc:
        print(f"cannot read the LoCoMo file: {exc}", file=sys.stderr)
        return 2
    if args.limit_conversations is not None:
        conversations = conversations[: max(args.limit_conversations, 0)]
    embedder: Embedder
    if args.embedder == "minilm" and args.no_embedding_cache:
        embedder = MiniLmEmbedder()
    elif args.embedder == "minilm":
        cache = args.embedding_cache or default_cache_path()
        try:
            embedder = cached_minilm(cache)
        except (OSError, sqlite3.Error) as exc:
            print(f"cannot use the embedding cache {cache}: {exc} (or pass --no-embedding-cache)", file=sys.stderr)
            return 2
    else:
        embedder = HashingEmbedder(settings.hashing_dimensions)
    started = time.perf_counter()
    try:
        with Progress("LoCoMo", None, enabled=not args.quiet) as bar:
            run = run_locomo(
                conversations,
                embedder,
                settings=settings,
                baselines=not args.no_baselines,
                progress=False,
                expansion_seeds=args.expansion_seeds if args.expand_relations else None,
                on_step=lambda done, total: bar.update(done, total),
            )
    finally:
        if isinstance(embedder, CachedEmbedder):
            embedder.close()
    run.seconds["total"] = time.perf_counter() - started
    result = run.report(defects, args.tuning_ids)
    result["embedder"] = embedder.name
    if isinstance(embedder, CachedEmbedder):
        result["embedding_cache"] = embedder.report()
    if args.expand_relations:
        result["expand_relations"] = {"seeds": args.expansion_seeds}
    # The day of the run, in the result: a file's modification time is the day it was checked out.
    result["measured_on"] = f"{datetime.now(UTC):%Y-%m-%d}"
    table = markdown_table(result)
    print(table)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(table + "\n")
    return 0


def _cmd_extraction(args: Namespace, settings: Settings) -> int:
    from rapport.evaluation.extraction import DATA, LabelledSetError, evaluate_halves

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from rapport.evaluation.extraction_cv import calibrate_dev

    def on_step(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        if args.calibrate:
            result = calibrate_dev(args.data or DATA, settings, on_step=on_step)
        else:
            result = evaluate_halves(args.data or DATA, settings, minilm=args.embedder == "minilm", on_step=on_step)
    except LabelledSetError as exc:
        print(f"cannot read the labelled set: {exc}", file=sys.stderr)
        return 2
    from rapport.evaluation.extraction_report import markdown

    table = markdown(result)
    print(f"model: {result['model']}\n")
    print(table)
    if args.misses:
        for miss in result["dev_misses"]:
            print(json.dumps(miss), file=sys.stderr)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({k: v for k, v in result.items() if k != "dev_misses"}, indent=1) + "\n")
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(table + "\n")
    return 0
