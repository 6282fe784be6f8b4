"""The constructive filter on candidate memories written apart from its rules (`bench/filter-sets/`): one candidate a
line, `verdict<TAB>domain<TAB>type<TAB>content`, the verdict the one a careful reader expects (allowed, blocked,
reframed, quarantined). Lines are split by their number before any rule is read from them: rules come from the odd
lines, the even ones check them. Prints each half's confusion matrix, and with `--misses HALF` that half's misses.

    python -m bench.filter_sets bench/filter-sets/*.txt [--misses odd]
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from bench.relational_sets import numbered_lines
from rapport.domain.filtering import Verdict
from rapport.domain.models import Domain
from rapport.domain.rules.model import RulesLanguageModel
from rapport.domain.semantics.matcher import SemanticLayer
from rapport.pipeline.constructive_filter import ConstructiveFilter
from rapport.ports.pipeline import Candidate, ExtractionResult, PipelineState

VERDICTS = [v.value for v in Verdict]


def labelled(path: Path, half: str) -> Iterator[tuple[int, str, Candidate]]:
    """The half's lines of one file (`odd`: the 1st, 3rd, … line), each as its number, verdict and candidate."""
    for number, line in numbered_lines(path, half):
        verdict, domain, kind, content = line.split("\t", 3)
        yield (
            number,
            verdict,
            Candidate(domain=Domain(domain), type=kind, content=content, importance=0.5, confidence=0.6),
        )


def judged(screen: ConstructiveFilter, candidate: Candidate) -> tuple[str, str | None, str]:
    """The filter's verdict of one candidate alone, what it would store and why."""
    results = [ExtractionResult(domain=candidate.domain, extractor="bench", candidates=[candidate])]
    state = PipelineState(tenant_id="bench", user_id="bench", interaction_id="bench", extracted=results)
    decision = screen(state).judged[0]
    return decision.verdict.value, decision.content, decision.reason


def set_arguments(doc: str | None, alone: str, without: str) -> tuple[argparse.Namespace, SemanticLayer | None]:
    """A set's command line (its files, `--misses HALF`, and `alone`: the flag that runs without MiniLM, `without`
    saying what is left out), and the semantic layer over MiniLM unless that flag is given."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--misses", choices=("odd", "even"), help="list this half's misses")
    parser.add_argument(alone, action="store_true", help=f"without {without} (MiniLM)")
    args = parser.parse_args()
    if getattr(args, alone.lstrip("-").replace("-", "_")):
        return args, None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from rapport.adapters.local.minilm import MiniLmEmbedder
    from rapport.domain.semantics.matcher import semantic_layer

    return args, semantic_layer(MiniLmEmbedder())


def main() -> None:
    args, layer = set_arguments(__doc__, "--patterns-alone", "the semantic layer")
    screen = ConstructiveFilter(RulesLanguageModel(semantics=layer), None)
    for half in ("odd", "even"):
        confusion: Counter[tuple[str, str]] = Counter()
        for path in args.files:
            for number, expected, candidate in labelled(path, half):
                given, stored, reason = judged(screen, candidate)
                confusion[expected, given] += 1
                if given != expected and args.misses == half:
                    print(f"{expected} -> {given}\t{path.name}:{number}\t{candidate.content}")
                    print(f"    stored: {stored!r}; {reason[:160]}")
        right = sum(n for (expected, given), n in confusion.items() if expected == given)
        print(f"\n{half} lines: {right} of {sum(confusion.values())} right (rows expected, columns given)")
        print("| expected \\ given | " + " | ".join(VERDICTS) + " |")
        for expected in VERDICTS:
            print(f"| {expected} | " + " | ".join(str(confusion[expected, given]) for given in VERDICTS) + " |")


if __name__ == "__main__":
    main()
