"""The signal reader on messages written apart from its rules (`bench/signal-sets/`): one message a line,
`emotion<TAB>grudge<TAB>sentiment<TAB>message`, the labels a careful reader gives (emotion: frustration, anxiety or
none; grudge: up only when the person is cross with the assistant itself; sentiment: up, down or flat). Lines are
split by their number before any rule is read from them: rules come from the odd lines, the even ones check them.
Each message is read as an interaction of its own, as the labelled set's signals are (`observed_signals`). Prints
each half's right / total per signal and the emotion's confusion; with `--misses HALF`, that half's misses.

    python -m bench.signal_sets bench/signal-sets/*.txt [--misses odd]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from bench.filter_sets import set_arguments
from bench.relational_sets import numbered_lines
from rapport.adapters.local.vader import RuleSignalDetector
from rapport.evaluation.extraction import observed_signals
from rapport.settings import Settings

SIGNALS = ("emotion", "grudge", "sentiment")
EMOTIONS = ("frustration", "anxiety", "none")


def labelled(path: Path, half: str) -> Iterator[tuple[int, dict[str, str], str]]:
    """The half's lines of one file (`odd`: the 1st, 3rd, … line), each as its number, labels and message."""
    for number, line in numbered_lines(path, half):
        emotion, grudge, sentiment, message = line.split("\t", 3)
        yield number, {"emotion": emotion, "grudge": grudge, "sentiment": sentiment}, message


def main() -> None:
    args, layer = set_arguments(__doc__, "--rules-alone", "the emotion probe")
    detector, settings = RuleSignalDetector(semantics=layer), Settings()
    for half in ("odd", "even"):
        right: Counter[str] = Counter()
        confusion: Counter[tuple[str, str]] = Counter()
        total = 0
        for path in args.files:
            for number, labels, message in labelled(path, half):
                total += 1
                observed = observed_signals(detector, settings, [message])
                confusion[labels["emotion"], observed["emotion"]] += 1
                for name in SIGNALS:
                    if observed[name] == labels[name]:
                        right[name] += 1
                    elif args.misses == half:
                        print(f"{name} {labels[name]} -> {observed[name]}\t{path.name}:{number}\t{message}")
        print(f"\n{half} lines ({total}): " + ", ".join(f"{name} {right[name]}/{total}" for name in SIGNALS))
        print("| emotion expected \\ given | " + " | ".join(EMOTIONS) + " |")
        for expected in EMOTIONS:
            print(f"| {expected} | " + " | ".join(str(confusion[expected, given]) for given in EMOTIONS) + " |")


if __name__ == "__main__":
    main()
