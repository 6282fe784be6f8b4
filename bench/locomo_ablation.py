"""What each rule of recall in its conversation (docs/recall.md) bought on LoCoMo: the evaluation re-run with the
rules added one by one.

Runs without the extraction pipeline (episodes only), so each row takes a minute or two; the main evaluation
(`make eval`) runs the whole product. `python -m bench.locomo_ablation --data PATH --out FILE`."""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rapport.adapters.local.minilm import MiniLmEmbedder
from rapport.domain import rendering, text
from rapport.evaluation.locomo import load_locomo
from rapport.evaluation.locomo_run import run_locomo
from rapport.evaluation.metrics import summarise_by_category
from rapport.services import embedding
from rapport.settings import PipelineMode, RecallContextWeights, RecallWeights, Settings

_OFF = {"answer": 0.0, "conversation": 0.0, "speaker": 0.0, "adjacent": 0.0}
_SOLO = {"adjacent": 0.0}  # messages take nothing from the ones beside them
_PRIORS = ("relation", "recency", "strength")
# Off until their own rows below: keyword scores cut at the pool, episodes embedded alone.
_LATER_OFF = {"recall_keyword_depth": 1, "episode_reply_weight": 0.0}


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
    settings: dict[str, float] = field(default_factory=lambda: dict(_LATER_OFF))


STEPS = (
    Step("foundation recall (light stemmer, `[date] Speaker: text` embedded, no context)", False, False, _OFF),
    Step("+ Porter stemming (keyword search)", True, False, _OFF),
    Step('+ messages embedded as `Speaker said, "…"` in the third person', True, True, _OFF),
    Step("+ an answer inherits its question's match (0.2)", True, True, {**_OFF, "answer": 0.2}),
    Step("+ the conversation's best match lifts its messages (0.4)", True, True, {**_SOLO, "speaker": 0.0}),
    Step("+ the speaker the question names (0.12)", True, True, _SOLO),
    Step("+ keyword scores read past the pool (depth 200)", True, True, _SOLO, settings={"episode_reply_weight": 0.0}),
    Step("+ replies embedded after the message they follow (0.7)", True, True, _SOLO, settings={}),
    Step("+ the messages beside a match (0.05) = the defaults", True, True, {}, settings={}),
    Step("defaults, graph relation weight 0 (instead of 0.25)", True, True, {}, {"relation": 0.0}, {}),
    Step("defaults, relation, recency and strength weights 0", True, True, {}, dict.fromkeys(_PRIORS, 0.0), {}),
)  # fmt: skip


class CachingEmbedder:
    """MiniLM with a text → vector cache: the rows share most texts, so each is embedded once."""

    def __init__(self) -> None:
        self._inner = MiniLmEmbedder()
        self._cache: dict[str, list[float]] = {}

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    @property
    def name(self) -> str:
        return self._inner.name

    def embed(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, self._inner.embed(missing), strict=True))
        return [self._cache[t] for t in texts]


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


def run(data: Path, log: Callable[[str], None] = print) -> dict[str, Any]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    conversations, _ = load_locomo(data)
    embedder = CachingEmbedder()
    rows = []
    for step in STEPS:
        settings = Settings(
            pipeline=PipelineMode.OFF,
            recall_context=RecallContextWeights().model_copy(update=step.context),
            weights=RecallWeights().model_copy(update=step.weights),
        ).model_copy(update=step.settings)
        with _mechanisms(step):
            result = run_locomo(conversations, embedder, settings=settings, baselines=False, progress=False)
        overall, by_category = summarise_by_category(result.product)
        rows.append({"label": step.label, "overall": overall, "by_category": by_category})
        log(f"{overall['recall@5']:.3f} / {overall['recall@10']:.3f}  {step.label}")
    return {"pipeline": "off (episodes only)", "rows": rows}


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "| change (cumulative) | R@5 | R@10 | multi-hop | temporal | open-domain | single-hop |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result["rows"]:
        o, c = row["overall"], row["by_category"]
        cells = " | ".join(f"{c[k]['recall@5']:.2f} / {c[k]['recall@10']:.2f}" for k in ("1", "2", "3", "4"))
        label = re.sub(r"\|", "/", row["label"])
        lines.append(f"| {label} | {o['recall@5']:.3f} | {o['recall@10']:.3f} | {cells} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    result = run(args.data)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(markdown(result))


if __name__ == "__main__":
    main()
