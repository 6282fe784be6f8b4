"""The extraction evaluation as markdown: precision and recall per type, the filter's confusion matrix, the counts."""

from __future__ import annotations

from typing import Any

from rapport.evaluation.extraction import RELATIONAL_TYPES, USER_KINDS, VERDICTS


def _figure(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def markdown(result: dict[str, Any]) -> str:
    """`result`: {"model": …, "halves": [HalfResult.as_dict(), …]} (test first)."""
    halves = result["halves"]
    header = "| type | " + " | ".join(f"{h['half']} P | {h['half']} R | {h['half']} n" for h in halves) + " |"
    lines = [header, "|---|" + "---:|---:|---:|" * len(halves)]
    for group, names in (("relational", RELATIONAL_TYPES), ("user", USER_KINDS)):
        for name in names:
            cells = []
            for half in halves:
                row = half["by_type"].get(name, {})
                cells += [_figure(row.get("precision")), _figure(row.get("recall")), str(row.get("expected", 0))]
            lines.append(f"| {group}: {name} | " + " | ".join(cells) + " |")
    for half in halves:
        lines += ["", f"Filter on the {half['half']} half (rows: expected verdict, columns: the filter's):", ""]
        lines.append("| expected \\ given | " + " | ".join(VERDICTS) + " |")
        lines.append("|---|" + "---:|" * len(VERDICTS))
        for expected in VERDICTS:
            row = half["confusion"].get(expected, {})
            lines.append(f"| {expected} | " + " | ".join(str(row.get(given, 0)) for given in VERDICTS) + " |")
    lines.append("")
    for half in halves:
        signals = ", ".join(f"{name} {s['right']}/{s['labelled']}" for name, s in sorted(half["signals"].items()))
        lines.append(
            f"- {half['half']}: {half['conversations']} conversations, {half['messages']} messages; invented lessons "
            f"{len(half['invented_lessons'])}; crisis messages raising sentiment "
            f"{len(half['crisis_raising_sentiment'])}; signals right: {signals or 'none labelled'}."
        )
    return "\n".join(lines)
