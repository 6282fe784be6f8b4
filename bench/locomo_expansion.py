"""LoCoMo with and without graph expansion (docs/graph.md), as a markdown section of docs/BENCHMARKS.md.

Both runs are `rapport eval locomo` on the same data and code: `--out bench/results/locomo-expansion-off.json`, and
`--expand-relations --out bench/results/locomo-expansion-on.json` (`make eval-expansion`)."""

from __future__ import annotations

from typing import Any

from rapport.evaluation.locomo import CATEGORY_NAMES, SCORED_CATEGORIES


def markdown(without: dict[str, Any], with_expansion: dict[str, Any]) -> str:
    seeds = with_expansion.get("expand_relations", {}).get("seeds", "?")
    rows = [
        ("without expansion: the top 10 the query found", without),
        (f"with expansion: {seeds} found, then what the graph reached from them", with_expansion),
    ]
    categories = [c for c in (*SCORED_CATEGORIES, 5) if str(c) in without["by_category"]]
    lines = [
        "| recall | R@5 | R@10 | all@10 | MRR | n | "
        + " | ".join(f"R@10 {CATEGORY_NAMES[c]}" for c in categories)
        + " |",
        "|---|---:|---:|---:|---:|---:|" + "---:|" * len(categories),
    ]
    for label, result in rows:
        o = result["overall"]
        per_category = " | ".join(f"{result['by_category'][str(c)]['recall@10']:.3f}" for c in categories)
        lines.append(
            f"| {label} | {o['recall@5']:.3f} | {o['recall@10']:.3f} | {o['all@10']:.3f} | {o['mrr']:.3f} | "
            f"{o['n']} | {per_category} |"
        )
    return "\n".join(lines)


def section(without: dict[str, Any], with_expansion: dict[str, Any], stamp: str = "") -> list[str]:
    """The subsection of the LoCoMo section: how it was run, the figures, and what they say."""
    seeds = with_expansion.get("expand_relations", {}).get("seeds", "?")
    return [
        "### With and without graph expansion",
        "",
        f"`make eval-expansion`{f' ({stamp})' if stamp else ''}: the evaluation twice on the same code, without "
        "baselines (they do not change with the graph). Both runs have graph "
        "enrichment and the relation score (docs/graph.md); the second asks recall for "
        f"`limit={seeds}, expand_relations=true`, so the scored top 10 are {seeds} hits the query found followed by "
        "the best memories reached along their edges (in LoCoMo these are enrichment's `PRECEDED_BY` and "
        "`SIMILAR_TO` links, and pattern and pipeline links; nobody posts associations there).",
        "",
        markdown(without, with_expansion),
        "",
        "Expansion trades the query's own 6th–10th hits for graph neighbours of the first ones. On turn-level "
        "evidence recall that is a loss: the next hits by meaning and keywords hold evidence more often than the "
        "turns linked to the best ones (recall already lifts the turn that answers a matching question). Expansion "
        "is for assembling context around what was found — a decision with what led to it, a fact with what it "
        "replaced — so it stays off by default and adds its hits after `limit` rather than in place of them.",
    ]
