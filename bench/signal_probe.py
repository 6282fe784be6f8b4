"""Trains the emotion probe the signal reader ships (`rapport/domain/semantics/probes/`): a softmax regression from a
message's MiniLM vector to the emotion it says (frustration, anxiety or none), trained as the relational probe is
(`bench.relational_probe`). Where the signal rules find no emotion in a message, the reader takes the probe's word
for one it is sure of (docs/pipeline.md, "An emotion probe").

It learns from what rules may be written from, and nothing else:
- the odd lines of every set in bench/signal-sets/ but the held ones (`HELD`: kept whole to check on, as the
  even lines are) and those kept from it (`NOT_TAUGHT`);
- the dev half of the labelled set: each conversation with one user message and an emotion label.

The test half and the even lines are never read.

    python -m bench.signal_probe          # trains and writes the probe
    python -m bench.signal_probe --check  # exits 1 when the shipped probe was trained on other inputs
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.relational_probe import main_of
from bench.signal_sets import labelled
from rapport.evaluation.extraction import DATA

SETS = Path(__file__).resolve().parent / "signal-sets"
# Sets kept whole to check on, never learnt from nor read for rules: a second writer's voice (docs/pipeline.md, "An
# emotion probe").
HELD = frozenset({"held-second-writer.txt"})
# Sets rules are written from (their odd lines) that the probe does not learn: a fourth writer's, kept to measure on
# wordings the probe never saw.
NOT_TAUGHT = frozenset({"fourth-writer.txt"})


def examples() -> list[tuple[str, str]]:
    """(message, emotion) pairs, in a fixed order."""
    found: list[tuple[str, str]] = []
    for path in sorted(p for p in SETS.glob("*.txt") if p.name not in HELD | NOT_TAUGHT):
        found += [(message, labels["emotion"]) for _, labels, message in labelled(path, "odd")]
    for line in (DATA / "dev.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        said = [m["content"] for m in record.get("messages", ()) if m["role"] == "user"]
        emotion = (record.get("signals") or {}).get("emotion")
        if emotion is not None and len(said) == 1:
            found.append((said[0], emotion))
    return found


main = main_of("emotion", examples, __doc__, "bench.signal_probe")


if __name__ == "__main__":
    raise SystemExit(main())
