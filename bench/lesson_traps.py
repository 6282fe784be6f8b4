"""Lessons drawn from trap messages: wordings where a careless reader draws a lesson about how to answer the user (a
request for this once, the user's past, a taste in books, a joke), none labelled as one. Prints each conversation
the rule-based model with its semantic layer (MiniLM) draws a communication preference, approach or working style
from, and the count; docs/pipeline.md reads the two files' counts.

    python -m bench.lesson_traps bench/lesson-traps/written-first.txt bench/lesson-traps/written-after.txt
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rapport.adapters.local.minilm import MiniLmEmbedder
from rapport.domain.models import MessageRole
from rapport.domain.prompts import extract_relational, payload
from rapport.domain.prompts.conversation import ConversationInput, PromptMessage
from rapport.domain.rules.model import RulesLanguageModel
from rapport.domain.semantics.matcher import semantic_layer

LESSONS = frozenset({"communication_preference", "approach_effectiveness", "working_style"})
ROLES = {"U": MessageRole.USER, "A": MessageRole.ASSISTANT}


def conversations(path: Path) -> list[ConversationInput]:
    """One conversation a line, turns split by " || ", each "U: …" or "A: …"; "#" lines are comments."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        turns = [part.split(": ", 1) for part in line.split(" || ")]
        messages = [PromptMessage(index=i, role=ROLES[role], content=text) for i, (role, text) in enumerate(turns)]
        found.append(ConversationInput(messages=messages))
    return found


def lessons(model: RulesLanguageModel, conversation: ConversationInput) -> list[tuple[str, str]]:
    answer = model.structured(
        system=extract_relational.SYSTEM,
        user=payload.render(extract_relational.TASK, conversation),
        response_model=extract_relational.RelationalExtraction,
    )
    return [(m.type.value, m.content) for m in answer.memories if m.type.value in LESSONS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model = RulesLanguageModel(semantics=semantic_layer(MiniLmEmbedder()))
    for path in args.files:
        traps = conversations(path)
        drawn = 0
        for conversation in traps:
            found = lessons(model, conversation)
            if found:
                drawn += 1
                print(f"{path.name}: {conversation.messages[0].content[:100]}")
                for kind, content in found:
                    print(f"    {kind}: {content}")
        print(f"{path.name}: {drawn} of {len(traps)} made a lesson")


if __name__ == "__main__":
    main()
