"""Recall reads a message in its conversation (issue 6): the reply to a matching question comes back with it."""

from __future__ import annotations

import pytest

from rapport.services.interactions import NewInteraction
from rapport.services.memories import RecallQuery
from rapport.settings import RecallContextWeights
from rapport.wiring import Services, build_services

pytestmark = pytest.mark.integration

T, U = "tenant-a", "user-1"


def chat(services: Services) -> None:
    # Given: a question and its answer, which shares no word with a later query about pets, among other talk
    services.interactions.record(
        T,
        U,
        NewInteraction.model_validate(
            {
                "messages": [
                    {"role": "user", "content": "Caroline, what pets do you have at home?", "name": "Melanie"},
                    {"role": "user", "content": "Two cats, Luna and Oliver, and a guinea pig.", "name": "Caroline"},
                    {"role": "user", "content": "I painted a lake sunrise last year.", "name": "Melanie"},
                    {"role": "user", "content": "Pets are such good company for kids.", "name": "Melanie"},
                ],
                "session_id": "s-1",
            }
        ),
    )


def answer_rank(services: Services) -> int:
    hits = services.memories.recall(T, U, RecallQuery(query="Which pets does Caroline have?", limit=4))
    return [h.memory.content for h in hits].index("Two cats, Luna and Oliver, and a guinea pig.")


def test_the_answer_to_a_matching_question_ranks_with_it(services: Services) -> None:
    chat(services)
    hits = services.memories.recall(T, U, RecallQuery(query="Which pets does Caroline have?", limit=4))
    assert answer_rank(services) <= 1
    answer = next(h for h in hits if h.memory.content.startswith("Two cats"))
    assert "answers a matching question" in answer.match_reasons
    assert "said by the person asked about" in answer.match_reasons


def test_without_the_conversation_rules_the_answer_falls_behind(services: Services) -> None:
    off = services.settings.model_copy(
        update={"recall_context": RecallContextWeights(answer=0, conversation=0, speaker=0)}
    )
    plain = build_services(
        off, clock=services.clock, store=services.store, index=services.index, embedder=services.embedder
    )
    chat(plain)
    assert answer_rank(plain) > 1
