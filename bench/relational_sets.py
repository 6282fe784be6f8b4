"""Relational memories drawn from short conversations labelled with the type a new user's words call for: a way of
helping that worked, a preference about answers, what came of our work, shared work picked up, a way of working.
Each line is `type|conversation` ("none|…": nothing relational is to be drawn), turns as in bench/lesson_traps.py; a
longer conversation may call for more than one (`shared_context+working_style|…`). Prints what each line missed (or
drew where nothing was due) and, per file, how many of each label were found.

    python -m bench.relational_sets bench/relational-sets/*.txt
    python -m bench.relational_sets --half odd bench/relational-sets/said-of-us.txt

`--precision` also prints, per file and type, how many of those drawn were due, and the lessons (a preference about
answers, a way of helping, a way of working) drawn where the line calls for none of that type: what a set of longer
conversations, most of whose sentences call for nothing, is written to measure.

`--user` reads the user's memories instead (fact, preference, event, goal), as bench/user-kinds/ labels them.

`--half odd` reads the first, third, fifth… line of a file and `--half even` the others: a set is split that way
before any rule is written from it, the odd lines to write from, the even ones to check on (docs/pipeline.md).
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from bench.lesson_traps import LESSONS, ROLES
from rapport.adapters.local.minilm import MiniLmEmbedder
from rapport.domain.prompts import extract_relational, extract_user, payload
from rapport.domain.prompts.conversation import ConversationInput, PromptMessage
from rapport.domain.rules.model import RulesLanguageModel
from rapport.domain.semantics.matcher import semantic_layer

NOTHING = "none"


def due_types(label: str) -> frozenset[str]:
    """The types a line's label calls for: none for "none", else each of those joined by "+"."""
    return frozenset() if label == NOTHING else frozenset(label.split("+"))


def numbered_lines(path: Path, half: str | None) -> Iterator[tuple[int, str]]:
    """The labelled lines of a set (not blank, not a `#` comment), each with its number, all of them or only the
    `odd` (the 1st, 3rd, …) or `even` ones: every set is split by line number before any rule is read from it."""
    lines = [
        line for line in path.read_text(encoding="utf-8").splitlines() if line.strip() and not line.startswith("#")
    ]
    for number, line in enumerate(lines, start=1):
        if half is None or (number % 2 == 1) == (half == "odd"):
            yield number, line


def labelled(path: Path, half: str | None) -> list[tuple[str, ConversationInput]]:
    """(the type due, the conversation) of each line of the file, or of its odd or even lines."""
    found = []
    for _, line in numbered_lines(path, half):
        due, conversation = line.split("|", 1)
        turns = [part.split(": ", 1) for part in conversation.split(" || ")]
        messages = [PromptMessage(index=i, role=ROLES[role], content=text) for i, (role, text) in enumerate(turns)]
        found.append((due, ConversationInput(messages=messages)))
    return found


def drawn(
    model: RulesLanguageModel, conversation: ConversationInput, *, of_user: bool = False
) -> list[tuple[str, str]]:
    if of_user:
        about = model.structured(
            system=extract_user.SYSTEM,
            user=payload.render(extract_user.TASK, conversation),
            response_model=extract_user.UserExtraction,
        )
        return [(m.type.value, m.content) for m in about.memories]
    answer = model.structured(
        system=extract_relational.SYSTEM,
        user=payload.render(extract_relational.TASK, conversation),
        response_model=extract_relational.RelationalExtraction,
    )
    return [(m.type.value, m.content) for m in answer.memories]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--half", choices=("odd", "even"), default=None)
    parser.add_argument("--user", action="store_true", help="the user's memories, not the relational ones")
    parser.add_argument("--precision", action="store_true", help="per type, how many of those drawn were due")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model = RulesLanguageModel(semantics=semantic_layer(MiniLmEmbedder()))
    for path in args.files:
        due_count: Counter[str] = Counter()
        found_count: Counter[str] = Counter()
        drew: Counter[str] = Counter()
        drew_due: Counter[str] = Counter()
        invented = 0
        for due, conversation in labelled(path, args.half):
            memories = drawn(model, conversation, of_user=args.user)
            kinds = {kind for kind, _ in memories}
            types = due_types(due)
            due_count[due] += 1
            right = not memories if not types else kinds == types if args.user else types <= kinds
            found_count[due] += right
            drew.update(kinds)
            drew_due.update(kinds & types)
            invented += len((kinds - types) & LESSONS)
            if not right:
                print(f"{path.name}: {due}: {conversation.messages[0].content[:100]}")
                for kind, content in memories:
                    print(f"    {kind}: {content}")
        for due in sorted(due_count):
            what = "drew nothing" if due == NOTHING else "found"
            print(f"{path.name}: {due}: {found_count[due]} of {due_count[due]} {what}")
        if args.precision:
            for kind in sorted(drew):
                print(f"{path.name}: precision {kind}: {drew_due[kind]} of {drew[kind]} drawn were due")
            if not args.user:
                print(f"{path.name}: lessons drawn where none of the type was due: {invented}")


if __name__ == "__main__":
    main()
