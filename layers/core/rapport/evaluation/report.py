"""The LoCoMo result as markdown: overall figures beside the baselines, recall by category, then the same for the
tuning set and the check set."""

from __future__ import annotations

from typing import Any

from rapport.evaluation.locomo import CATEGORY_NAMES, SCORED_CATEGORIES
from rapport.evaluation.splits import ALL, SET_LABELS

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
    if result.get("sets"):
        lines += ["", *sets_table(result)]
    return "\n".join(lines)


def set_title(result: dict[str, Any], name: str) -> str:
    """'tuning set (conv-26, conv-30, conv-41)'; all conversations without their list."""
    if name == ALL:
        return SET_LABELS[ALL]
    return f"{SET_LABELS[name]} ({', '.join(result['sets'][name]['conversations'])})"


def sets_table(result: dict[str, Any]) -> list[str]:
    """R@5 / R@10 overall and per category 1–4, one block of rows per set (tuning, check, all together)."""
    names = list(SCORED_CATEGORIES)
    lines = [
        "| set | retriever | R@5 | R@10 | n | " + " | ".join(CATEGORY_NAMES[c] for c in names) + " |",
        "|---|---|---:|---:|---:|" + "---:|" * len(names),
    ]
    blocks = [(name, result["sets"][name]) for name in result["sets"]] + [(ALL, result)]
    for name, figures in blocks:
        for label, row in _rows(figures):
            o = row["overall"]
            cells = []
            for c in names:
                f = row["by_category"].get(str(c))
                cells.append(f"{f['recall@5']:.3f} / {f['recall@10']:.3f}" if f else "–")
            lines.append(
                f"| {set_title(result, name)} | {label} | {o['recall@5']:.3f} | {o['recall@10']:.3f} | {o['n']} | "
                + " | ".join(cells)
                + " |"
            )
    lines += ["", "Categories as R@5 / R@10. A conversation not named in the tuning list is in the check set."]
    return lines
