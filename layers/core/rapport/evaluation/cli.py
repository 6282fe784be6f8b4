"""`rapport eval locomo`: the LoCoMo retrieval evaluation from the command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from rapport.settings import Settings

SettingsFactory = Callable[[argparse.Namespace], Settings]


def add_eval_commands(commands: argparse._SubParsersAction, settings: SettingsFactory) -> None:
    evals = commands.add_parser("eval", help="retrieval evaluations").add_subparsers(dest="eval_command", required=True)
    locomo = evals.add_parser(
        "locomo",
        help="turn-level evidence recall on LoCoMo through the local product, with BM25 and dense baselines",
    )
    locomo.add_argument("--data", required=True, type=Path, help="the LoCoMo JSON file (e.g. locomo-dev.json)")
    locomo.add_argument("--out", type=Path, help="write the result as JSON here")
    locomo.add_argument("--markdown", type=Path, help="also write the markdown table here")
    locomo.add_argument("--limit-conversations", type=int, help="only the first N conversations (a quick look)")
    locomo.add_argument(
        "--embedder",
        choices=("minilm", "hashing"),
        default="minilm",
        help="minilm (the local product; default) or hashing (a fast smoke run without the model)",
    )
    locomo.add_argument("--no-baselines", action="store_true", help="skip the BM25 / dense / hybrid baselines")
    locomo.add_argument("--quiet", action="store_true", help="no progress bar")
    locomo.add_argument(
        "--expand-relations",
        action="store_true",
        help="recall with graph expansion: the top 10 are --expansion-seeds hits plus what the graph reached",
    )
    locomo.add_argument("--expansion-seeds", type=int, default=5, help="hits found by the query (default 5 of 10)")
    locomo.set_defaults(func=lambda args: _cmd_locomo(args, settings(args)))


def add_bench_commands(commands: argparse._SubParsersAction) -> None:
    bench = commands.add_parser("bench", help="measurements of the product").add_subparsers(
        dest="bench_command", required=True
    )
    requests = bench.add_parser(
        "requests",
        help="the DynamoDB (and index, model, bus) requests one interaction, recall and remembered memory make",
    )
    requests.add_argument("--json", action="store_true", help="print JSON instead of a table")
    requests.set_defaults(func=_cmd_requests)


def _cmd_requests(args: argparse.Namespace) -> int:
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


def _cmd_locomo(args: argparse.Namespace, settings: Settings) -> int:
    from rapport.adapters.local.hashing_embedder import HashingEmbedder
    from rapport.adapters.local.minilm import MiniLmEmbedder
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
    embedder: Embedder = MiniLmEmbedder() if args.embedder == "minilm" else HashingEmbedder(settings.hashing_dimensions)
    run = run_locomo(
        conversations,
        embedder,
        settings=settings,
        baselines=not args.no_baselines,
        progress=not args.quiet,
        expansion_seeds=args.expansion_seeds if args.expand_relations else None,
    )
    result = run.report(defects)
    result["embedder"] = embedder.name
    if args.expand_relations:
        result["expand_relations"] = {"seeds": args.expansion_seeds}
    table = markdown_table(result)
    print(table)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(table + "\n")
    return 0
