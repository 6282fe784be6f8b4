"""What each rule of recall in its conversation (docs/recall.md) bought on LoCoMo: the evaluation re-run with the
rules added one by one.

Runs without the extraction pipeline (episodes only), so each row takes a minute or two; the main evaluation
(`make eval`) runs the whole product. Every row is reported for the tuning set, the check set and all together.
`python -m bench.locomo_ablation --data PATH --out FILE`."""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rapport.domain import rendering, text
from rapport.evaluation.embedding_cache import cached_minilm, default_cache_path
from rapport.evaluation.locomo import load_locomo
from rapport.evaluation.locomo_run import run_locomo
from rapport.evaluation.metrics import summarise_by_category
from rapport.evaluation.splits import ALL, SET_LABELS, TUNING_IDS, parse_ids, summarise_sets
from rapport.services import embedding
from rapport.settings import PipelineMode, RecallAcrossSettings, RecallContextWeights, RecallWeights, Settings

_OFF = {"answer": 0.0, "conversation": 0.0, "speaker": 0.0, "adjacent": 0.0}
_SOLO = {"adjacent": 0.0}  # messages take nothing from the ones beside them
_PRIORS = ("relation", "recency", "strength")
# Off until their own rows below: keyword scores cut at the pool, episodes embedded alone.
# Questions gathered across the history scored like any other (docs/recall.md, "A second pass for multi-hop
# questions"), until their own rows.
_ACROSS_OFF = RecallAcrossSettings(whole_history=False, sitting_spread=0.0)
_BEFORE_ACROSS: dict[str, Any] = {"recall_across": _ACROSS_OFF}
_LATER_OFF: dict[str, Any] = {"recall_keyword_depth": 1, "episode_reply_weight": 0.0, **_BEFORE_ACROSS}
_REPLIES_OFF: dict[str, Any] = {"episode_reply_weight": 0.0, **_BEFORE_ACROSS}
_WHOLE_HISTORY: dict[str, Any] = {"recall_across": RecallAcrossSettings(sitting_spread=0.0)}
_SECOND_PASS: dict[str, Any] = {"recall_across": RecallAcrossSettings(second_pass=True)}


def _light_stem(token: str) -> str:
    """The foundation's stemmer (plural and possessive endings only), for the 'before' rows."""
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


@dataclass(frozen=True)
class Step:
    label: str
    porter: bool
    third_person: bool
    context: dict[str, float]
    weights: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=lambda: dict(_LATER_OFF))


STEPS = (
    Step("foundation recall (light stemmer, `[date] Speaker: text` embedded, no context)", False, False, _OFF),
    Step("+ Porter stemming (keyword search)", True, False, _OFF),
    Step('+ messages embedded as `Speaker said, "…"` in the third person', True, True, _OFF),
    Step("+ an answer inherits its question's match (0.2)", True, True, {**_OFF, "answer": 0.2}),
    Step("+ the conversation's best match lifts its messages (0.4)", True, True, {**_SOLO, "speaker": 0.0}),
    Step("+ the speaker the question names (0.12)", True, True, _SOLO),
    Step("+ keyword scores read past the pool (depth 200)", True, True, _SOLO, settings=_REPLIES_OFF),
    Step("+ replies embedded after the message they follow (0.7)", True, True, _SOLO, settings=_BEFORE_ACROSS),
    Step("+ the messages beside a match (0.05)", True, True, {}, settings=_BEFORE_ACROSS),
    Step("+ a question gathering facts scored as of the whole history", True, True, {}, settings=_WHOLE_HISTORY),
    Step("+ such a question taken from each sitting in turn (0.05) = the defaults", True, True, {}, settings={}),
    Step("defaults, + the second pass for such questions (off by default)", True, True, {}, settings=_SECOND_PASS),
    Step("defaults, graph relation weight 0 (instead of 0.25)", True, True, {}, {"relation": 0.0}, {}),
    Step("defaults, relation, recency and strength weights 0", True, True, {}, dict.fromkeys(_PRIORS, 0.0), {}),
)  # fmt: skip


@contextmanager
def _mechanisms(step: Step) -> Iterator[None]:
    """Swap the stemmer and the embedding rendering back to the foundation's for the rows that lack them."""
    saved_stem, saved_render = text._stem, embedding.embedding_text
    try:
        if not step.porter:
            text._stem = lambda token: token if "'" in token else _light_stem(token)
        if not step.third_person:
            embedding.embedding_text = rendering.search_text
        yield
    finally:
        text._stem, embedding.embedding_text = saved_stem, saved_render


def run(
    data: Path,
    log: Callable[[str], None] = print,
    *,
    tuning_ids: Sequence[str] = TUNING_IDS,
    embedding_cache: Path | None = None,
) -> dict[str, Any]:
    """`embedding_cache`: the file of vectors kept across runs (None: this run's memory alone); every row reads
    the same turns and questions, so after the first row the model is hardly asked again."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    conversations, _ = load_locomo(data)
    embedder = cached_minilm(embedding_cache)
    rows = []
    try:
        for step in STEPS:
            settings = Settings(
                pipeline=PipelineMode.OFF,
                recall_context=RecallContextWeights().model_copy(update=step.context),
                weights=RecallWeights().model_copy(update=step.weights),
            ).model_copy(update=step.settings)
            with _mechanisms(step):
                result = run_locomo(conversations, embedder, settings=settings, baselines=False, progress=False)
            overall, by_category = summarise_by_category(result.product)
            sets = summarise_sets(result.product_by_conversation, tuning_ids)
            rows.append({"label": step.label, "overall": overall, "by_category": by_category, "sets": sets})
            by_set = "  ".join(
                f"{n} {s['overall']['recall@5']:.3f} / {s['overall']['recall@10']:.3f}" for n, s in sets.items()
            )
            log(f"{overall['recall@5']:.3f} / {overall['recall@10']:.3f}  ({by_set})  {step.label}")
    finally:
        embedder.close()
    return {"pipeline": "off (episodes only)", "tuning_ids": list(tuning_ids), "rows": rows}


def markdown(result: dict[str, Any]) -> str:
    """One table per set (tuning, check), then all conversations together; a result without sets, the last."""
    first = result["rows"][0] if result["rows"] else {}
    blocks: list[tuple[str, str | None]] = [
        (f"{SET_LABELS[name]} ({', '.join(found['conversations'])})", name)
        for name, found in first.get("sets", {}).items()
    ]
    blocks.append((SET_LABELS[ALL], None))
    lines: list[str] = []
    for title, name in blocks:
        if len(blocks) > 1:
            lines += [f"**{title}**", ""]
        lines += [
            "| change (cumulative) | R@5 | R@10 | multi-hop | temporal | open-domain | single-hop |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for row in result["rows"]:
            figures = row if name is None else row["sets"][name]
            o, c = figures["overall"], figures["by_category"]
            cells = " | ".join(
                f"{c[k]['recall@5']:.2f} / {c[k]['recall@10']:.2f}" if k in c else "–" for k in ("1", "2", "3", "4")
            )
            label = re.sub(r"\|", "/", row["label"])
            lines.append(f"| {label} | {o['recall@5']:.3f} | {o['recall@10']:.3f} | {cells} |")
        lines.append("")
    return "\n".join(lines).rstrip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--tuning-ids",
        default=",".join(TUNING_IDS),
        help="sample ids of the tuning set, comma-separated; every other conversation is in the check set",
    )
    parser.add_argument("--embedding-cache", type=Path, default=default_cache_path(), help="the file of vectors")
    parser.add_argument("--no-embedding-cache", action="store_true", help="keep no vectors on disk")
    args = parser.parse_args()
    cache = None if args.no_embedding_cache else args.embedding_cache
    result = run(args.data, tuning_ids=parse_ids(args.tuning_ids), embedding_cache=cache)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(markdown(result))


if __name__ == "__main__":
    main()
