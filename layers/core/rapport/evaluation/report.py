"""The LoCoMo result as markdown: overall figures beside the baselines, then recall by category."""

from __future__ import annotations

from typing import Any

from rapport.evaluation.locomo import CATEGORY_NAMES, SCORED_CATEGORIES

PRODUCT_LABEL = "Rapport recall (local: MiniLM + embedded index)"


def _rows(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    rows = [(PRODUCT_LABEL, {"overall": result["overall"], "by_category": result["by_category"]})]
    rows += [(b["label"], b) for b in result.get("baselines", {}).values()]
    return rows


def markdown_table(result: dict[str, Any]) -> str:
    """Two tables: categories 1–4 overall (with ratio to the best baseline), then R@5 / R@10 per category."""
    rows = _rows(result)
    best_baseline = max(
        (b["overall"]["recall@10"] for b in result.get("baselines", {}).values()),
        default=0.0,
    )
    lines = [
        "| retriever | R@5 | R@10 | all@10 | MRR | n |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, figures in rows:
        o = figures["overall"]
        lines.append(
            f"| {label} | {o['recall@5']:.3f} | {o['recall@10']:.3f} | {o['all@10']:.3f} | {o['mrr']:.3f} | {o['n']} |"
        )
    if best_baseline > 0:
        ratio = result["overall"]["recall@10"] / best_baseline
        lines.append("")
        lines.append(f"Rapport R@10 is {ratio:.2f}× the best baseline's on the same turns and questions.")
    categories = [c for c in (*SCORED_CATEGORIES, 5) if str(c) in result["by_category"]]
    header = " | ".join(f"{c} {CATEGORY_NAMES[c]} (n={result['by_category'][str(c)]['n']})" for c in categories)
    lines += ["", f"| R@5 / R@10 by category | {header} |", "|---|" + "---:|" * len(categories)]
    for label, figures in rows:
        cells = []
        for c in categories:
            f = figures["by_category"].get(str(c))
            cells.append(f"{f['recall@5']:.3f} / {f['recall@10']:.3f}" if f else "–")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Overall = categories 1–4; category 5 (adversarial: the asked fact is not in the conversation as put)")
    lines.append("is scored against its evidence turns and reported on its own.")
    return "\n".join(lines)
