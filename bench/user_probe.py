"""Trains the user probe the semantic layer ships (`rapport/domain/semantics/probes/`): a softmax regression from a
sentence's MiniLM vector to the kind of memory about the user it calls for (fact, preference, event, goal) or none
(docs/pipeline.md, "A probe for the user's kinds"). Trained as the relational probe is (`bench.relational_probe`).

It learns from what rules may be written from, and nothing else:
- the user prototypes, each under its label's kind (a `none_*` label as none);
- the dev half of the labelled set: each conversation with one user message, under the one kind it expects (none
  when it expects nothing, not even an optional memory);
- the odd lines of every file in bench/user-kinds/ with one user message (the even lines are kept to check on), but
  the files kept to check on whole (`*checked.txt`).

The test half, the even lines and the checked files are never read.

    python -m bench.user_probe          # trains and writes the probe
    python -m bench.user_probe --check  # exits 1 when the shipped probe was trained on other inputs
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.relational_probe import NONE, ship
from bench.relational_sets import labelled
from rapport.domain.models import MessageRole
from rapport.domain.semantics import prototypes
from rapport.evaluation.extraction import DATA

SETS = Path(__file__).resolve().parent / "user-kinds"
CHECKED = "*checked.txt"  # sets kept to check on, every line


def examples() -> list[tuple[str, str]]:
    """(text, kind) pairs, in a fixed order."""
    found: list[tuple[str, str]] = []
    for label, sentences in prototypes.USER.items():
        kind = prototypes.USER_KINDS.get(label, NONE)
        found += [(sentence, kind) for sentence in sentences]
    for line in (DATA / "dev.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        said = [m["content"] for m in record.get("messages", ()) if m["role"] == MessageRole.USER.value]
        due = record.get("user", ())
        kinds = {m["kind"] for m in due if not m.get("optional")}
        if len(said) == 1 and len(kinds) == 1:
            found.append((said[0], kinds.pop()))
        elif len(said) == 1 and not due:
            found.append((said[0], NONE))
    checked = {path.name for path in SETS.glob(CHECKED)}
    for path in sorted(SETS.glob("*.txt")):
        if path.name in checked:
            continue
        for due_kind, conversation in labelled(path, "odd"):
            said = [m.content for m in conversation.messages if m.role is MessageRole.USER]
            if len(said) == 1:
                found.append((said[0], due_kind))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only check the shipped probe's inputs")
    args = parser.parse_args(argv)
    return ship("user", examples(), "python -m bench.user_probe", check=args.check)


if __name__ == "__main__":
    raise SystemExit(main())
